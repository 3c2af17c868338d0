package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentrunner/runner/runner/agent"
	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/toolbox"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/tools"
	toolexec "github.com/agentrunner/runner/tools/exec"
	"github.com/agentrunner/runner/tools/exec/container"
	confinement "github.com/agentrunner/runner/tools/exec/sandbox"
)

// prepared is what the prepare stage hands the agent: the model, the settings after the
// run's overrides, the tools and policy, and a populated workspace with its snapshot.
// Everything it started (workspace, container, MCP servers, the deadline) is undone by
// close, whatever stage the scenario ended in.
type prepared struct {
	// parent is the run's context (only an interrupt ends it); ctx adds the scenario's
	// timeout and is the agent's.
	parent, ctx context.Context
	model       model.Model
	agent       kinds.Kind // what acts: the loop, or an external program
	system      string
	maxSteps    int
	timeout     time.Duration
	approval    task.Approval
	// reg is the catalog plus the task's own tools; toolset what the agent is offered.
	reg, toolset *tools.Registry
	sandbox      tools.CommandWrapper
	policy       *policy.Policy
	decider      agent.Decider
	dir          string
	ws           *tools.Workspace
	env          *container.Container // the task's container, nil without environment:
	box          *agentBox            // the endpoint's way into env for an external agent
	manifest     *workspace.Manifest
	// imageID is the image env started from, by id (verify.fresh_container only).
	imageID string
	// texts is the snapshot's text content, for the diffs of what the agent changed: in
	// this process's memory, out of the agent's reach (nil when it could not be taken).
	texts *workspace.Texts
	// stopMCP stops the task's MCP servers (safe to call twice); the agent stage calls it
	// before the verify files arrive.
	stopMCP func()
	cleanup []func()
}

// onClose registers fn to run at close, in reverse order of registration.
func (p *prepared) onClose(fn func()) { p.cleanup = append(p.cleanup, fn) }

// close undoes what prepare started, last first.
func (p *prepared) close() {
	for i := len(p.cleanup) - 1; i >= 0; i-- {
		p.cleanup[i]()
	}
	p.cleanup = nil
}

// prepare is the first stage: output directory and transcript, the model, the task's
// settings with the run's overrides, tools, sandbox, policy, then the workspace (container,
// setup, MCP servers) and its snapshot. An error is the scenario's: it errors.
func (r *runState) prepare(ctx context.Context, repeat int, p *prepared) error {
	p.parent, p.stopMCP = ctx, func() {}
	if err := r.openOutput(); err != nil {
		return err
	}
	if err := r.settle(repeat, p); err != nil {
		return err
	}
	return r.prepareWorkspace(p)
}

// openOutput creates the scenario's output directory and its transcript.
func (r *runState) openOutput() error {
	r.out = filepath.Join(r.opts.OutDir, dirName(r.res))
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	tr, err := transcript.Create(filepath.Join(r.out, "transcript.jsonl"), transcript.Options{Now: r.now, NoSync: r.opts.NoSync})
	if err != nil {
		return err
	}
	r.tr = tr
	r.res.Transcript = tr.Path()
	return nil
}

// settle opens the model, applies the run's overrides to the task's limits and approval,
// builds the toolset, sandbox and policy, and records the start event.
func (r *runState) settle(repeat int, p *prepared) error {
	t, opts := r.t, r.opts
	m, err := opts.Model(t, repeat)
	if err != nil {
		return err
	}
	p.model = opts.Budget.Wrap(m)
	r.res.Model = m.Name()
	p.maxSteps, p.timeout = t.MaxSteps, t.Timeout
	if opts.MaxSteps > 0 {
		p.maxSteps = opts.MaxSteps
	}
	if opts.Timeout > 0 {
		p.timeout = opts.Timeout
	}
	// The one constructor of what a task's tool calls need (runner tool and runner policy
	// check build theirs with it too, through session).
	b, err := toolbox.New(t, toolbox.Options{Catalog: opts.Catalog, Sandbox: opts.Sandbox, Approval: opts.Approval, Asker: opts.Asker, Now: r.now()})
	if err != nil {
		return err
	}
	p.reg, p.toolset, p.sandbox, p.approval, p.policy = b.Registry, b.Toolset, b.Sandbox, b.Approval, b.Policy
	if p.sandbox != nil {
		r.res.Sandbox = p.sandbox.Name()
		r.res.SandboxGaps = confinement.Gaps(p.sandbox, t.Network)
	}
	if p.agent, err = r.agentKind(); err != nil {
		return err
	}
	r.agent = p.agent
	p.system = t.System
	tools := startTools(t, p.toolset)
	if p.agent.Builtin && p.system == "" {
		p.system = agent.DefaultSystemPrompt // what the loop sends; the transcript says so
	}
	var agentName string
	if !p.agent.Builtin {
		// The agent brings its own system prompt and tools: its requests record them.
		tools, agentName = nil, p.agent.Name
		r.res.Agent = agentName
	}
	_ = r.record(0, transcript.Start{
		FormatVersion: transcript.FormatVersion,
		Task:          t.Name, File: t.Path, Model: m.Name(), Agent: agentName, Repeat: repeat, System: p.system, Prompt: t.Prompt,
		Tools: tools, Options: t.ModelOptions, MaxSteps: p.maxSteps, Timeout: p.timeout.String(),
		Approval: approvalRecord(p.approval), Sandbox: r.res.Sandbox, SandboxGaps: r.res.SandboxGaps, Network: t.Network,
		Limits: result.Limits(t.Limits), Warnings: p.policy.Warnings(),
	})
	return nil
}

// approvalRecord is the approval policy as the start event records it.
func approvalRecord(a task.Approval) result.Approval {
	rec := result.Approval{Mode: a.Mode, Default: a.Default}
	for _, r := range a.Rules {
		rec.Rules = append(rec.Rules, result.ApprovalRule{Tool: r.Tool, Match: r.Match, Action: r.Action, Reason: r.Reason,
			Expires: r.Expires, Disabled: r.Disabled, Pos: result.Position(r.Pos)})
	}
	return rec
}

// prepareWorkspace creates and opens the workspace, starts the task's container, runs
// the setup, starts the MCP servers and takes the snapshot the agent's changes are found
// against. The scenario's timeout starts here; building an image is not the agent's time.
func (r *runState) prepareWorkspace(p *prepared) error {
	t, opts := r.t, r.opts
	dir, err := workspace.Create(opts.WorkspaceParent, t.Name)
	if err != nil {
		return err
	}
	p.dir = dir
	if opts.KeepWorkspaces {
		r.res.Workspace = dir
	} else {
		p.onClose(func() { _ = workspace.Remove(dir) })
	}
	if p.ws, err = tools.OpenWorkspace(dir); err != nil {
		return err
	}
	ws := p.ws
	p.onClose(func() { _ = ws.Close() })
	p.ws.Env, p.ws.Network, p.ws.Limits, p.ws.Sandbox, p.ws.CacheDir = t.Env, t.Network, t.Limits, p.sandbox, opts.CacheDir
	p.ws.CacheSkip = r.cacheSkip()

	ctx, cancel := context.WithTimeout(p.parent, p.timeout)
	p.ctx = ctx
	p.onClose(cancel)
	if t.Environment != nil {
		var mounts []container.Mount
		if !p.agent.Builtin { // its way to the endpoint is bound in when the container starts
			if p.box, err = r.openAgentBox(); err != nil {
				return fmt.Errorf("agent %s: %w", p.agent.Name, err)
			}
			p.onClose(p.box.close)
			mounts = p.box.mounts
		}
		// only Ctrl-C stops the build (p.parent); the start is under the timeout
		if p.env, p.imageID, err = r.startEnvironment(p.parent, ctx, dir, mounts); err != nil {
			return fmt.Errorf("environment: %w", err)
		}
		env := p.env
		p.onClose(func() { r.stopEnvironment(ctx, env) })
		p.ws.Sandbox, p.ws.Mount, p.sandbox, r.res.Sandbox = env, env.Workdir(), env, env.Name()
	}
	if err := workspace.Populate(ctx, t, dir, r.setupCommand(p.ws), func(s workspace.Step) {
		_ = r.record(0, transcript.Setup(s))
	}); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if len(t.MCP) > 0 {
		var stop func()
		if _, p.toolset, stop, err = r.startMCP(ctx, p.ws, p.reg); err != nil {
			return err
		}
		p.stopMCP = stop
		p.onClose(stop)
	}
	return r.snapshot(p)
}

// snapshot records the workspace as the agent finds it: what the agent changes is found
// by comparing with it, and verify.protect guards its protected paths.
func (r *runState) snapshot(p *prepared) error {
	protect, err := workspace.NewProtect(r.t.Verify.Protect)
	if err != nil {
		return fmt.Errorf("verify.protect: %w", err)
	}
	if p.manifest, err = workspace.Snapshot(p.ctx, p.dir, protect); err != nil {
		return err
	}
	// For reading only: without it the pages list the changed files without diffs.
	p.texts, _ = p.manifest.Texts(p.ctx, p.dir, workspace.DefaultTextLimits)
	p.decider = p.policy
	if protect != nil {
		p.decider = protectDecider{next: p.policy, protect: protect, manifest: p.manifest}
	}
	return nil
}

// setupCommand runs setup commands as the agent's commands run (tools/exec.RunShell), so
// they get the same environment, limits and sandbox; but they, the task's own code run
// before any agent, may write the shared build cache itself, which warms it for every
// later scenario and run (tools.Workspace.CacheWritable).
func (r *runState) setupCommand(ws *tools.Workspace) workspace.CommandFunc {
	sw := ws.View()
	sw.CacheWritable = true
	return func(ctx context.Context, _ string, command string, _ map[string]string) (string, int, error) {
		res, err := toolexec.RunShell(ctx, sw, command, setupTimeout)
		switch {
		case err != nil:
			return "", -1, err
		case res.TimedOut && res.Stuck.String() != "":
			return res.Output, res.ExitCode, fmt.Errorf("timed out after %s while %s", setupTimeout, res.Stuck)
		case res.TimedOut:
			return res.Output, res.ExitCode, fmt.Errorf("timed out after %s", setupTimeout)
		case res.Canceled:
			return res.Output, res.ExitCode, ctx.Err()
		}
		return res.Output, res.ExitCode, nil
	}
}

// cacheSkip is what of the shared cache the task's layers leave out (Options.CacheSkip).
func (r *runState) cacheSkip() []string {
	if r.opts.CacheSkip == nil {
		return nil
	}
	return r.opts.CacheSkip(r.t)
}

// setupTimeout bounds each setup command, as run_in_terminal's longest timeout did.
const setupTimeout = 300 * time.Second
