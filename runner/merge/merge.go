// Package merge rebuilds one run from result files: the result.json files of output
// directories (shards on several machines, a resumed run) or JSON reports. Results are
// self-describing (file, name, repeat, index), so the merged run has the order, counts and
// exit code one unsharded run would have had.
package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/runner/workspace/door"
)

// Key identifies one scenario run across machines: task file, name and repeat index.
type Key struct {
	File   string
	Name   string
	Repeat int
}

// KeyOf is s's identity.
func KeyOf(s result.Scenario) Key {
	return Key{File: filepath.ToSlash(s.File), Name: s.Name, Repeat: s.Repeat}
}

// ResultFile is the name of each scenario's record in an output directory.
const ResultFile = "result.json"

// Options say where Load's notes go.
type Options struct {
	// Notes receives one line for every manifest, or part of one, that was not read, or
	// read without a check, and why (nil: discarded).
	Notes io.Writer
}

func (o Options) note(format string, a ...any) {
	if o.Notes != nil {
		_, _ = fmt.Fprintf(o.Notes, "runner: "+format+"\n", a...)
	}
}

// Load reads every scenario under paths: a directory is searched for output directories
// (those holding a ManifestFile, so a folder of downloaded shard artifacts works), and
// from each only the result files its manifest lists are read; a file is a JSON report
// (runner run --json) or one result.json. A path with no results is an error, as is a
// file that is neither, or a listed result file that changed since runner wrote it.
// What a search finds and does not read (a manifest inside a kept workspace, below another
// output directory or unsigned with RUNNER_MANIFEST_KEY set) is named in opts.Notes.
func Load(paths []string, opts Options) ([]result.Scenario, error) {
	var all []result.Scenario
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		var got []result.Scenario
		if info.IsDir() {
			got, err = loadDir(p, opts)
		} else {
			got, err = loadFile(p)
		}
		if err != nil {
			return nil, err
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("merge: %s: no %s listing result files, and no scenarios in it (only what runner listed there is read)", p, ManifestFile)
		}
		all = append(all, got...)
	}
	return all, nil
}

// LoadDir reads the result files that the manifests under dir list (see Load); a missing
// dir, or one without a manifest, holds no results.
func LoadDir(dir string, opts Options) ([]result.Scenario, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return loadDir(dir, opts)
}

// candidate is an output directory whose manifest a search found.
type candidate struct {
	found
	scenarios []result.Scenario
	// paths are the scenarios' result files, relative to dir.
	paths []string
	// err is why it could not be read: returned only if it is not left out as lying in a
	// kept workspace, so a broken manifest the agent planted there cannot error a merge.
	err error
	// state is undecided, read or left out (see excludeClaimed); by names the claim.
	state int
	by    string
}

const (
	undecided = iota
	read
	leftOut
)

// loadDir reads the output directories under dir. It never reads a manifest that lies in
// a kept workspace (a directory holding workspace.KeptMarker) or below another output
// directory, nor one in a directory that a result of another output directory names as
// its kept workspace (by its name, as a download renames the folders above it, or by its
// path on this machine); and with RUNNER_MANIFEST_KEY set, only the lines signed with it.
func loadDir(dir string, opts Options) ([]result.Scenario, error) {
	cands, err := readCandidates(dir, opts)
	if err != nil {
		return nil, err
	}
	var out []result.Scenario
	for _, c := range cands {
		out = append(out, c.scenarios...)
	}
	return out, nil
}

// Listed is a result file a manifest lists: its scenario and its directory, relative to
// the directory searched (slash-separated).
type Listed struct {
	Scenario result.Scenario
	Dir      string
}

// ListDir reads the result files under dir as LoadDir does, each with the directory it
// lies in: what `runner view` shows, so that a result.json no manifest lists (one the
// agent wrote into a kept workspace, one of another run) never appears on a page.
func ListDir(dir string, opts Options) ([]Listed, error) {
	cands, err := readCandidates(dir, opts)
	if err != nil {
		return nil, err
	}
	var out []Listed
	for _, c := range cands {
		rel, err := filepath.Rel(dir, c.dir)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		for i, s := range c.scenarios {
			out = append(out, Listed{Scenario: s, Dir: path.Clean(path.Join(filepath.ToSlash(rel), path.Dir(c.paths[i])))})
		}
	}
	return out, nil
}

// readCandidates returns the output directories under dir that loadDir reads, read.
func readCandidates(dir string, opts Options) ([]*candidate, error) {
	dirs, err := findManifests(dir)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	key := envKey()
	var cands []*candidate
	for _, f := range dirs {
		switch {
		case f.workspace != "":
			opts.note("%s: not read: it lies in the kept workspace %s (it holds %s), where the agent could write", filepath.Join(f.dir, ManifestFile), f.workspace, workspace.KeptMarker)
			continue
		case f.output != "":
			opts.note("%s: not read: it lies below the output directory %s", filepath.Join(f.dir, ManifestFile), f.output)
			continue
		}
		c := &candidate{found: f}
		var note string
		c.scenarios, c.paths, note, c.err = loadManifest(f.dir, key)
		if note != "" {
			opts.note("%s: %s", filepath.Join(f.dir, ManifestFile), note)
		}
		cands = append(cands, c)
	}
	if err := excludeClaimed(dir, cands); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	var out []*candidate
	for _, c := range cands {
		if c.state == leftOut {
			opts.note("%s: not read: it lies in %s", filepath.Join(c.dir, ManifestFile), c.by)
			continue
		}
		if c.err != nil {
			return nil, fmt.Errorf("merge: %w", c.err)
		}
		out = append(out, c)
	}
	return out, nil
}

// excludeClaimed leaves out every candidate that lies in a directory another candidate's
// results name as a kept workspace. Only the claims of candidates that are read count: a
// candidate is read once every candidate claiming it is left out, and left out once one
// that is read claims it. Candidates that claim each other (a forged manifest naming the
// real output directory as its workspace, in a download that lost the marker) cannot be
// told apart without a key: an error that says so.
func excludeClaimed(root string, cands []*candidate) error {
	claims := map[*candidate][]*candidate{} // claimed -> claimers
	for _, c := range cands {
		for _, s := range c.scenarios {
			if s.Workspace == "" {
				continue
			}
			for _, o := range cands {
				if o != c && inWorkspace(root, o.dir, s.Workspace) {
					claims[o] = append(claims[o], c)
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, c := range cands {
			if c.state != undecided {
				continue
			}
			free := true
			for _, by := range claims[c] {
				switch by.state {
				case read:
					c.state, c.by, changed = leftOut, "a workspace that "+filepath.Join(by.dir, ManifestFile)+" lists as kept", true
				case undecided:
					free = false
				}
				if c.state == leftOut {
					break
				}
			}
			if c.state == undecided && free {
				c.state, changed = read, true
			}
		}
	}
	var tied []string
	for _, c := range cands {
		if c.state == undecided {
			tied = append(tied, filepath.Join(c.dir, ManifestFile))
		}
	}
	if len(tied) > 0 {
		return fmt.Errorf("%s each lie in a directory the other's results name as a kept workspace; which runner wrote cannot be told without a key: set %s where the shards run and where they merge", strings.Join(tied, " and "), KeyEnv)
	}
	return nil
}

// inWorkspace reports whether dir lies in the kept workspace ws (a path on the machine
// that ran it): dir is ws or below it, or a directory between root and dir bears ws's
// name (a downloaded copy).
func inWorkspace(root, dir, ws string) bool {
	if abs, err := filepath.Abs(dir); err == nil {
		if rel, err := filepath.Rel(ws, abs); err == nil && filepath.IsLocal(rel) {
			return true
		}
	}
	name := filepath.Base(filepath.Clean(ws))
	if name == "." || name == string(filepath.Separator) {
		return false
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return false
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == name {
			return true
		}
	}
	return false
}

func readResult(path string) (result.Scenario, error) {
	b, err := readNamed(path, bounded.Record.Bytes)
	if err != nil {
		return result.Scenario{}, err
	}
	return decodeResult(path, b)
}

// readNamed reads the regular file path (named on the command line, perhaps among
// downloaded artifacts) through the door: a FIFO there is refused, not waited on.
func readNamed(path string, limit int64) ([]byte, error) {
	d, err := door.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }() // a directory handle: Close loses no data
	b, err := d.ReadFile(filepath.Base(path), limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

func decodeResult(path string, b []byte) (result.Scenario, error) {
	if err := bounded.JSON(path, b, bounded.Record); err != nil {
		return result.Scenario{}, fmt.Errorf("not a result file: %w", err)
	}
	var s result.Scenario
	if err := json.Unmarshal(b, &s); err != nil {
		return result.Scenario{}, fmt.Errorf("%s: not a result file: %w", path, err)
	}
	if s.Name == "" || s.Status == "" {
		return result.Scenario{}, fmt.Errorf("%s: not a result file: no name or status", path)
	}
	return s, nil
}

// loadFile reads a JSON report, or a single result.json.
func loadFile(path string) ([]result.Scenario, error) {
	b, err := readNamed(path, bounded.Record.Bytes)
	if err == nil {
		err = bounded.JSON(path, b, bounded.Record)
	}
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("merge: %s: not a JSON report or result file: %w", path, err)
	}
	if raw, ok := probe["scenarios"]; ok {
		var ss []result.Scenario
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&ss); err != nil {
			return nil, fmt.Errorf("merge: %s: scenarios: %w", path, err)
		}
		return ss, nil
	}
	s, err := readResult(path)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return []result.Scenario{s}, nil
}

// Combine makes one run of scenarios: one result per Key (the most recently started,
// so a rerun replaces what it reran), ordered by their index in the whole run. Started is
// the earliest start; Duration spans to the latest end.
func Combine(scenarios []result.Scenario) result.Run {
	latest := map[Key]result.Scenario{}
	for _, s := range scenarios {
		k := KeyOf(s)
		if prev, ok := latest[k]; !ok || s.Started.After(prev.Started) {
			latest[k] = s
		}
	}
	run := result.Run{Scenarios: make([]result.Scenario, 0, len(latest))}
	for _, s := range latest {
		run.Scenarios = append(run.Scenarios, s)
	}
	sort.Slice(run.Scenarios, func(i, j int) bool {
		a, b := run.Scenarios[i], run.Scenarios[j]
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		ka, kb := KeyOf(a), KeyOf(b)
		if ka.Repeat != kb.Repeat {
			return ka.Repeat < kb.Repeat
		}
		if ka.File != kb.File {
			return ka.File < kb.File
		}
		return ka.Name < kb.Name
	})
	var end time.Time
	for _, s := range run.Scenarios {
		if s.Started.IsZero() {
			continue
		}
		if run.Started.IsZero() || s.Started.Before(run.Started) {
			run.Started = s.Started
		}
		if e := s.Started.Add(s.Duration.Duration()); e.After(end) {
			end = e
		}
	}
	if !end.IsZero() {
		run.Duration = result.Millis(end.Sub(run.Started))
	}
	return run
}

// Done says whether a prior result counts as finished for --resume (any verdict but an
// interruption) or, with failedToo, for --rerun-failed (passed only).
func Done(s result.Scenario, failedToo bool) bool {
	if failedToo {
		return s.Status == result.Passed
	}
	return s.Stop != result.StopInterrupt && s.Status != ""
}

// Index maps each scenario's Key to it, keeping the latest as Combine does.
func Index(scenarios []result.Scenario) map[Key]result.Scenario {
	out := map[Key]result.Scenario{}
	for _, s := range Combine(scenarios).Scenarios {
		out[KeyOf(s)] = s
	}
	return out
}
