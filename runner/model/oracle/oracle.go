// Package oracle is a model that needs no server: it plays a task's reference solution,
// one call per step, proving that the task can be solved and its assertions can pass.
package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentrunner/runner/runner/model"
)

// FinalText is the oracle's answer once the reference calls are used up.
const FinalText = "The reference solution has no more steps."

// ErrNoReference is the oracle's answer on a task without a reference: it has nothing to
// play, and a run that went on would only report the task's assertions failing.
var ErrNoReference = errors.New("the task has no reference: (an imported task whose source has no solution script has none), so the oracle has nothing to play")

// Model plays reference calls. It keeps no state: the step is read from the request, so
// one Model serves any number of conversations and a retried step gets the same call.
type Model struct {
	name  string
	calls []model.ToolCall
}

// New returns an oracle for the reference calls (copied).
func New(calls []model.ToolCall) model.Model { return NewNamed("oracle", calls) }

// NewNamed is New for an oracle known by another name, e.g. "oracle:fail=0.3,seed=1", so
// a benchmark tells it apart from the plain oracle.
func NewNamed(name string, calls []model.ToolCall) model.Model {
	own := make([]model.ToolCall, len(calls))
	for i, c := range calls {
		own[i] = model.ToolCall{Name: c.Name, Arguments: append(json.RawMessage(nil), c.Arguments...)}
		if len(own[i].Arguments) == 0 {
			own[i].Arguments = json.RawMessage("{}")
		}
	}
	return &Model{name: name, calls: own}
}

// Name returns "oracle", or the name NewNamed gave.
func (m *Model) Name() string { return m.name }

// Step answers step i (the number of assistant messages already in the conversation) with
// reference call i, id "oracle_<i+1>", and with text and no call after the last one.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(m.calls) == 0 {
		return nil, ErrNoReference
	}
	step := req.Step() - 1 // index of the reference call
	if step >= len(m.calls) {
		return &model.Response{Content: FinalText, Model: "oracle"}, nil
	}
	call := m.calls[step]
	call.ID = fmt.Sprintf("oracle_%d", step+1)
	call.Arguments = append(json.RawMessage(nil), call.Arguments...) // the caller may keep and edit it
	return &model.Response{ToolCalls: []model.ToolCall{call}, Model: "oracle"}, nil
}
