// Package scenario runs one task end to end: workspace, agent loop, verify files,
// assertions, transcript and result.json. Package suite runs many of them.
package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/budget"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/runner/version"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/tools"
)

// Options are shared by every scenario of a run.
type Options struct {
	// OutDir receives OUT/<scenario>/transcript.jsonl and result.json.
	OutDir string
	// Model opens the model for a task (the oracle needs the task's reference).
	Model func(t *task.Task, repeat int) (model.Model, error)
	// Catalog is the full tool registry; each task gets the subset it lists.
	Catalog *tools.Registry
	// Judge opens a judge assertion's model by PROVIDER:MODEL; nil makes judges errors.
	Judge func(spec string) (model.Model, error)
	// Sandbox returns the command wrapper for a sandbox mode (one of sandbox.Modes).
	Sandbox func(mode string) (tools.CommandWrapper, error)
	// Approval, when set, overrides every task's approval policy (--approval).
	Approval *task.Approval
	// Asker answers approval questions in ask mode; nil when there is no terminal.
	Asker policy.Asker
	// MaxSteps and Timeout, when non-zero, override the tasks' limits.
	MaxSteps int
	Timeout  time.Duration
	// KeepWorkspaces keeps each final workspace and records its path.
	KeepWorkspaces bool
	// WorkspaceParent is where temporary workspaces are made ("" for the system temp dir).
	WorkspaceParent string
	// CacheDir is shared by every command of the run as XDG_CACHE_HOME ("" for none);
	// CacheSkip, when set, names what of it a task's layer leaves out (the caches of
	// toolchains the task does not use: tools.Workspace.CacheSkip).
	CacheDir  string
	CacheSkip func(t *task.Task) []string
	// Engine names the container engine of tasks with an environment: (--engine); ""
	// takes podman or docker from PATH.
	Engine string
	// RunID labels every container of the run (runner.run=ID); "" makes one per process.
	RunID string
	// NoSync skips fsync of transcript events (benchmarks only).
	NoSync bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Repeats is how many times each task runs (runs are named "name #1" ... when > 1).
	Repeats int
	// ModelName, when set, names the model a task runs on before it is opened, so a
	// model that cannot be opened still has its name in the result.
	ModelName func(t *task.Task) string
	// Index is the scenario's place in the whole run (result.Scenario.Index); package
	// suite sets it per scenario.
	Index int
	// Agent, when set, overrides every task's agent kind (--agent; runner/agent/kinds).
	Agent string
	// Prices is the price table that gives each scenario its cost; nil is the shipped one.
	Prices *price.Table
	// Budget, when set, is the run's --budget-usd: every model call of the scenario (the
	// loop's, an external agent's through the endpoint, a judge's) is checked against it
	// and charged to it as it happens.
	Budget *budget.Budget
}

// Run runs one task. Repeat numbers repeated runs of the same task (from 1; see
// result.Scenario.Repeat). It never returns an error: every failure is in the result.
func Run(ctx context.Context, t *task.Task, repeat int, opts Options) result.Scenario {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	r := &runState{t: t, opts: opts, now: now}
	r.res = result.Scenario{
		Name: t.Name, File: t.Path, Tags: t.Tags, Repeat: repeat, Repeats: opts.Repeats, Index: opts.Index, Started: now(),
		RunnerVersion: version.String(),
	}
	SetCase(t, &r.res)
	if opts.ModelName != nil {
		r.res.Model = opts.ModelName(t)
	}
	r.run(ctx, repeat)
	r.markKept()
	r.res.Cost = costOf(r.res, opts.Prices)
	r.res.Duration = result.Millis(now().Sub(r.res.Started))
	r.finish()
	return r.res
}

type runState struct {
	t    *task.Task
	opts Options
	now  func() time.Time
	res  result.Scenario
	out  string // this scenario's output directory
	tr   *transcript.Writer
	// steps is the last step the loop recorded, for a loop that has to be abandoned.
	steps atomic.Int64
	// firstDenied is the first call the policy refused ("tool {args}"), often the real
	// cause of the assertions that then fail.
	firstDenied string
	// agent is what acts in the scenario (the loop unless an external kind), set by prepare.
	agent kinds.Kind
	// notes are the agent loop's explanations of answers without a call (agent.Outcome).
	notes []string
}

// run takes the scenario through its stages: prepare (output, model, settings, tools,
// sandbox, policy, workspace), act (the agent loop), verify (changes, verify files,
// assertions) and conclude (the verdict). What prepare started is undone when run
// returns, whichever stage ended the scenario.
func (r *runState) run(ctx context.Context, repeat int) {
	p := &prepared{}
	defer p.close()
	start := r.now()
	err := r.prepare(ctx, repeat, p)
	r.res.SetupTime = result.Millis(r.now().Sub(start))
	if err != nil {
		r.errorf("%v", err)
		return
	}
	a := r.act(p)
	switch {
	case a.err != nil:
		r.errorf("%v", a.err)
		return
	case a.stuck:
		r.res.Steps = a.out.Steps
		abandoned(p.parent).apply(&r.res)
		return
	}
	a.record(r)
	start = r.now()
	v := r.verify(p, a)
	r.writeDiffs(v.diffs)
	r.conclude(p, a, v).apply(&r.res)
	r.res.VerifyTime = result.Millis(r.now().Sub(start))
}

// markKept marks a kept workspace as one, once the agent and everything it started are
// gone (see workspace.KeptMarker). A workspace the agent left so that runner cannot write
// its top fails a passing scenario: a mark missing there lets a downloaded copy of the
// workspace pass for an output directory.
func (r *runState) markKept() {
	if r.res.Workspace == "" {
		return
	}
	var ke *workspace.KeptError
	if err := workspace.MarkKept(r.res.Workspace); !errors.As(err, &ke) {
		return
	}
	switch {
	case !ke.ByAgent && r.res.Status != result.Errored:
		r.errorf("%v", ke)
	case r.res.Status == result.Passed:
		verdict{status: result.Failed, reason: "the agent broke the workspace: " + ke.Error()}.apply(&r.res)
	}
}

// setChanges records the comparison in the result (nil: none was made).
func (r *runState) setChanges(c *workspace.Changes) {
	if c != nil {
		r.res.FilesChanged = fileChanges(*c)
	}
}

// errorf errors the scenario with a reason that is not the agent's doing.
func (r *runState) errorf(format string, a ...any) {
	errored(fmt.Sprintf(format, a...)).apply(&r.res)
}

// Write records a loop event; it makes runState the agent's Recorder.
func (r *runState) Write(step int, data transcript.Payload) error {
	if _, ok := data.(transcript.Response); ok {
		r.steps.Store(int64(step))
	}
	return r.record(step, data)
}

func (r *runState) record(step int, data transcript.Payload) error {
	if r.tr == nil {
		return nil
	}
	return r.tr.Write(step, data)
}

// finish writes the end event and result.json, and closes the transcript.
func (r *runState) finish() {
	// The record is scrubbed once here, before any output shortens one of its texts.
	scrub.Value(&r.res)
	if r.tr == nil {
		return
	}
	_ = r.record(r.res.Steps, transcript.End{
		Status: r.res.Status, Stop: r.res.Stop, Reason: r.res.Reason, Steps: r.res.Steps,
		Duration: r.res.Duration,
	})
	if err := r.tr.Close(); err != nil && r.res.Status != result.Errored {
		r.res.Status, r.res.Reason = result.Errored, err.Error()
	}
	if b, err := json.MarshalIndent(r.res, "", "  "); err == nil {
		// Listed with its SHA-256 in the output directory's manifest: merge and resume
		// read nothing else (see merge.ManifestFile). Written atomically and scrubbed
		// again as JSON (scrub.Output): the record was scrubbed as values, this catches
		// what encoding made of them.
		_ = merge.WriteResultWith(filepath.Dir(r.out), filepath.Base(r.out)+"/"+merge.ResultFile, append(b, '\n'),
			merge.WriteOptions{NoSync: r.opts.NoSync})
	}
}

// dirName is the scenario's output directory (result.Scenario.DirName: "name.r2" for
// a repeat, no character a shell or an artifact upload treats specially).
func dirName(s result.Scenario) string { return s.DirName() }
