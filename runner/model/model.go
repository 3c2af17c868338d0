// Package model defines the one call the agent loop makes to a language model, and the
// plain request and response types that every provider translates to and from.
package model

import (
	"context"
	"encoding/json"
	"time"

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

// ToolCall is one call the model asked for. Arguments are raw JSON as the provider sent
// them: an object, or a string holding one; the tool registry decodes both.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// FromText marks a call the model wrote in its text, read by runner/model/textcall,
	// rather than one the server returned as a tool call.
	FromText bool `json:"from_text,omitempty"`
}

// Options are sampling options from the task file. Providers map what they support.
type Options struct {
	Temperature *float64 `json:"temperature,omitempty" jsonschema_description:"Sampling temperature; 0 for the most deterministic answers."`
	Seed        *int     `json:"seed,omitempty" jsonschema_description:"Random seed, for reproducible sampling where the provider supports it."`
	NumCtx      int      `json:"num_ctx,omitempty" jsonschema_description:"Context window in tokens (Ollama's num_ctx)."`
	MaxTokens   int      `json:"max_tokens,omitempty" jsonschema_description:"Upper bound on tokens generated per response."`
	TopP        *float64 `json:"top_p,omitempty" jsonschema_description:"Nucleus sampling probability mass."`
}

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

// Usage is what a provider reports about one response.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedPromptTokens are the prompt tokens the provider served from its cache, where
	// its API says (OpenAI, Anthropic, Gemini): they cost less.
	CachedPromptTokens int `json:"cached_prompt_tokens,omitempty"`
	// EvalDuration is the provider's generation time, where it reports one (Ollama).
	EvalDuration result.Millis `json:"eval_duration_ms,omitempty"`
	// PromptEvalDuration is the server's time processing the prompt (Ollama).
	PromptEvalDuration result.Millis `json:"prompt_eval_duration_ms,omitempty"`
	// LoadDuration is the time the server took before the model could run the request
	// (Ollama's load_duration): scheduling it, and loading the model when that happened.
	// It is no sign of a load by itself: on a big model every request spends tens of
	// milliseconds here. runner bench tells loads apart through the server's /api/ps.
	LoadDuration result.Millis `json:"load_duration_ms,omitempty"`
	// TotalDuration is the server's whole time on the request (Ollama's total_duration):
	// what it spent beyond loading, the prompt and generation is waiting: for a free slot,
	// or for other requests' turn in a batch they share.
	TotalDuration result.Millis `json:"total_duration_ms,omitempty"`
}

// TokensPerSecond is the generation speed, from the provider's own timing when it has one.
func (u Usage) TokensPerSecond() float64 {
	if u.EvalDuration <= 0 || u.CompletionTokens == 0 {
		return 0
	}
	return float64(u.CompletionTokens) / u.EvalDuration.Seconds()
}

// Clamped is u as runner counts it: a server's answer is data, and a negative count or
// duration (which would lower the run's total, its cost and a budget) counts as 0, as do
// cached tokens beyond the prompt's (which would price uncached tokens below zero).
func (u Usage) Clamped() Usage {
	u.PromptTokens, u.CompletionTokens = max(u.PromptTokens, 0), max(u.CompletionTokens, 0)
	u.CachedPromptTokens = min(max(u.CachedPromptTokens, 0), u.PromptTokens)
	u.EvalDuration, u.PromptEvalDuration = max(u.EvalDuration, 0), max(u.PromptEvalDuration, 0)
	u.LoadDuration, u.TotalDuration = max(u.LoadDuration, 0), max(u.TotalDuration, 0)
	return u
}

// Add accumulates another response's usage, clamped (see Clamped), into sums that stop
// at their maximum rather than wrap.
func (u *Usage) Add(o Usage) {
	o = o.Clamped()
	u.PromptTokens = result.AddCount(u.PromptTokens, o.PromptTokens)
	u.CompletionTokens = result.AddCount(u.CompletionTokens, o.CompletionTokens)
	u.CachedPromptTokens = result.AddCount(u.CachedPromptTokens, o.CachedPromptTokens)
	u.EvalDuration = result.AddMillis(u.EvalDuration, o.EvalDuration)
	u.PromptEvalDuration = result.AddMillis(u.PromptEvalDuration, o.PromptEvalDuration)
	u.LoadDuration = result.AddMillis(u.LoadDuration, o.LoadDuration)
	u.TotalDuration = result.AddMillis(u.TotalDuration, o.TotalDuration)
}

// Response is one step's output.
type Response struct {
	Content   string     `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     Usage      `json:"usage"`
	// Model is the model name the provider reports.
	Model string `json:"model,omitempty"`
	// StopReason is why the server stopped generating, as it says it ("stop", "length"
	// when the token limit cut the answer off); "" when it does not say.
	StopReason string `json:"stop_reason,omitempty"`
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

// UnmarshalJSON reads usage as transcripts and cassettes store it, also ones written
// before durations were *_ms (eval_duration_ns, load_duration_ns).
func (u *Usage) UnmarshalJSON(b []byte) error {
	type plain Usage
	if err := json.Unmarshal(b, (*plain)(u)); err != nil {
		return err
	}
	return result.ReadLegacy(b,
		result.Legacy{Key: "eval_duration_ns", New: "eval_duration_ms", Unit: time.Nanosecond, To: &u.EvalDuration},
		result.Legacy{Key: "load_duration_ns", New: "load_duration_ms", Unit: time.Nanosecond, To: &u.LoadDuration})
}
