package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// Options say what one invocation's runtime is built from. The command line binds its
// flags into them; every field is the flag's value, none is a flag name.
type Options struct {
	// Paths are the task files, directories or globs; Filter ("" for all) keeps the tasks
	// whose name matches the regular expression.
	Paths  []string
	Filter string
	// Model, when set, is the model of every task ("" for each task's own). Bench leaves it
	// empty and names a model per turn with Session.Scenario.
	Model string
	// Bench says the models are the bench's, checked and opened per turn: New checks no
	// model of the tasks.
	Bench bool
	// Open opens the models and the judges: streaming, request timeout, retries, cassettes,
	// the tool-call parser.
	Open providers.OpenOptions
	// OutDir receives the scenarios' directories; New prepares it (see PrepareOut).
	// ResumeOut says OutDir is an earlier run's that this one continues (--resume,
	// --rerun-failed into it): kept as it is, not moved aside.
	OutDir    string
	ResumeOut bool
	// OnMoved, when set, is told that New moved an earlier run out of OutDir to prev
	// (the command line says so, naming how to continue a run); nil: a note on Warn.
	OnMoved func(dir, prev string)
	// MaxSteps, Timeout (0: the task's), Approval and Sandbox ("": the task's) override
	// every task.
	MaxSteps int
	Timeout  time.Duration
	Approval string
	Sandbox  string
	// Agent ("": the task's) is every task's agent kind (runner/agent/kinds).
	Agent string
	// CacheDir is the build cache shared by commands ("" for none); New creates it.
	CacheDir string
	// KeepWorkspaces, Engine and RunID are as in scenario.Options.
	KeepWorkspaces bool
	Engine, RunID  string
	// WorkspaceParent and NoSync are for tests and benchmarks, as in scenario.Options.
	WorkspaceParent string
	NoSync          bool
	// Terminal, when set and both of its ends are terminals, answers approval questions of
	// ask mode (one scenario at a time: see Session.Parallel).
	Terminal *Terminal
	// Warn receives the tasks' warnings and the sandboxes' notes.
	Warn io.Writer
	// Catalog is the tool catalog (nil: catalog.Default()).
	Catalog *tools.Registry
	// Cases expand task files with vars:, a matrix: or a dataset:.
	Cases Cases
	// Prices is a file of token prices over the shipped table ("" for the shipped one).
	Prices string
	// KeepGoing: a task file that does not load does not stop the others. New returns
	// the tasks that loaded, the problems of the rest in Session.LoadProblems (run and
	// bench run what they can and exit as for a file that does not load); only when no
	// task loads is it New's error.
	KeepGoing bool
}

// Terminal is the person at the keyboard, for ask mode.
type Terminal struct {
	In  *os.File
	Out io.Writer
	// TTY says Out is a terminal (or the caller forces the live console).
	TTY bool
}

// Session is one invocation's runtime: tasks, catalog, models, judges, sandboxes, policy
// asker, cache. Every command that runs scenarios (run, bench, validate --oracle) builds
// it with New and runs them with the options Scenario returns, so no command can forget
// a part of it (bench once ran without the judge).
type Session struct {
	Tasks     []*task.Task
	Catalog   *tools.Registry
	Models    *Models
	Sandboxes *Sandboxes
	// Asker answers ask mode's questions; nil without a terminal.
	Asker policy.Asker
	// CacheDir is the prepared (absolute) build cache, "" for none.
	CacheDir string
	// Prices price every scenario's model calls.
	Prices *price.Table
	// Warmup is New's warming of the build cache for the tasks' toolchains (see Warm);
	// nil when there was nothing to warm.
	Warmup *result.Warmup
	// LoadProblems lists the task files that did not load, with Options.KeepGoing (nil:
	// every file loaded).
	LoadProblems *LoadError
	opts         Options
}

// Errors of New, each wrapping the cause; the command line names the flag.
type (
	// FilterError: Options.Filter is not a regular expression, or matches no task
	// (errors.Is(err, ErrNoMatch)).
	FilterError struct {
		Filter string
		Err    error
	}
	// LoadError: a task file cannot be loaded (every problem listed).
	LoadError struct{ Err error }
	// OutDirError: the output directory cannot be created.
	OutDirError struct{ Err error }
	// CacheError: the build cache cannot be created.
	CacheError struct{ Err error }
	// PricesError: the prices file cannot be read (errors.Is(err, price.ErrBadFile)).
	PricesError struct{ Err error }
)

func (e *FilterError) Error() string { return fmt.Sprintf("%q: %v", e.Filter, e.Err) }
func (e *FilterError) Unwrap() error { return e.Err }
func (e *LoadError) Error() string   { return e.Err.Error() }
func (e *LoadError) Unwrap() error   { return e.Err }
func (e *OutDirError) Error() string { return e.Err.Error() }
func (e *OutDirError) Unwrap() error { return e.Err }
func (e *CacheError) Error() string  { return e.Err.Error() }
func (e *CacheError) Unwrap() error  { return e.Err }
func (e *PricesError) Error() string { return e.Err.Error() }
func (e *PricesError) Unwrap() error { return e.Err }

// New builds the runtime: loads and filters the tasks, starts the models' pre-flight
// checks in the background (a name that does not parse is a *BadNameError), prepares the
// output directory (PrepareOut) and the cache, probes every sandbox mode the tasks use
// (the notes come before any progress line), warms the cache for the toolchains the
// tasks use (Warm, its progress on Warn) and finds the terminal for ask mode.
func New(ctx context.Context, o Options) (*Session, error) {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	s := &Session{Catalog: o.Catalog, opts: o}
	if s.Catalog == nil {
		s.Catalog = catalog.Default()
	}
	s.Prices = price.Default()
	if o.Prices != "" {
		var err error
		if s.Prices, err = price.Load(o.Prices); err != nil {
			return nil, &PricesError{Err: err}
		}
	}
	tasks, err := loadTasks(o.Paths, s.Catalog, o.Filter, o.Warn, o.Cases)
	var load *LoadError
	switch {
	case o.KeepGoing && errors.As(err, &load) && len(tasks) > 0:
		s.LoadProblems = load
	case err != nil:
		return nil, err
	}
	s.Tasks = tasks
	s.Models = NewModels(o.Model, o.Open)
	if !o.Bench {
		// The checks run in the background from here on (see Models.Preflight).
		if err := s.Models.Preflight(ctx, tasks); err != nil {
			return nil, err
		}
	}
	if o.OutDir != "" {
		moved, err := PrepareOut(o.OutDir, o.ResumeOut)
		if err != nil {
			return nil, &OutDirError{Err: err}
		}
		switch {
		case moved != "" && o.OnMoved != nil:
			o.OnMoved(o.OutDir, moved)
		case moved != "":
			_, _ = fmt.Fprintf(o.Warn, "runner: %s held an earlier run: moved to %s (an output directory holds one run)\n", o.OutDir, moved) // console output: a failed write has nowhere to be reported
		}
		if !o.Bench {
			if err := merge.Begin(o.OutDir); err != nil {
				return nil, &OutDirError{Err: err}
			}
		}
	}
	if s.CacheDir, err = PrepareCache(o.CacheDir); err != nil {
		return nil, &CacheError{Err: err}
	}
	s.Sandboxes = NewSandboxes(o.Sandbox, o.Warn)
	s.Sandboxes.ProbeAll(tasks)
	s.Warmup = s.Warm(ctx, o.Warn)
	if tm := o.Terminal; tm != nil && tm.TTY && (o.Approval == task.ModeAsk || anyAsk(tasks)) && policy.IsTerminal(tm.In) {
		s.Asker = policy.NewTerminalAsker(tm.In, tm.Out)
	}
	return s, nil
}

// loadTasks is LoadTasks with its errors typed for New.
func loadTasks(paths []string, reg *tools.Registry, filter string, warn io.Writer, cases Cases) ([]*task.Task, error) {
	tasks, err := LoadCases(paths, reg, filter, warn, cases)
	var fe *FilterError
	var uv *task.UnknownVarError
	switch {
	case err == nil:
		return tasks, nil
	case errors.As(err, &fe), errors.As(err, &uv):
		return nil, err
	}
	return tasks, &LoadError{Err: err}
}

// Parallel is the number of scenarios that may run at once: one while a person answers
// ask mode's questions, else want.
func (s *Session) Parallel(want int) int {
	if s.Asker != nil {
		return 1
	}
	return want
}

// Scenario returns the options every scenario of the session runs with. model, when
// set, replaces the session's model (bench's turn of one model); its pre-flight check
// starts now, in the background, unless Models.Prepare made it ready.
func (s *Session) Scenario(ctx context.Context, model string) scenario.Options {
	o := s.opts
	models := s.Models
	if model != "" {
		// The session's checks: a model bench prepared (Models.Prepare) is not checked again.
		models = s.Models.With(model)
		_ = models.Preflight(ctx, s.Tasks) // a name that does not parse errors every scenario in ForTask
	}
	tb := s.toolboxOptions() // the parts of every toolbox (see Toolbox)
	return scenario.Options{
		OutDir: o.OutDir, Catalog: tb.Catalog, Approval: tb.Approval, Asker: tb.Asker, Sandbox: tb.Sandbox,
		MaxSteps: o.MaxSteps, Timeout: o.Timeout, KeepWorkspaces: o.KeepWorkspaces, CacheDir: s.CacheDir, CacheSkip: CacheSkip,
		Model: models.ForTask, ModelName: models.Name, Judge: s.Models.Judge,
		Engine: o.Engine, RunID: o.RunID, WorkspaceParent: o.WorkspaceParent, NoSync: o.NoSync, Prices: s.Prices,
		Agent: o.Agent,
	}
}

func anyAsk(tasks []*task.Task) bool {
	for _, t := range tasks {
		if t.Approval.Mode == task.ModeAsk {
			return true
		}
	}
	return false
}
