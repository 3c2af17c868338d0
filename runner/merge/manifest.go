package merge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/workspace/door"
)

// ManifestFile lists, in an output directory, every result file runner wrote there and its
// SHA-256, one JSON object per line ({"path": "name/result.json", "sha256": "..."}),
// appended as each scenario finishes; for a path listed twice (a rerun into the same
// directory) the last line counts. Merge and resume read only the files it lists: a
// result.json anywhere else (in a kept workspace, where the agent could have written one
// with status passed) is never read, and a listed file that changed since is an error.
const ManifestFile = "results.manifest.jsonl"

// maxResult bounds a result file read back (they are kilobytes; a transcript is not one),
// maxManifest a manifest (a line of about 120 bytes per result).
const (
	maxResult   = 64 << 20
	maxManifest = 256 << 20
)

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
	f, err := os.OpenFile(filepath.Join(outDir, ManifestFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644) //nolint:forbidigo // runner's own output: appended, never read here
	if err != nil {
		return err
	}
	_, werr := f.Write(append(line, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// loadManifest reads the results dir's manifest lists, each checked against its SHA-256.
// ok is false when dir holds no manifest.
func loadManifest(dir string) (out []result.Scenario, ok bool, err error) {
	mf := filepath.Join(dir, ManifestFile)
	root, err := door.Open(dir)
	if err != nil {
		return nil, true, err
	}
	defer func() { _ = root.Close() }() // a directory handle: Close loses no data
	data, err := root.ReadFile(ManifestFile, maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", dir, err)
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
			return nil, true, fmt.Errorf("%s:%d: not a manifest line", mf, n)
		}
		if !filepath.IsLocal(filepath.FromSlash(e.Path)) {
			return nil, true, fmt.Errorf("%s:%d: path %q leaves %s", mf, n, e.Path, dir)
		}
		if _, seen := latest[e.Path]; !seen {
			order = append(order, e.Path)
		}
		latest[e.Path] = e.SHA256
	}
	if err := sc.Err(); err != nil {
		return nil, true, fmt.Errorf("%s: %w", mf, err)
	}
	for _, p := range order {
		b, err := root.ReadFile(p, maxResult)
		if err != nil {
			return nil, true, fmt.Errorf("%s lists %s: %w", mf, p, err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != latest[p] {
			return nil, true, fmt.Errorf("%s: %s was changed after runner wrote it (its SHA-256 is not the one %s lists)", dir, p, ManifestFile)
		}
		s, err := decodeResult(filepath.Join(dir, filepath.FromSlash(p)), b)
		if err != nil {
			return nil, true, err
		}
		out = append(out, s)
	}
	return out, true, nil
}

// findManifests returns the directories under dir that hold a manifest, dir itself
// included, without descending into one that does: what lies below an output directory
// (a kept workspace) is never searched. The walk goes through the door (a handle per
// directory): a tree too deep or unreadable below dir (an agent's, downloaded with the
// artifacts) is passed over, never an error of the merge.
func findManifests(dir string) ([]string, error) {
	top, err := door.Open(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = top.Close() }() // a directory handle: Close loses no data
	if _, err := top.Lstat(ManifestFile); err == nil {
		return []string{dir}, nil
	}
	var dirs []string
	err = top.Walk(context.Background(), door.Limits{MaxEntries: -1}, func(e door.Entry) error {
		if e.Err != nil || !e.Info.IsDir() {
			return nil
		}
		if _, err := top.Lstat(e.Path + "/" + ManifestFile); err == nil {
			dirs = append(dirs, filepath.Join(dir, filepath.FromSlash(e.Path)))
			return fs.SkipDir
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs, err
}
