package merge

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/agentrunner/runner/runner/result"
)

// ManifestFile lists, in an output directory, every result file runner wrote there and its
// SHA-256, one JSON object per line ({"path": "name/result.json", "sha256": "..."}),
// appended as each scenario finishes; for a path listed twice (a rerun into the same
// directory) the last line counts. Merge and resume read only the files it lists: a
// result.json anywhere else (in a kept workspace, where the agent could have written one
// with status passed) is never read, and a listed file that changed since is an error.
const ManifestFile = "results.manifest.jsonl"

// maxResult bounds a result file read back (they are kilobytes; a transcript is not one).
const maxResult = 64 << 20

type manifestEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// manifestMu serialises appends from the scenarios of one process; O_APPEND keeps lines
// from several processes whole.
var manifestMu sync.Mutex

// WriteResult writes data as the result file rel (slash-separated, inside outDir) and
// lists it in outDir's manifest.
func WriteResult(outDir, rel string, data []byte) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("result file %q is not inside %s", rel, outDir)
	}
	if err := os.WriteFile(filepath.Join(outDir, filepath.FromSlash(rel)), data, 0o644); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	line, err := json.Marshal(manifestEntry{Path: filepath.ToSlash(rel), SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return err
	}
	manifestMu.Lock()
	defer manifestMu.Unlock()
	f, err := os.OpenFile(filepath.Join(outDir, ManifestFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(line, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// Begin marks dir as a run's output directory before any result is in it: an empty
// manifest (a killed run's directory is then still known for runner's; see
// IsOutput). A manifest already there is left as it is.
func Begin(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, ManifestFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// IsOutput reports whether dir holds what runner writes: a manifest at its top (run) or
// in a folder of its own (bench's per-model folders), or bench.json.
func IsOutput(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, ManifestFile)); err == nil {
		return true
	}
	if _, err := os.Lstat(filepath.Join(dir, "bench.json")); err == nil {
		return true
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Lstat(filepath.Join(dir, e.Name(), ManifestFile)); err == nil {
				return true
			}
		}
	}
	return false
}

// loadManifest reads the results dir's manifest lists, each checked against its SHA-256,
// and their paths (slash-separated, relative to dir) in the same order. ok is false when
// dir holds no manifest.
func loadManifest(dir string) (out []result.Scenario, paths []string, ok bool, err error) {
	mf := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(mf)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, true, err
	}
	latest := map[string]string{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e manifestEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Path == "" || len(e.SHA256) != 64 {
			return nil, nil, true, fmt.Errorf("%s:%d: not a manifest line", mf, n)
		}
		if !filepath.IsLocal(filepath.FromSlash(e.Path)) {
			return nil, nil, true, fmt.Errorf("%s:%d: path %q leaves %s", mf, n, e.Path, dir)
		}
		if _, seen := latest[e.Path]; !seen {
			order = append(order, e.Path)
		}
		latest[e.Path] = e.SHA256
	}
	if err := sc.Err(); err != nil {
		return nil, nil, true, fmt.Errorf("%s: %w", mf, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, true, err
	}
	defer func() { _ = root.Close() }() // a directory handle: Close loses no data
	for _, p := range order {
		b, err := readRooted(root, p)
		if err != nil {
			return nil, nil, true, fmt.Errorf("%s lists %s: %w", mf, p, err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != latest[p] {
			return nil, nil, true, fmt.Errorf("%s: %s was changed after runner wrote it (its SHA-256 is not the one %s lists)", dir, p, ManifestFile)
		}
		s, err := decodeResult(filepath.Join(dir, filepath.FromSlash(p)), b)
		if err != nil {
			return nil, nil, true, err
		}
		out, paths = append(out, s), append(paths, p)
	}
	return out, paths, true, nil
}

// readRooted reads a file through root, so a link cannot lead out of the output directory.
func readRooted(root *os.Root, p string) ([]byte, error) {
	f, err := root.Open(filepath.FromSlash(p))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	b, err := io.ReadAll(io.LimitReader(f, maxResult+1))
	if err == nil && len(b) > maxResult {
		err = fmt.Errorf("larger than %d MiB", maxResult>>20)
	}
	return b, err
}

// findManifests returns the directories under dir that hold a manifest, dir itself
// included, without descending into one that does: what lies below an output directory
// (a kept workspace) is never searched.
func findManifests(dir string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if _, err := os.Lstat(filepath.Join(p, ManifestFile)); err == nil {
			dirs = append(dirs, p)
			return fs.SkipDir
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs, err
}
