package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/task"
)

// Models opens each task's model and remembers pre-flight failures, so a missing model
// errors its scenarios instead of aborting the run. Each model is checked once: by
// Preflight's round trip in the background, or by Prepare (bench), whose probe and first
// load a later Preflight of the same name finds done.
type Models struct {
	// Override, when set, is the model of every task (--model).
	Override string
	open     providers.OpenOptions
	*checks  // shared with every With of the set
}

// checks are the models' pre-flight checks, by name.
type checks struct {
	mu     sync.Mutex
	byName map[string]*check
}

// check is one model's pre-flight check, running in the background: err is set before
// done is closed.
type check struct {
	done chan struct{}
	err  error
}

// NewModels returns a model set that opens models with open; override ("" for none)
// replaces every task's model.
func NewModels(override string, open providers.OpenOptions) *Models {
	return &Models{Override: override, open: open, checks: &checks{byName: map[string]*check{}}}
}

// With is the set with model as every task's (bench's turn of one model), sharing the
// checks: a model Prepare made ready is not checked again.
func (m *Models) With(model string) *Models {
	return &Models{Override: model, open: m.open, checks: m.checks}
}

// Name is the model a task runs on: the override, else the task's, else DefaultModel.
func (m *Models) Name(t *task.Task) string {
	switch {
	case m.Override != "":
		return m.Override
	case t.Model != "":
		return t.Model
	}
	return DefaultModel
}

// BadNameError is a model name that does not parse: a usage error, nothing should run.
type BadNameError struct{ Err error }

func (e *BadNameError) Error() string { return e.Err.Error() }
func (e *BadNameError) Unwrap() error { return e.Err }

// Preflight starts the check of every distinct model, once, in the background: a round
// trip to the server that the scenarios' setup (transcript, workspace, setup commands)
// need not wait for. A name that does not parse is a *BadNameError, found before
// Preflight returns; a model that is unreachable or missing errors its scenarios later
// (ForTask, or Ready before the agent starts), and the run goes on with the others. A
// model checked already (Prepare, an earlier Preflight) is not checked again.
func (m *Models) Preflight(ctx context.Context, tasks []*task.Task) error {
	names := map[string]bool{}
	for _, t := range tasks {
		names[m.Name(t)] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		if m.lookup(name) != nil {
			continue
		}
		mod, err := providers.Open(name, m.open)
		if err != nil {
			return &BadNameError{Err: err}
		}
		c := m.start(name)
		go func() {
			defer close(c.done)
			c.err = providers.Check(ctx, mod)
		}()
	}
	return nil
}

func (m *Models) lookup(name string) *check {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byName[name]
}

// start records name's check as begun.
func (m *Models) start(name string) *check {
	c := &check{done: make(chan struct{})}
	m.mu.Lock()
	m.byName[name] = c
	m.mu.Unlock()
	return c
}

// Prepared is a model made ready for its cells by Prepare.
type Prepared struct {
	// Probe is what the server says of the model (nil: nothing; the model passed its
	// pre-flight check instead).
	Probe *model.Info
	// Loader loads the model and says where the server holds it; nil for a provider whose
	// models need no loading. First is the first load, with the options of the cells
	// that run first (NumCtx); nil without a Loader.
	Loader providers.Loader
	First  *model.Load
	NumCtx int
}

// Prepare makes the model name ready for a benchmark's cells: opened once, probed (a
// model without tools cannot be benchmarked) and, where its server loads models, loaded
// with num_ctx numCtx (the cells that run first). The error says why the model cannot
// be benchmarked; the Prepared returned with it holds the probe when there was one. A
// model prepared counts as checked: the scenarios' Preflight of it asks nothing more.
func (m *Models) Prepare(ctx context.Context, name string, numCtx int) (*Prepared, error) {
	mod, err := providers.Open(name, m.open)
	if err != nil {
		return nil, err
	}
	p := &Prepared{NumCtx: numCtx}
	if p.Probe, err = providers.Probe(ctx, mod); err != nil {
		return p, err
	}
	if info := p.Probe; info != nil && !info.Tools {
		return p, fmt.Errorf("the model has no tools capability (capabilities: %s)", strings.Join(info.Capabilities, ", "))
	}
	if loader, ok := providers.FindLoader(mod); ok {
		ld, err := loader.Load(ctx, model.Options{NumCtx: numCtx})
		if err != nil {
			return p, err // the server answered the probe but cannot load the model
		}
		p.Loader, p.First = loader, &ld
		if info := p.Probe; info != nil && numCtx == 0 && ld.Placement != nil {
			info.LoadedContext = ld.Placement.ContextLength
		}
	}
	close(m.start(name).done) // checked: probed, and loaded where it loads
	return p, nil
}

// ForTask opens the model of t's run number repeat (from 1), or returns the error its pre-flight check found. While
// the check still runs, the model it returns waits for it: in Ready, which the scenario
// calls before the agent starts, and in Step.
func (m *Models) ForTask(t *task.Task, repeat int) (model.Model, error) {
	name := m.Name(t)
	c := m.lookup(name)
	pending := false
	if c != nil {
		select {
		case <-c.done:
			if c.err != nil {
				return nil, c.err
			}
		default:
			pending = true
		}
	}
	o := m.open
	o.Reference = ReferenceCalls(t)
	o.Scenario, o.Repeat = t.Name, repeat
	if o.ToolCallParser == "" { // --tool-call-parser wins over the task's
		o.ToolCallParser = t.ToolCallParser
	}
	mod, err := providers.Open(name, o)
	if err != nil || !pending {
		return mod, err
	}
	return &checked{Model: mod, check: c}, nil
}

// checked is a model whose pre-flight check was still running when it was opened.
type checked struct {
	model.Model
	check *check
}

// Ready waits for the model's pre-flight check and returns what it found.
func (c *checked) Ready(ctx context.Context) error {
	select {
	case <-c.check.done:
		return c.check.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Step sends the request once the check has passed.
func (c *checked) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := c.Ready(ctx); err != nil {
		return nil, err
	}
	return c.Model.Step(ctx, req)
}

// Unwrap returns the model inside, for providers.Check and the other lookups.
func (c *checked) Unwrap() model.Model { return c.Model }

// Judge opens a judge assertion's model (PROVIDER:MODEL) with the run's streaming,
// timeout and retries.
func (m *Models) Judge(spec string) (model.Model, error) {
	return providers.Open(spec, m.open)
}

// ReferenceCalls turns a task's reference solution into the calls the oracle plays.
func ReferenceCalls(t *task.Task) []model.ToolCall {
	calls := make([]model.ToolCall, 0, len(t.Reference))
	for _, c := range t.Reference {
		args, _ := json.Marshal(c.Args)
		calls = append(calls, model.ToolCall{Name: c.Tool, Arguments: args})
	}
	return calls
}
