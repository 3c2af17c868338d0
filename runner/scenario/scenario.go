// Package scenario runs one task end to end: workspace, agent loop, verify files,
// assertions, transcript and result.json. Package suite runs many of them.
package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentrunner/runner/runner/agent"
	"github.com/agentrunner/runner/runner/assert"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/runner/version"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/tools"
	toolexec "github.com/agentrunner/runner/tools/exec"
	"github.com/agentrunner/runner/tools/exec/container"
	confinement "github.com/agentrunner/runner/tools/exec/sandbox"
)

// Options are shared by every scenario of a run.
type Options struct {
	// OutDir receives OUT/<scenario>/transcript.jsonl and result.json.
	OutDir string
	// Model opens the model for a task (the oracle needs the task's reference).
	Model func(t *task.Task) (model.Model, error)
	// Catalog is the full tool registry; each task gets the subset it lists.
	Catalog *tools.Registry
	// Judge opens a judge assertion's model by PROVIDER:MODEL; nil makes judges errors.
	Judge func(spec string) (model.Model, error)
	// Sandbox returns the command wrapper for a sandbox mode (auto, bwrap, landlock, none).
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
	// CacheDir is shared by every command of the run as XDG_CACHE_HOME ("" for none).
	CacheDir string
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
}

// Run runs one task. Repeat distinguishes repeated runs of the same task (0 for the
// first). It never returns an error: every failure is in the result.
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
	if opts.ModelName != nil {
		r.res.Model = opts.ModelName(t)
	}
	r.run(ctx, repeat)
	r.res.Duration = now().Sub(r.res.Started)
	r.finish()
	return r.res
}

// readier is a model whose pre-flight check may still be running: session.Models starts
// the checks in the background, so that their round trip overlaps the scenario's setup.
type readier interface {
	Ready(ctx context.Context) error
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
	// notes are the agent loop's explanations of answers without a call (agent.Outcome).
	notes []string
}

func (r *runState) run(ctx context.Context, repeat int) {
	t, opts := r.t, r.opts
	r.out = filepath.Join(opts.OutDir, dirName(r.res))
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		r.errorf("create output directory: %v", err)
		return
	}
	tr, err := transcript.Create(filepath.Join(r.out, "transcript.jsonl"), transcript.Options{Now: r.now, NoSync: opts.NoSync})
	if err != nil {
		r.errorf("%v", err)
		return
	}
	r.tr = tr
	r.res.Transcript = tr.Path()

	m, err := opts.Model(t)
	if err != nil {
		r.errorf("%v", err)
		return
	}
	r.res.Model = m.Name()
	maxSteps, timeout := t.MaxSteps, t.Timeout
	if opts.MaxSteps > 0 {
		maxSteps = opts.MaxSteps
	}
	if opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	approval := t.Approval
	if opts.Approval != nil {
		approval = *opts.Approval
	}
	reg, err := t.Registry(opts.Catalog) // the catalog plus the task's own tools
	if err != nil {
		r.errorf("%v", err)
		return
	}
	toolset := reg                         // no tools: key offers every tool
	if t.Tools != nil && len(t.MCP) == 0 { // with MCP servers, once they run (startMCP)
		if toolset, err = reg.Subset(t.Tools...); err != nil {
			r.errorf("tools: %v", err)
			return
		}
	}
	var sandbox tools.CommandWrapper
	if t.Environment == nil { // a container confines commands itself
		if sandbox, err = opts.Sandbox(t.Sandbox); err != nil {
			r.errorf("sandbox: %v", err)
			return
		}
	}
	if sandbox != nil {
		r.res.Sandbox = sandbox.Name()
		r.res.SandboxGaps = confinement.Gaps(sandbox, t.Network)
	}
	pol, err := policy.New(approval, t.CommandRules, policy.Options{Now: r.now(), Asker: opts.Asker, Resolve: resolver(t, reg)})
	if err != nil {
		r.errorf("approval policy: %v", err)
		return
	}
	system := t.System
	if system == "" {
		system = agent.DefaultSystemPrompt // what the loop sends; the transcript says so
	}
	_ = r.record(transcript.TypeStart, 0, transcript.Start{
		FormatVersion: transcript.FormatVersion,
		Task:          t.Name, File: t.Path, Model: m.Name(), Repeat: repeat, System: system, Prompt: t.Prompt,
		Tools: startTools(t, toolset), Options: t.ModelOptions, MaxSteps: maxSteps, Timeout: timeout.String(),
		Approval: approval, Sandbox: r.res.Sandbox, SandboxGaps: r.res.SandboxGaps, Network: t.Network, Limits: t.Limits, Warnings: pol.Warnings(),
	})

	dir, err := workspace.Create(opts.WorkspaceParent, t.Name)
	if err != nil {
		r.errorf("%v", err)
		return
	}
	if opts.KeepWorkspaces {
		r.res.Workspace = dir
	} else {
		defer func() { _ = workspace.Remove(dir) }()
	}
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		r.errorf("%v", err)
		return
	}
	defer ws.Close()
	ws.Env, ws.Network, ws.Limits, ws.Sandbox, ws.CacheDir = t.Env, t.Network, t.Limits, sandbox, opts.CacheDir

	parent := ctx
	prepCtx := ctx // building an image is not the agent's time: only Ctrl-C stops it
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var env *container.Container
	if t.Environment != nil {
		if env, err = r.startEnvironment(prepCtx, ctx, dir); err != nil {
			r.errorf("environment: %v", err)
			return
		}
		defer r.stopEnvironment(ctx, env)
		ws.Sandbox, ws.Mount, sandbox, r.res.Sandbox = env, env.Workdir(), env, env.Name()
	}
	if err := workspace.Populate(ctx, t, dir, r.setupCommand(ws), func(s workspace.Step) {
		_ = r.record(transcript.TypeSetup, 0, s)
	}); err != nil {
		r.errorf("workspace: %v", err)
		return
	}
	stopMCP := func() {}
	if len(t.MCP) > 0 {
		if _, toolset, stopMCP, err = r.startMCP(ctx, ws, reg); err != nil {
			r.errorf("%v", err)
			return
		}
		defer stopMCP()
	}

	// What the agent changes is found by comparing the workspace with this snapshot.
	protect, err := workspace.NewProtect(t.Verify.Protect)
	if err != nil {
		r.errorf("verify.protect: %v", err)
		return
	}
	manifest, err := workspace.Snapshot(ctx, dir, protect)
	if err != nil {
		r.errorf("%v", err)
		return
	}
	var decider agent.Decider = pol
	if protect != nil {
		decider = protectDecider{next: pol, protect: protect, manifest: manifest}
	}

	// The model's pre-flight check ran while the workspace was prepared; an interrupt or
	// timeout meanwhile is the agent loop's to report.
	if rd, ok := m.(readier); ok {
		if err := rd.Ready(ctx); err != nil && ctx.Err() == nil {
			r.errorf("%v", err)
			return
		}
	}
	out, stuck := r.runAgent(ctx, agent.Config{
		System: system, Prompt: t.Prompt, Model: m, Options: t.ModelOptions,
		Tools: toolset, Policy: decider, Work: ws, Record: r, MaxSteps: maxSteps, Now: r.now,
	})
	stopMCP() // before the verify files arrive: servers never see them
	if stuck {
		r.res.Steps = out.Steps
		if parent.Err() != nil {
			r.res.Stop = result.StopInterrupt
			r.errorf("interrupted; a tool call did not stop and was abandoned")
		} else {
			r.res.Stop = result.StopTimeout
			r.errorf("a tool call did not stop at the scenario's timeout and was abandoned")
		}
		return
	}
	r.res.Stop, r.res.Steps, r.res.Summary = out.Stop, out.Steps, out.Summary
	r.res.ModelTime, r.res.ToolTime, r.res.MaxPromptTokens = out.ModelTime, out.ToolTime, out.MaxPrompt
	r.res.Usage = result.Usage{PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens, TokensPerSecond: out.Usage.TokensPerSecond(), EvalTime: out.Usage.EvalDuration}
	r.res.LoadTime, r.res.Reloads = out.Usage.LoadDuration, out.Reloads
	r.res.Warnings = append(r.res.Warnings, out.Notes...)
	if w := contextWarning(ctx, m, t.ModelOptions.NumCtx, out.MaxPrompt); w != "" {
		r.res.Warnings = append(r.res.Warnings, w)
	}
	r.notes = out.Notes
	for _, c := range out.Calls {
		if c.Executed {
			r.res.ToolCalls++
		}
		if c.Denied {
			if r.res.Denied == 0 {
				r.firstDenied = c.Name + " " + c.Args
			}
			r.res.Denied++
		}
		if c.Executed && !c.Success {
			r.res.ToolErrors++
		}
	}
	// The agent is done: find what it changed, add the hidden verify files and check the
	// end state, under the scenario's deadline (with a little grace after a timeout) and
	// the run's interrupt.
	deadline, _ := ctx.Deadline()
	vctx, vcancel := verifyContext(parent, deadline, r.now())
	defer vcancel()
	switch out.Stop {
	case result.StopError:
		// Still worth knowing what the agent did before the infrastructure failed.
		v := guard(vctx, func() verification {
			c, err := r.compare(vctx, dir, manifest)
			return verification{changes: c, err: err}
		})
		r.setChanges(v.changes)
		r.errorf("%v", out.Err)
		return
	case result.StopInterrupt:
		r.errorf("interrupted")
		return
	}
	v := guard(vctx, func() verification {
		return r.verifyNow(vctx, env, dir, manifest, &assert.Run{
			Workspace: dir, Completed: out.Stop == result.StopCompleted, Summary: out.Summary, Steps: out.Steps,
			Calls: out.Calls, Env: t.Env, Wrap: sandbox, Network: t.Network, Limits: t.Limits,
			CacheDir: opts.CacheDir, Judge: r.judgeEnv(t),
		})
	})
	r.setChanges(v.changes)
	r.res.Assertions = v.assertions
	r.res.Score, r.res.ScoreNote = v.score, v.scoreNote
	switch {
	case parent.Err() != nil:
		r.res.Stop = result.StopInterrupt
		r.errorf("interrupted")
		return
	case v.err != nil:
		r.errorf("%v", v.err)
		return
	}
	var protected string
	if v.changes != nil {
		protected = protectedFault(*v.changes)
	}
	// A judge that could not answer errors the scenario, unless the agent already failed it
	// by breaking the workspace or a protected file.
	r.totalJudgeUsage()
	if msg := r.judgeError(); msg != "" && protected == "" && v.broken == "" {
		r.errorf("%s", msg)
		return
	}
	r.verdict(protected, v.broken)
}

// setChanges records the comparison in the result (nil: none was made).
func (r *runState) setChanges(c *workspace.Changes) {
	if c != nil {
		r.res.FilesChanged = fileChanges(*c)
	}
}

// verdict sets passed or failed. A limit (max_steps, timeout, stopped) fails the scenario
// unless the task asserts on completion itself, i.e. allows not completing. agentFaults
// are failures the agent caused outside the assertions (a broken workspace); they come
// first in the reason.
func (r *runState) verdict(agentFaults ...string) {
	var failed []string
	assertsCompletion := false
	for _, a := range r.res.Assertions {
		if a.Kind == task.KindCompleted {
			assertsCompletion = true
		}
		if !a.Passed {
			if len(failed) == 0 {
				r.res.Line = a.Line
			}
			failed = append(failed, fmt.Sprintf("%s: %s", a.Kind, a.Message))
		}
	}
	if r.res.Stop != result.StopCompleted && !assertsCompletion {
		failed = append([]string{limitReason(r.res)}, failed...)
		r.res.Line = r.limitLine()
	}
	for i := len(agentFaults) - 1; i >= 0; i-- {
		if agentFaults[i] != "" {
			failed = append([]string{agentFaults[i]}, failed...)
		}
	}
	if len(failed) == 0 {
		r.res.Status = result.Passed
		return
	}
	r.res.Status = result.Failed
	r.res.Reason = failed[0]
	if len(failed) > 1 {
		r.res.Reason += fmt.Sprintf(" (+%d more)", len(failed)-1)
	}
	if len(r.notes) > 0 && r.res.Stop != result.StopCompleted {
		// Why the model stopped calling tools, when the server's answer shows it.
		r.res.Reason += "; " + r.notes[len(r.notes)-1]
	}
	if r.firstDenied != "" {
		// A refused call usually explains what followed; the last assertion rarely does.
		r.res.Reason += fmt.Sprintf("; %d call(s) denied, first: %s", r.res.Denied, oneLine(r.firstDenied, 200))
	}
}

// limitLine is the task-file line of the limit the agent hit (0 when the task left it
// at its default).
func (r *runState) limitLine() int {
	switch r.res.Stop {
	case result.StopMaxSteps:
		return r.t.KeyLines["max_steps"]
	case result.StopTimeout:
		return r.t.KeyLines["timeout"]
	}
	return 0
}

// oneLine keeps the first n runes of s on one line, for reasons.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func limitReason(s result.Scenario) string {
	switch s.Stop {
	case result.StopMaxSteps:
		return fmt.Sprintf("max_steps: reached %d steps without task_complete", s.Steps)
	case result.StopTimeout:
		return "timeout: the scenario timed out before task_complete"
	case result.StopStopped:
		return "stopped: the model answered twice without calling a tool"
	}
	return string(s.Stop)
}

func (r *runState) errorf(format string, a ...any) {
	r.res.Status = result.Errored
	if r.res.Stop == "" || r.res.Stop == result.StopCompleted {
		r.res.Stop = result.StopError
	}
	r.res.Reason = fmt.Sprintf(format, a...)
}

// Write records a loop event; it makes runState the agent's Recorder.
func (r *runState) Write(typ string, step int, data any) error {
	if typ == transcript.TypeResponse {
		r.steps.Store(int64(step))
	}
	return r.record(typ, step, data)
}

func (r *runState) record(typ string, step int, data any) error {
	if r.tr == nil {
		return nil
	}
	return r.tr.Write(typ, step, data)
}

// finish writes the end event and result.json, and closes the transcript.
func (r *runState) finish() {
	if r.tr == nil {
		return
	}
	_ = r.record(transcript.TypeEnd, r.res.Steps, transcript.End{
		Status: r.res.Status, Stop: r.res.Stop, Reason: r.res.Reason, Steps: r.res.Steps,
		DurationMS: r.res.Duration.Milliseconds(),
	})
	if err := r.tr.Close(); err != nil && r.res.Status != result.Errored {
		r.res.Status, r.res.Reason = result.Errored, err.Error()
	}
	if b, err := json.MarshalIndent(r.res, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(r.out, "result.json"), append(b, '\n'), 0o644)
	}
}

// setupCommand runs setup commands as the agent's commands run (tools/exec.RunShell), so
// they get the same environment, limits and sandbox.
func (r *runState) setupCommand(ws *tools.Workspace) workspace.CommandFunc {
	return func(ctx context.Context, _ string, command string, _ map[string]string) (string, int, error) {
		res, err := toolexec.RunShell(ctx, ws, command, setupTimeout)
		switch {
		case err != nil:
			return "", -1, err
		case res.TimedOut:
			return res.Output, res.ExitCode, fmt.Errorf("timed out after %s", setupTimeout)
		case res.Canceled:
			return res.Output, res.ExitCode, ctx.Err()
		}
		return res.Output, res.ExitCode, nil
	}
}

// setupTimeout bounds each setup command, as run_in_terminal's longest timeout did.
const setupTimeout = 300 * time.Second

// dirName is the scenario's output directory: its display name ("name #2" for a repeat).
func dirName(s result.Scenario) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, s.DisplayName())
}
