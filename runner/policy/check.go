package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
)

// DeniedResult is the tool result the model receives for a denied call: code DENIED,
// who denied it and why, and what to try instead, e.g.
// "Error: run_in_terminal was denied by approval.rules[2] (nothing is deleted in this
// task). Try another approach that does not need this call." The metadata carries the
// decision's source and rule for the transcript.
func DeniedResult(d Decision, call *tools.Call) tools.Result {
	name := call.Name
	if name == "" {
		name = call.Tool
	}
	by := d.By
	if by == "" {
		by = "the approval policy"
	}
	msg := fmt.Sprintf("%s was denied by %s", name, by)
	if d.Reason != "" {
		msg += " (" + d.Reason + ")"
	}
	suggestion := d.Suggestion
	if suggestion == "" {
		suggestion = "Try another approach that does not need this call."
	}
	res := tools.Fail(&tools.Error{Code: tools.CodeDenied, Message: msg, Suggestion: suggestion}).
		WithMeta("policy_source", d.Source)
	if d.Rule != "" {
		res = res.WithMeta("policy_rule", d.Rule)
	}
	return res
}

// CheckOptions adjust CheckCall.
type CheckOptions struct {
	// Now is the time rule expiry is judged against; zero means time.Now().
	Now time.Time
	// Workspace is where the call would run. Nil means a fresh empty temporary
	// directory, so nothing exists yet: a write is not an overwrite, a delete still
	// needs approval.
	Workspace *tools.Workspace
	// Home is what ~ means to command rules; empty means the user's home.
	Home string
}

// CheckCall decides one call as a run of t would, without running it: what
// `runner policy check TASK --tool NAME --args JSON` prints. name may be an alias; raw
// is the arguments as JSON. Command rules are included; ask mode behaves as rules (no
// terminal). It returns the decision and the policy's warnings; an error means the
// check itself could not be made (a bad policy, an unknown tool, invalid arguments):
// a usage error.
func CheckCall(ctx context.Context, t *task.Task, reg *tools.Registry, name string, raw json.RawMessage, opts CheckOptions) (Decision, []string, error) {
	offered := reg
	if len(t.Tools) > 0 {
		sub, err := reg.Subset(t.Tools...)
		if err != nil {
			return Decision{}, nil, fmt.Errorf("task %s: tools: %w", t.Path, err)
		}
		offered = sub
	}
	ws := opts.Workspace
	if ws == nil {
		dir, err := os.MkdirTemp("", "runner-policy-check-")
		if err != nil {
			return Decision{}, nil, fmt.Errorf("policy check: workspace: %w", err)
		}
		defer func() { _ = os.RemoveAll(dir) }() // best effort: a leftover temp file harms nothing
		ws, err = tools.OpenWorkspace(dir)
		if err != nil {
			return Decision{}, nil, fmt.Errorf("policy check: %w", err)
		}
		defer func() { _ = ws.Close() }() // a directory handle: Close loses no data
	}
	p, err := New(t.Approval, t.CommandRules, Options{Now: opts.Now, Home: opts.Home, Resolve: reg.Canonical})
	if err != nil {
		return Decision{}, nil, fmt.Errorf("task %s: %w", t.Path, err)
	}
	if _, _, ok := offered.Lookup(name); !ok {
		if _, _, known := reg.Lookup(name); known {
			return Decision{}, p.Warnings(), fmt.Errorf("tool %q is not among the task's tools (%v)", name, offered.Names())
		}
	}
	call, terr := offered.Prepare(name, raw)
	if terr != nil {
		msg := terr.Message
		if terr.Suggestion != "" {
			msg += ". " + terr.Suggestion
		}
		return Decision{}, p.Warnings(), fmt.Errorf("tool %s: %s", name, msg)
	}
	return p.Decide(ctx, call, ws), p.Warnings(), nil
}
