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
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"

	"github.com/agentrunner/runner/runner/result"
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

// Load reads every scenario under paths: a directory is searched for output directories
// (those holding a ManifestFile, so a folder of downloaded shard artifacts works), and
// from each only the result files its manifest lists are read; a file is a JSON report
// (runner run --json) or one result.json. A path with no results is an error, as is a
// file that is neither, or a listed result file that changed since runner wrote it.
func Load(paths []string) ([]result.Scenario, error) {
	var all []result.Scenario
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		var got []result.Scenario
		if info.IsDir() {
			got, err = loadDir(p)
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
func LoadDir(dir string) ([]result.Scenario, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return loadDir(dir)
}

func loadDir(dir string) ([]result.Scenario, error) {
	dirs, err := findManifests(dir)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	var out []result.Scenario
	for _, d := range dirs {
		got, _, _, err := loadManifest(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// Listed is a result file a manifest lists: its scenario and its directory, relative to
// the directory searched (slash-separated).
type Listed struct {
	Scenario result.Scenario
	Dir      string
}

// ListDir reads, as LoadDir does, the result files the manifests under dir list, with
// the directory each lies in: what `runner view` shows, so that a result.json nobody
// listed (one the agent wrote into a kept workspace, one of another run) never appears.
func ListDir(dir string) ([]Listed, error) {
	dirs, err := findManifests(dir)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	var out []Listed
	for _, d := range dirs {
		got, paths, _, err := loadManifest(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		rel, err := filepath.Rel(dir, d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		for i, s := range got {
			out = append(out, Listed{Scenario: s, Dir: path.Clean(path.Join(filepath.ToSlash(rel), path.Dir(paths[i])))})
		}
	}
	return out, nil
}

func readResult(path string) (result.Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return result.Scenario{}, err
	}
	return decodeResult(path, b)
}

func decodeResult(path string, b []byte) (result.Scenario, error) {
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
	b, err := os.ReadFile(path)
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
