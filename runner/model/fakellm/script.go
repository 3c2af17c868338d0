// Package fakellm serves scripted fake Ollama, OpenAI-compatible (Chat Completions and
// Responses), Anthropic Messages and Gemini generateContent APIs on one HTTP server,
// built on the real client libraries' wire types where they have them, for unit tests, for
// end-to-end tests of the built binary, and for benchmarks. A script is a list of replies
// (tool calls, text, or a fault) played in order, one per chat request.
package fakellm

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Fault is something going wrong in place of an answer.
type Fault string

// The faults a reply can play.
const (
	// FaultStatus answers with HTTP Status (default 500), the API's error body holding
	// Message, and a Retry-After header when RetryAfter is set.
	FaultStatus Fault = "status"
	// FaultDrop hijacks the connection and closes it before any response.
	FaultDrop Fault = "drop"
	// FaultTruncate sends the headers and part of the body, then closes the connection.
	FaultTruncate Fault = "truncate"
	// FaultMalformed answers 200 with a body that is not valid JSON.
	FaultMalformed Fault = "malformed_body"
)

// Call is one scripted tool call.
type Call struct {
	// ID is the call id; default "call_<request>_<n>".
	ID string `json:"id,omitempty"`
	// Name is the tool name (an unknown one tests the loop's recovery).
	Name string `json:"name"`
	// Args is a JSON object (default {}).
	Args json.RawMessage `json:"args,omitempty"`
	// RawArgs, when set, is sent verbatim as the arguments string instead of Args: set it
	// to invalid JSON to script malformed arguments.
	RawArgs *string `json:"raw_args,omitempty"`
}

// Usage is the token usage to report; zero fields get defaults.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	// CachedPromptTokens is the part of the prompt served from a cache (OpenAI's
	// prompt_tokens_details.cached_tokens).
	CachedPromptTokens int      `json:"cached_prompt_tokens,omitempty"`
	EvalDuration       Duration `json:"eval_duration,omitempty"`
}

// Reply is one scripted answer: tool calls and/or text, or a fault.
type Reply struct {
	Text      string `json:"text,omitempty"`
	ToolCalls []Call `json:"tool_calls,omitempty"`

	Fault      Fault  `json:"fault,omitempty"`
	Status     int    `json:"status,omitempty"`
	Message    string `json:"message,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`

	// Delay holds the answer back (to trip a request timeout); the wait ends early when
	// the client goes away.
	Delay Duration `json:"delay,omitempty"`
	// ArgsAs overrides the API's native argument form: "string" (OpenAI's) or "object"
	// (Ollama's). Servers of both kinds exist; the providers must accept either.
	ArgsAs string `json:"args_as,omitempty"`
	Usage  *Usage `json:"usage,omitempty"`
}

// Route gives conversations whose first user message is, or else contains, Match their own
// replies, so that one server can drive several scenarios at once. A message two routes
// contain, neither exactly, is answered with an error (HTTP 400), never a guess.
type Route struct {
	Match   string  `json:"match"`
	Replies []Reply `json:"replies"`
	Repeat  bool    `json:"repeat,omitempty"`
	// Model, when set, limits the route to chat requests for that model, so one server
	// can script several models that behave differently (a benchmark's fake).
	Model string `json:"model,omitempty"`
	// Offers, when set, limits the route to requests offering a tool of that name, so one
	// server can script agents that each call their own tools on the same model and task
	// (runner's write_file, Claude Code's Write, Codex's exec_command).
	Offers string `json:"offers,omitempty"`
	// Cycle, when set, replaces Replies: the route's n-th conversation plays
	// Cycle[n % len(Cycle)], e.g. a model that solves a task only some of the time. A
	// conversation is known to be new when its assistant turns go down, so give every
	// sequence at least two replies.
	Cycle [][]Reply `json:"cycle,omitempty"`
}

// Script is what a Server plays.
type Script struct {
	// Replies are played in order, one per chat request of a conversation.
	Replies []Reply `json:"replies"`
	// Repeat plays the last reply forever once the others are used up (a model that
	// never finishes). Otherwise an exhausted script answers with ExhaustedText.
	Repeat bool `json:"repeat,omitempty"`
	// Routes are tried before Replies (see Route for which one a conversation takes).
	Routes []Route `json:"routes,omitempty"`
	// Models lists the models /api/show knows, with their capabilities. Nil means every
	// name exists with "completion" and "tools". A name missing from a non-nil map is a
	// model that is not pulled (404).
	Models map[string][]string `json:"models,omitempty"`
	// ContextLength is the context length /api/show and /api/ps report (default 4096).
	ContextLength int `json:"context_length,omitempty"`
	// Placements are where /api/ps says each model is held, by name: bytes in all and in
	// GPU memory. A model not listed is 1 GiB, all of it on GPU.
	Placements map[string]Placement `json:"placements,omitempty"`
	// LoadDelay is how long a load takes: a chat request for a model that is not loaded,
	// or loaded with another num_ctx, waits it and reports it as load_duration, as Ollama
	// does when it loads a model again.
	LoadDelay Duration `json:"load_delay,omitempty"`
	// ScheduleTime is the load_duration a request reports when the model is loaded
	// already (default 1ms): Ollama's counts reading the model's metadata and scheduling
	// it, tens of milliseconds on a big model.
	ScheduleTime Duration `json:"schedule_time,omitempty"`
	// Bench is the zero-latency mode for benchmarks: requests are not recorded and only
	// the stream flag is decoded, and every request takes the next reply of one global
	// sequence (no per-conversation tracking).
	Bench bool `json:"bench,omitempty"`
}

// Placement is a loaded model's memory as /api/ps reports it.
type Placement struct {
	Size     int64 `json:"size"`
	SizeVRAM int64 `json:"size_vram"`
}

// ExhaustedText is the answer once a script without Repeat has run out.
const ExhaustedText = "fakellm: the script has no more replies."

// LoadScript reads a JSON script file.
func LoadScript(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("read script: %w", err)
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		return Script{}, fmt.Errorf("parse script %s: %w", path, err)
	}
	return s, nil
}

// Duration is a time.Duration that reads and writes JSON as "1.5s" (or nanoseconds).
type Duration time.Duration

// String formats like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1.5s" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration: want a string like \"2s\" or nanoseconds: %w", err)
	}
	*d = Duration(n)
	return nil
}

// Helpers for building scripts in Go.

// ToolCall is a reply with one tool call whose arguments are args marshalled.
func ToolCall(name string, args any) Reply {
	return Reply{ToolCalls: []Call{NewCall(name, args)}}
}

// NewCall is a Call whose arguments are args marshalled (a map or struct).
func NewCall(name string, args any) Call {
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("fakellm: arguments of %s do not marshal: %v", name, err))
	}
	return Call{Name: name, Args: b}
}

// Text is a reply with text and no tool call.
func Text(s string) Reply { return Reply{Text: s} }

// Status is an HTTP error reply.
func Status(code int, message string) Reply {
	return Reply{Fault: FaultStatus, Status: code, Message: message}
}

// TooMany is a 429 reply with a Retry-After header.
func TooMany(retryAfter string) Reply {
	return Reply{Fault: FaultStatus, Status: 429, Message: "rate limit exceeded", RetryAfter: retryAfter}
}

// Drop is a reply that closes the connection without answering.
func Drop() Reply { return Reply{Fault: FaultDrop} }

// Malformed is a reply whose body is not JSON.
func Malformed() Reply { return Reply{Fault: FaultMalformed} }

// MalformedArgs is a reply calling name with an arguments string that is not JSON.
func MalformedArgs(name, raw string) Reply {
	return Reply{ToolCalls: []Call{{Name: name, RawArgs: &raw}}}
}
