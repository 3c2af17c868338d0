// Package toolbox builds what one task's tool calls need: the registry (the catalog plus
// the task's tools_defined), the toolset the agent is offered, the sandbox's command
// wrapper and the approval policy. One constructor, New, serves a run's scenario
// (runner/scenario's prepare stage), `runner tool` and `runner policy check` (both
// through runner/session), so a call a person tries or checks meets the very tools,
// sandbox and policy an agent's call would.
package toolbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
)

// Options are the run's parts a toolbox is built from, the same for every task.
type Options struct {
	// Catalog is the full tool registry; each task gets it plus its own tools.
	Catalog *tools.Registry
	// Sandbox returns the command wrapper for a sandbox mode (probed once per run); nil
	// builds no wrapper (the toolbox runs no command).
	Sandbox func(mode string) (tools.CommandWrapper, error)
	// Approval, when set, replaces every task's approval policy (--approval).
	Approval *task.Approval
	// Asker answers ask mode's questions (nil: no terminal); Now is the time rule expiry
	// is judged against (zero: time.Now()).
	Asker policy.Asker
	Now   time.Time
}

// Toolbox is what one task's tool calls need.
type Toolbox struct {
	// Registry is the catalog plus the task's tools_defined; Toolset is what the agent is
	// offered: the task's tools:, or every tool without it. With MCP servers, whose tools
	// exist only once they run, Toolset is the registry until the scenario starts them.
	Registry, Toolset *tools.Registry
	// Sandbox confines the task's commands: nil with an environment: (its container does)
	// or without Options.Sandbox.
	Sandbox tools.CommandWrapper
	// Approval is the task's approval block after the run's override; Policy decides
	// each call by it and the task's command rules.
	Approval task.Approval
	Policy   *policy.Policy
}

// New builds t's toolbox. An error names the part that could not be built: tools_defined
// or tools: (task files are checked at load, so rarely), the sandbox (its probe failed),
// or the approval policy.
func New(t *task.Task, o Options) (*Toolbox, error) {
	b := &Toolbox{Approval: t.Approval}
	if o.Approval != nil {
		b.Approval = *o.Approval
	}
	var err error
	if b.Registry, err = Registry(o.Catalog, t); err != nil {
		return nil, err
	}
	b.Toolset = b.Registry                 // no tools: key offers every tool
	if t.Tools != nil && len(t.MCP) == 0 { // with MCP servers, once they run
		if b.Toolset, err = b.Registry.Subset(t.Tools...); err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
	}
	if t.Environment == nil && o.Sandbox != nil { // a container confines commands itself
		if b.Sandbox, err = o.Sandbox(t.Sandbox); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	// policy.New's error says "approval policy: ...".
	if b.Policy, err = policy.New(b.Approval, t.CommandRules, policy.Options{Now: o.Now, Asker: o.Asker, Resolve: Resolver(t, b.Registry)}); err != nil {
		return nil, err
	}
	return b, nil
}

// Resolver resolves rule tool names for the policy: the registry's tools, and the MCP
// servers' tools, which exist only once the servers run.
func Resolver(t *task.Task, reg *tools.Registry) func(string) (string, bool) {
	if len(t.MCP) == 0 {
		return reg.Canonical
	}
	return func(name string) (string, bool) {
		if t.MCPTool(name) {
			return name, true
		}
		return reg.Canonical(name)
	}
}

// Check decides the call name(raw) as the task's scenario would, without running it:
// what `runner policy check` prints. name may be an alias. ws is where the call would run;
// nil is a fresh empty directory, so nothing exists yet (a write is not an overwrite, a
// delete still needs approval). Command rules are included; ask mode behaves as rules (no
// terminal). An error means the check itself could not be made (an unknown tool, one the
// task does not offer, invalid arguments).
func (b *Toolbox) Check(ctx context.Context, name string, raw json.RawMessage, ws *tools.Workspace) (policy.Decision, error) {
	if ws == nil {
		dir, err := os.MkdirTemp("", "runner-policy-check-")
		if err != nil {
			return policy.Decision{}, fmt.Errorf("policy check: workspace: %w", err)
		}
		defer func() { _ = os.RemoveAll(dir) }() // best effort: a leftover temp file harms nothing
		if ws, err = tools.OpenWorkspace(dir); err != nil {
			return policy.Decision{}, fmt.Errorf("policy check: %w", err)
		}
		defer func() { _ = ws.Close() }() // a directory handle: Close loses no data
	}
	if _, _, ok := b.Toolset.Lookup(name); !ok {
		if _, _, known := b.Registry.Lookup(name); known {
			return policy.Decision{}, fmt.Errorf("tool %q is not among the task's tools (%v)", name, b.Toolset.Names())
		}
	}
	call, terr := b.Toolset.Prepare(name, raw)
	if terr != nil {
		msg := terr.Message
		if terr.Suggestion != "" {
			msg += ". " + terr.Suggestion
		}
		return policy.Decision{}, fmt.Errorf("tool %s: %s", name, msg)
	}
	return b.Policy.Decide(ctx, call, ws), nil
}
