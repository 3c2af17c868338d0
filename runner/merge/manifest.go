package merge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/runner/workspace/door"
)

// ManifestFile lists, in an output directory, every result file runner wrote there and its
// SHA-256, one JSON object per line ({"path": "name/result.json", "sha256": "...",
// "key": "...", "mac": "..."}), appended as each scenario finishes; for a path listed
// twice (a rerun into the same directory) the last line counts. Merge and resume read only
// the files it lists: a result.json anywhere else (in a kept workspace, where the agent
// could have written one with status passed) is never read, and a listed file that
// changed since is an error. With RUNNER_MANIFEST_KEY set (KeyEnv) each line carries an
// HMAC-SHA256 of its path and sum under that key, and a reader holding the key reads only
// the lines it signed.
const ManifestFile = "results.manifest.jsonl"

// maxResult bounds a result file read back (they are kilobytes; a transcript is not one).
const maxResult = 64 << 20

// maxManifest bounds a manifest read back: a line is about 200 bytes, so this is a
// quarter of a million results.
const maxManifest = 64 << 20

type manifestEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Key names the key the line is signed with and MAC is the signature ("": unsigned).
	Key string `json:"key,omitempty"`
	MAC string `json:"mac,omitempty"`
}

// manifestMu serialises appends from the scenarios of one process; O_APPEND keeps lines
// from several processes whole.
var manifestMu sync.Mutex

// WriteResult writes data as the result file rel (slash-separated, inside outDir) and
// lists it in outDir's manifest, signed with RUNNER_MANIFEST_KEY when it is set: as
// WriteResultWith, flushed to the disk.
func WriteResult(outDir, rel string, data []byte) error {
	return WriteResultWith(outDir, rel, data, WriteOptions{})
}

// WriteOptions adjust WriteResultWith.
type WriteOptions struct {
	// NoSync skips flushing the file to the disk before it replaces the earlier one
	// (benchmarks only, as transcript.Options.NoSync: it gives up safety against a
	// machine's crash).
	NoSync bool
}

// WriteResultWith writes the result file rel through scrub.Output: scrubbed as JSON and
// atomically (a temporary file renamed over rel once whole), so merge, resume and the
// viewer find the earlier file or the whole new one, never half of one, whatever stops
// the writer. Only then is it listed in the manifest, with the SHA-256 of what was
// written.
func WriteResultWith(outDir, rel string, data []byte, o WriteOptions) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("result file %q is not inside %s", rel, outDir)
	}
	data = scrub.JSON(data)
	out := scrub.Output{Sync: !o.NoSync}
	if err := out.Replace(filepath.Join(outDir, filepath.FromSlash(rel)), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	e := manifestEntry{Path: filepath.ToSlash(rel), SHA256: hex.EncodeToString(sum[:])}
	if k := envKey(); k != nil {
		e.Key, e.MAC = k.id, k.sign(e.Path, e.SHA256)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// The line is not flushed on its own: lost in a machine's crash, it leaves the result
	// unlisted, so merge and resume take the scenario for unfinished, never half of it.
	return appendManifest(outDir, append(line, '\n'))
}

// appendManifest appends one line to outDir's manifest.
func appendManifest(outDir string, line []byte) error {
	manifestMu.Lock()
	defer manifestMu.Unlock()
	f, err := os.OpenFile(filepath.Join(outDir, ManifestFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644) //nolint:forbidigo // runner's own output: appended, never read here
	if err != nil {
		return err
	}
	_, werr := f.Write(line)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// lineCounts tallies a manifest's lines by what their signature says.
type lineCounts struct{ signed, forged, foreign, unsigned int }

// note says, for a manifest's lines that were not read or not checked, what they were; ""
// when every line was read and checked.
func (c lineCounts) note(key *manifestKey) string {
	var parts []string
	add := func(n int, what string) {
		switch {
		case n == 1:
			parts = append(parts, "1 line "+what)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d lines %s", n, what))
		}
	}
	if key == nil {
		add(c.signed, "signed, not checked (this process has no "+KeyEnv+"): read for where they lie alone")
		return strings.Join(parts, "; ")
	}
	add(c.forged, "whose signature does not verify with "+KeyEnv+" (forged or altered): not read")
	add(c.foreign, "signed with another key: not read")
	add(c.unsigned, "not signed ("+KeyEnv+" was not set where they were written): not read")
	return strings.Join(parts, "; ")
}

// Begin marks dir as a run's output directory before any result is in it: an empty
// manifest (a killed run's directory is then still known for runner's; see IsOutput).
// A manifest already there is left as it is.
func Begin(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, ManifestFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644) //nolint:forbidigo // runner's own output: created, never read here
	if err != nil {
		return err
	}
	return f.Close()
}

// IsOutput reports whether dir holds what runner writes: a manifest at its top (run) or
// in a folder of its own (bench's per-model folders), or bench.json. It looks through the
// door, two levels deep at most: a kept workspace below can neither block nor fool it.
func IsOutput(dir string) bool {
	d, err := door.Open(dir)
	if err != nil {
		return false
	}
	defer func() { _ = d.Close() }() // a directory handle: Close loses no data
	found := false
	_ = d.Walk(context.Background(), door.Limits{MaxEntries: 100_000, MaxDepth: 2}, func(e door.Entry) error {
		switch {
		case e.Err != nil || e.Info.IsDir():
			return nil
		case e.Name() == ManifestFile || e.Depth == 1 && e.Name() == "bench.json":
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// loadManifest reads the results dir's manifest lists, each checked against its SHA-256,
// and their paths (slash-separated, relative to dir) in the same order. With key, only
// the lines key signed are read; note says what was left out (see lineCounts.note).
func loadManifest(dir string, key *manifestKey) (out []result.Scenario, paths []string, note string, err error) {
	mf := filepath.Join(dir, ManifestFile)
	root, err := door.Open(dir)
	if err != nil {
		return nil, nil, "", err
	}
	defer func() { _ = root.Close() }() // a directory handle: Close loses no data
	data, err := root.ReadFile(ManifestFile, maxManifest)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", dir, err)
	}
	latest := map[string]string{}
	var order []string
	var counts lineCounts
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e manifestEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Path == "" || len(e.SHA256) != 64 {
			return nil, nil, "", fmt.Errorf("%s:%d: not a manifest line", mf, n)
		}
		if !filepath.IsLocal(filepath.FromSlash(e.Path)) {
			return nil, nil, "", fmt.Errorf("%s:%d: path %q leaves %s", mf, n, e.Path, dir)
		}
		switch {
		case key == nil:
			if e.MAC != "" {
				counts.signed++
			}
		case e.Key == key.id && key.verifies(e.Path, e.SHA256, e.MAC):
		case e.Key == key.id:
			counts.forged++
			continue
		case e.MAC != "":
			counts.foreign++
			continue
		default:
			counts.unsigned++
			continue
		}
		if _, seen := latest[e.Path]; !seen {
			order = append(order, e.Path)
		}
		latest[e.Path] = e.SHA256
	}
	if err := sc.Err(); err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", mf, err)
	}
	for _, p := range order {
		b, err := root.ReadFile(p, maxResult)
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s lists %s: %w", mf, p, err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != latest[p] {
			return nil, nil, "", fmt.Errorf("%s: %s was changed after runner wrote it (its SHA-256 is not the one %s lists)", dir, p, ManifestFile)
		}
		s, err := decodeResult(filepath.Join(dir, filepath.FromSlash(p)), b)
		if err != nil {
			return nil, nil, "", err
		}
		out, paths = append(out, s), append(paths, p)
	}
	return out, paths, counts.note(key), nil
}

// found is a directory holding a manifest, and what it lies in.
type found struct {
	dir string
	// workspace is the kept workspace (a directory holding workspace.KeptMarker) at or
	// above dir, and output the output directory (holding a manifest) above it ("": none).
	workspace, output string
}

// findManifests returns the directories under dir that hold a manifest, dir itself
// included, each with the kept workspace or output directory it lies in. The walk goes
// through the door (a handle per directory, no link followed): a tree too deep or
// unreadable below dir (an agent's, downloaded with the artifacts) is passed over, never
// an error of the merge.
func findManifests(dir string) ([]found, error) {
	top, err := door.Open(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = top.Close() }() // a directory handle: Close loses no data
	// within maps each directory seen ("" is dir) to the kept workspace and output
	// directory it is in.
	type within struct{ workspace, output string }
	in := map[string]within{}
	var dirs []found
	visit := func(rel string) {
		w := within{}
		if rel != "" {
			w = in[parentOf(rel)]
		}
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		if w.workspace == "" && has(top, rel, workspace.KeptMarker) {
			w.workspace = abs
		}
		if has(top, rel, ManifestFile) {
			dirs = append(dirs, found{dir: abs, workspace: w.workspace, output: w.output})
			if w.output == "" {
				w.output = abs
			}
		}
		in[rel] = w
	}
	visit("")
	err = top.Walk(context.Background(), door.Limits{MaxEntries: -1}, func(e door.Entry) error {
		if e.Err == nil && e.Info.IsDir() {
			visit(e.Path)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].dir < dirs[j].dir })
	return dirs, err
}

// has reports whether the directory rel (slash-separated, "" for the top) below top holds
// an entry name.
func has(top *door.Dir, rel, name string) bool {
	_, err := top.Lstat(path.Join(rel, name))
	return err == nil
}

// parentOf is rel's parent directory, "" for the top.
func parentOf(rel string) string {
	if p := path.Dir(rel); p != "." {
		return p
	}
	return ""
}
