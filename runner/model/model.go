// Package model defines the one call the agent loop makes to a language model, and the
// plain request and response types that every provider translates to and from.
package model

import (
	"context"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
)

// Roles of conversation messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one conversation turn in a provider-neutral form.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName names the tool a tool message answers (Ollama and Gemini want it).
	ToolName string `json:"tool_name,omitempty"`
}

// ToolCall is one call the model asked for; Options are sampling options from the task
// file, which providers map as they can; Usage is what a provider reports about one
// response; Response is one step's output. They are records (transcripts and cassettes
// hold them as they are), so they live at the bottom, in runner/result.
type (
	ToolCall = result.ToolCall
	Options  = result.ModelOptions
	Usage    = result.ResponseUsage
	Response = result.Response
)

// Request is one step's input: the whole conversation and the tools on offer.
type Request struct {
	Messages []Message    `json:"messages"`
	Tools    []tools.Spec `json:"-"`
	Options  Options      `json:"options"`
	// External marks a request an external agent sent through runner's endpoint
	// (runner/endpoint): its system and user text holds what changes from run to run
	// (today's date, a session id), which a cassette's key masks (runner/model/replay).
	External bool `json:"-"`
}

// Step is the 1-based number of the step the request asks for: one more than the
// assistant messages already in the conversation. Providers derive call ids from it, and
// the oracle picks its reference call by it, so a retried step gets the same answer.
func (r *Request) Step() int { return StepOf(r.Messages) }

// StepOf is Request.Step for a bare conversation.
func StepOf(msgs []Message) int {
	n := 1
	for _, m := range msgs {
		if m.Role == RoleAssistant {
			n++
		}
	}
	return n
}

// StopLength is the StopReason of an answer cut off by the token limit.
const StopLength = "length"

// Model is a language model that can take one step of a conversation.
type Model interface {
	// Name returns the PROVIDER:MODEL name.
	Name() string
	// Step sends the conversation and returns the model's next message.
	Step(ctx context.Context, req *Request) (*Response, error)
}

// Find looks for an implementation of T in m or the models it wraps (retries, the
// text-call parser, a recorder, ...: each says what it wraps with Unwrap() Model): how a
// provider's own abilities (a pre-flight check, a probe, a loader) are found behind its
// wrappers.
func Find[T any](m Model) (T, bool) {
	for m != nil {
		if t, ok := m.(T); ok {
			return t, true
		}
		u, ok := m.(interface{ Unwrap() Model })
		if !ok {
			break
		}
		m = u.Unwrap()
	}
	var zero T
	return zero, false
}
