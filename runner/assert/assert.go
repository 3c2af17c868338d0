// Package assert checks a finished scenario against its task's assert: list. Each kind is
// a small type with a Check method, and a row of Registry (kinds.go) that carries all
// there is to the kind: its key, doc line, schema, decoder and checker. A new kind is its
// file plus its row.
package assert

import (
	"context"
	"fmt"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/workspace/door"
	"github.com/agentrunner/runner/tools"
)

// Run is what the assertions see of a finished scenario. A Run is not safe for
// concurrent Check calls: it lazily opens the workspace and shares the handle.
type Run struct {
	// Workspace is the absolute directory of the final workspace (verify files included).
	Workspace string
	// Completed reports whether task_complete was called.
	Completed bool
	// Summary is the summary given to task_complete.
	Summary string
	// Steps is the number of model responses.
	Steps int
	// Calls is every tool call, in order, executed or not.
	Calls []result.Call
	// Env is the task's environment, given to command checks.
	Env map[string]string
	// Wrap confines command checks (a sandbox); nil runs them directly.
	Wrap tools.CommandWrapper
	// Network and Limits are the task's, handed to Wrap as the agent's commands had them.
	Network bool
	Limits  tools.Limits
	// CacheDir is the run's shared build cache (tools.Workspace.CacheDir), and CacheSkip
	// what of it the task's layer leaves out (tools.Workspace.CacheSkip).
	CacheDir  string
	CacheSkip []string
	// Judge lets judge assertions open their model; nil makes them errors.
	Judge *JudgeEnv

	ws    *tools.Workspace
	wsErr error
	// dir is the final workspace through the door, which every read of it goes through.
	dir    *door.Dir
	dirErr error
}

// Checker is one assertion kind bound to its spec.
type Checker interface {
	// Check reports whether the assertion holds, and a message that says what was
	// expected and what was found, whether or not it passed.
	Check(ctx context.Context, run *Run) (passed bool, message string)
}

// detailed is a Checker that fills the whole result: a verdict, or an error that is not
// the agent's doing.
type detailed interface {
	checkInto(ctx context.Context, run *Run, r *result.Assertion)
}

// Check evaluates one assertion against a finished run.
func Check(ctx context.Context, a task.Assertion, run *Run) result.Assertion {
	defer run.closeWorkspace()
	return check(ctx, a, run)
}

// CheckAll evaluates every assertion in order, sharing one workspace handle.
func CheckAll(ctx context.Context, as []task.Assertion, run *Run) []result.Assertion {
	defer run.closeWorkspace()
	out := make([]result.Assertion, 0, len(as))
	for _, a := range as {
		out = append(out, check(ctx, a, run))
	}
	return out
}

func check(ctx context.Context, a task.Assertion, run *Run) result.Assertion {
	r := result.Assertion{Kind: a.Kind, Line: a.Pos.Line, Column: a.Pos.Column}
	c, err := New(a)
	if err != nil {
		r.Message = "invalid assertion: " + err.Error()
		return r
	}
	if d, ok := c.(detailed); ok {
		d.checkInto(ctx, run, &r)
		return r
	}
	if tc, ok := c.(testsChecker); ok {
		r.Passed, r.Message, r.Tests = tc.CheckTests(ctx, run)
		if len(r.Tests) > 0 {
			r.PassFraction = result.PassFraction(r.Tests)
		}
		return r
	}
	r.Passed, r.Message = c.Check(ctx, run)
	return r
}

// workspace opens the final workspace once per Check or CheckAll.
func (r *Run) workspace() (*tools.Workspace, error) {
	if r.ws == nil && r.wsErr == nil {
		if r.Workspace == "" {
			r.wsErr = fmt.Errorf("no workspace directory was given")
		} else {
			r.ws, r.wsErr = tools.OpenWorkspace(r.Workspace)
		}
	}
	return r.ws, r.wsErr
}

// files opens the final workspace's door once per Check or CheckAll.
func (r *Run) files() (*door.Dir, error) {
	if r.dir == nil && r.dirErr == nil {
		if r.Workspace == "" {
			r.dirErr = fmt.Errorf("no workspace directory was given")
		} else {
			r.dir, r.dirErr = door.Open(r.Workspace)
		}
	}
	return r.dir, r.dirErr
}

func (r *Run) closeWorkspace() {
	if r.ws != nil {
		_ = r.ws.Close() // read-only handle: nothing to flush
	}
	if r.dir != nil {
		_ = r.dir.Close() // a directory handle: nothing to flush
	}
	r.ws, r.wsErr, r.dir, r.dirErr = nil, nil, nil, nil
}
