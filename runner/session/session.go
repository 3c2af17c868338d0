// Package session holds what the scenarios of one invocation share at run time: the task
// files loaded once, each model opened and checked once, each sandbox mode probed once,
// and the build cache. The command line binds flags into Options; New builds the runtime
// from them (everything that touches the machine or a model server lives here) and
// Session.Scenario hands out the one set of scenario options, so `run`, `validate` and
// `bench` share it.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// DefaultModel runs the tasks' reference solutions: it needs no model server.
const DefaultModel = "oracle"

// ErrNoMatch is returned by LoadTasks when a filter leaves no task.
var ErrNoMatch = errors.New("matches no scenario")

// LoadTasks loads every task file under paths, prints each task's warnings to warn and keeps
// the tasks whose name matches filter ("" keeps all). Load errors list every problem at once;
// a filter that does not compile or keeps nothing is a *FilterError.
func LoadTasks(paths []string, reg *tools.Registry, filter string, warn io.Writer) ([]*task.Task, error) {
	return LoadCases(paths, reg, filter, warn, Cases{})
}

// Cases say how task files with vars:, a matrix: or a dataset: expand: values set from
// outside (they win over the files'), and which cases of each to keep.
type Cases struct {
	Vars map[string]any
	// Limit keeps the first Limit cases of each task (0: all); Sample picks Sample of
	// them at random, seeded by Seed (0: all).
	Limit, Sample int
	Seed          uint64
}

// LoadCases is LoadTasks with the cases' options.
func LoadCases(paths []string, reg *tools.Registry, filter string, warn io.Writer, cases Cases) ([]*task.Task, error) {
	var re *regexp.Regexp
	if filter != "" {
		var err error
		if re, err = regexp.Compile(filter); err != nil {
			return nil, &FilterError{Filter: filter, Err: err}
		}
	}
	opts := loadOptions(reg)
	opts.Vars, opts.Limit, opts.Sample, opts.Seed = cases.Vars, cases.Limit, cases.Sample, cases.Seed
	tasks, err := task.LoadAll(paths, opts)
	registerSecrets(tasks...)
	if err != nil && len(tasks) == 0 {
		return nil, err
	}
	loadErr := err // with the tasks that loaded, for a caller that runs them anyway
	for _, t := range tasks {
		for _, w := range t.Warnings {
			_, _ = fmt.Fprintf(warn, "runner: warning: %s\n", w) // console output: a failed write has nowhere to be reported
		}
	}
	if re == nil {
		return tasks, loadErr
	}
	kept := tasks[:0]
	for _, t := range tasks {
		if re.MatchString(t.Name) {
			kept = append(kept, t)
		}
	}
	switch {
	case len(kept) == 0 && loadErr != nil:
		return nil, loadErr
	case len(kept) == 0:
		return nil, &FilterError{Filter: filter, Err: ErrNoMatch}
	}
	return kept, loadErr
}

// loadOptions are the task loader's options for a run with the tool catalog reg: what a
// task file may name of the runtime (tools, sandbox modes, tool-call parsers), which the
// format package leaves to the runtime.
func loadOptions(reg *tools.Registry) task.LoadOptions {
	return task.LoadOptions{KnownTool: reg.Canonical, ToolNames: reg.Names(), Now: time.Now(), CheckArgs: reg.CheckArgs,
		SandboxModes: sandbox.ModeNames(), Parsers: textcall.Modes, SecretMinLen: scrub.MinLen}
}

// registerSecrets tells the process's scrubber the tasks' secret values, before anything
// prints or writes: loading a task leaves that to whoever runs it.
func registerSecrets(tasks ...*task.Task) {
	for _, t := range tasks {
		scrub.Add(t.SecretValues()...)
	}
}

// LoadTask loads one task file (its first case) as LoadTasks loads them, its secrets
// registered with the scrubber, for a command that looks at one task (runner policy
// check).
func LoadTask(path string, reg *tools.Registry) (*task.Task, error) {
	t, err := task.Load(path, loadOptions(reg))
	if err != nil {
		return nil, err
	}
	registerSecrets(t)
	return t, nil
}

type probe struct {
	wrap tools.CommandWrapper
	err  error
}

// Sandboxes probes each sandbox mode once and reports the choice once.
type Sandboxes struct {
	override string
	notes    io.Writer
	mu       sync.Mutex
	probed   map[string]probe
}

// NewSandboxes returns a sandbox set; override ("" for none) replaces every task's mode,
// and each mode's choice is reported on notes once.
func NewSandboxes(override string, notes io.Writer) *Sandboxes {
	return &Sandboxes{override: override, notes: notes, probed: map[string]probe{}}
}

// Get returns the command wrapper for a task's sandbox mode, probing it on first use.
func (s *Sandboxes) Get(mode string) (tools.CommandWrapper, error) {
	if s.override != "" {
		mode = s.override
	}
	if mode == "" {
		mode = task.DefaultSandbox
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.probed[mode]; ok {
		return p.wrap, p.err
	}
	wrap, note, err := sandbox.Probe(context.Background(), mode)
	if note != "" {
		_, _ = fmt.Fprintf(s.notes, "runner: %s\n", describeSandbox(mode, wrap, note)) // console output: a failed write has nowhere to be reported
	}
	s.probed[mode] = probe{wrap: wrap, err: err}
	return wrap, err
}

// ProbeAll probes every mode the tasks use now, so the notes come before any progress
// line; a mode that fails errors its scenarios when they run.
func (s *Sandboxes) ProbeAll(tasks []*task.Task) {
	for _, t := range tasks {
		_, _ = s.Get(t.Sandbox)
	}
}

// describeSandbox says which sandbox a mode chose: "sandbox auto: bwrap (...): ...".
func describeSandbox(mode string, wrap tools.CommandWrapper, note string) string {
	if wrap == nil || wrap.Name() == mode {
		return note
	}
	return "sandbox " + mode + ": " + strings.TrimPrefix(note, "sandbox ")
}

// DefaultCacheDir is where commands keep build caches between runs: the user's cache
// directory, so a second run starts warm.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "runner")
}

// PrepareCache creates the cache directory and returns its absolute path ("" for none).
func PrepareCache(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	return abs, nil
}

// ErrNotOutput: the output directory holds files runner did not write (PrepareOut);
// errors.Is finds it in the error that says which.
var ErrNotOutput = errors.New("not runner's output")

type notOutput string

func (e notOutput) Error() string        { return string(e) }
func (e notOutput) Is(target error) bool { return target == ErrNotOutput }

// PrevSuffix names where PrepareOut moves an earlier run: runner-out -> runner-out.prev.
const PrevSuffix = ".prev"

// PrepareOut makes dir ready for one run, by one rule, so that a run's index and reports
// show that run alone (a second run into the same folder once listed the first one's
// rows too):
//   - missing or empty (nothing but empty directories, such as one made for
//     --keep-workspaces' TMPDIR): created;
//   - resume (the run continues the one in dir: --resume, --rerun-failed): kept;
//   - holding an earlier run's output (merge.IsOutput): moved to dir+PrevSuffix, which
//     replaces the one before it (one earlier run kept, and a CI machine that reuses its
//     folders does not fill its disk); moved is that path;
//   - anything else: refused, since runner neither mixes its results with files it did
//     not write nor removes them.
//
// A dir+PrevSuffix that is neither runner's output nor empty is refused too.
func PrepareOut(dir string, resume bool) (moved string, err error) {
	_, err = os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist), err == nil && (resume || holdsNoFile(dir)):
		return "", os.MkdirAll(dir, 0o755)
	case err != nil:
		return "", err
	case !merge.IsOutput(dir):
		return "", notOutput(fmt.Sprintf("%s is not empty and holds no runner output (no %s): runner will neither mix its results with other files nor remove them; give a new or empty directory", dir, merge.ManifestFile))
	}
	prev := filepath.Clean(dir) + PrevSuffix
	if old, err := os.ReadDir(prev); err == nil {
		if len(old) > 0 && !merge.IsOutput(prev) {
			return "", notOutput(fmt.Sprintf("%s holds an earlier run, and %s, where it would go, is not runner's output: move one of them away", dir, prev))
		}
		if err := os.RemoveAll(prev); err != nil {
			return "", fmt.Errorf("remove the run before the last, %s: %w", prev, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s holds an earlier run, and %s, where it would go: %w", dir, prev, err)
	}
	if err := os.Rename(dir, prev); err != nil {
		return "", fmt.Errorf("%s holds an earlier run; moving it aside: %w", dir, err)
	}
	return prev, os.MkdirAll(dir, 0o755)
}

// holdsNoFile reports whether dir holds nothing but (empty) directories, looking at no
// more than a thousand entries.
func holdsNoFile(dir string) bool {
	n, none := 0, true
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if n++; err != nil || n > 1000 || !d.IsDir() {
			none = false
			return fs.SkipAll
		}
		return nil
	})
	return none
}
