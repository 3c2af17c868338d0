package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentrunner/runner/runner/agent"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/toolbox"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
	"github.com/agentrunner/runner/tools/exec"
)

// Toolbox builds t's toolbox (toolbox.New: registry, toolset, sandbox, policy) from the
// session's parts: its catalog, its sandboxes (each mode probed once), --approval and the
// terminal of ask mode. Every scenario of the session builds its own from the very same
// parts (Scenario's options carry them); `runner tool` (RunCall) and `runner policy check`
// (CheckCall) come through here.
func (s *Session) Toolbox(t *task.Task) (*toolbox.Toolbox, error) {
	return toolbox.New(t, s.toolboxOptions())
}

// toolboxOptions are the session's parts of every toolbox.
func (s *Session) toolboxOptions() toolbox.Options {
	o := toolbox.Options{Catalog: s.Catalog, Asker: s.Asker}
	if s.Sandboxes != nil {
		o.Sandbox = s.Sandboxes.Get
	}
	if s.opts.Approval != "" {
		o.Approval = &task.Approval{Mode: s.opts.Approval}
	}
	return o
}

// ToolCall is the one call of `runner tool`: decided and sandboxed as an agent's call in a
// task with default settings would be.
type ToolCall struct {
	// Tool names the tool (an alias too); Args are its arguments, a JSON object.
	Tool string
	Args json.RawMessage
	// Workspace is the directory the call works in; Sandbox the mode that confines a
	// command; Network lets a command and fetch_webpage reach the network.
	Workspace string
	Sandbox   string
	Network   bool
	// Approval is the mode of the call's policy: task.ModeAuto (what a task without
	// approval settings gets: the built-in command rules and dynamic approval),
	// task.ModeReadOnly, or "" for no policy at all (the person running it approves it).
	Approval string
	// Notes receives the sandbox's choice, as a run reports it.
	Notes io.Writer
}

// KnownTool reports whether the catalog has the tool name (or an alias of it).
func KnownTool(name string) bool {
	_, _, ok := catalog.Default().Lookup(name)
	return ok
}

// RunCall runs c through the agent loop's own path (agent.Call: prepare, decide, execute)
// with the toolbox a task of c's settings gets. Only a command tool probes the sandbox
// (a read_file has nothing to confine: its note would be noise).
func RunCall(ctx context.Context, c ToolCall) (tools.Result, error) {
	s := &Session{Catalog: catalog.Default(), Sandboxes: NewSandboxes(c.Sandbox, c.Notes)}
	o := s.toolboxOptions()
	if _, canonical, _ := s.Catalog.Lookup(c.Tool); !runsCommands(canonical) {
		o.Sandbox = nil
	}
	approval := c.Approval
	if approval == "" {
		approval = task.ModeAuto // built, then left out: no policy
	}
	b, err := toolbox.New(&task.Task{Sandbox: c.Sandbox, Network: c.Network, Approval: task.Approval{Mode: approval}}, o)
	if err != nil {
		return tools.Result{}, err
	}
	ws, err := tools.OpenWorkspace(c.Workspace)
	if err != nil {
		return tools.Result{}, err
	}
	defer func() { _ = ws.Close() }() // a directory handle: Close loses no data
	ws.Network, ws.Sandbox = c.Network, b.Sandbox
	var decider agent.Decider
	if c.Approval != "" {
		decider = b.Policy
	}
	return agent.Call(ctx, b.Registry, decider, ws, c.Tool, c.Args), nil
}

// runsCommands reports whether the canonical tool runs commands: the only tools a
// sandbox confines.
func runsCommands(canonical string) bool {
	for _, t := range exec.Tools() {
		if t.Spec().Name == canonical {
			return true
		}
	}
	return false
}

// PolicyCheck is the one call `runner policy check` decides.
type PolicyCheck struct {
	// Task is the task file whose policy decides (its first case).
	Task string
	// Tool and Args are the call: a tool's name or alias, and its arguments as JSON.
	Tool string
	Args json.RawMessage
	// Workspace is where the call would run ("": a fresh empty directory).
	Workspace string
}

// CheckCall decides c as a scenario of its task would, with the toolbox the scenario
// gets, without running it. It returns the decision and the policy's warnings; an error
// means the check could not be made (the task does not load, the tool is an MCP server's,
// unknown or not offered, the arguments are invalid): nothing was decided.
func CheckCall(ctx context.Context, c PolicyCheck) (policy.Decision, []string, error) {
	s := &Session{Catalog: catalog.Default()}
	t, err := LoadTask(c.Task, s.Catalog)
	if err != nil {
		return policy.Decision{}, nil, err
	}
	if t.MCPTool(c.Tool) {
		return policy.Decision{}, nil, fmt.Errorf("%s is an MCP server's tool; its schema and risk are known only once the server runs, in `runner run`", c.Tool)
	}
	var ws *tools.Workspace
	if c.Workspace != "" {
		if ws, err = tools.OpenWorkspace(c.Workspace); err != nil {
			return policy.Decision{}, nil, err
		}
		defer func() { _ = ws.Close() }() // a directory handle: Close loses no data
	}
	b, err := s.Toolbox(t) // no sandbox: nothing runs
	if err != nil {
		return policy.Decision{}, nil, fmt.Errorf("task %s: %w", t.Path, err)
	}
	d, err := b.Check(ctx, c.Tool, c.Args, ws)
	return d, b.Policy.Warnings(), err
}
