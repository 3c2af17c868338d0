package transcript

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/agentrunner/runner/runner/result"
)

// FormatVersion is the version of the transcript format, recorded in the start event.
// 2: the usage's durations are *_ms like every other (version 1's eval_duration_ns and
// load_duration_ns still read).
const FormatVersion = 2

// The payloads of the events, one type per event type: the writers (runner/agent,
// runner/scenario), the reader (Event.Payload) and the JSON Schema (runner schema
// transcript) all use these. They are made of records (runner/result) and nothing of the
// runtime: a writer converts what is not a record already (a tools.Result, a
// task.Approval) where it writes.
type (
	// Start is the resolved configuration, including everything the model was sent
	// besides the conversation itself.
	Start struct {
		// FormatVersion is the transcript format's version (FormatVersion).
		FormatVersion int    `json:"format_version"`
		Task          string `json:"task"`
		File          string `json:"file"`
		Model         string `json:"model"`
		// Agent is the external agent that acts (runner/agent/kinds); "" for the loop.
		Agent  string `json:"agent,omitempty"`
		Repeat int    `json:"repeat"`
		// System is the system prompt as sent (the default one when the task has none);
		// Prompt is the user prompt.
		System string `json:"system"`
		Prompt string `json:"prompt"`
		// Tools are the names of the tool specs offered to the model.
		Tools []string `json:"tools"`
		// Options are the model options sent with every request.
		Options result.ModelOptions `json:"options"`
		// MaxSteps and Timeout are the effective limits (flags override the task's).
		MaxSteps int             `json:"max_steps"`
		Timeout  string          `json:"timeout"`
		Approval result.Approval `json:"approval"`
		Sandbox  string          `json:"sandbox,omitempty"`
		// SandboxGaps is what the sandbox does not confine on this machine.
		SandboxGaps []string      `json:"sandbox_gaps,omitempty"`
		Network     bool          `json:"network"`
		Limits      result.Limits `json:"limits"`
		Warnings    []string      `json:"warnings,omitempty"`
	}
	// Setup is a workspace setup command.
	Setup result.SetupStep
	// Request is a model request: the conversation's length and, in Sent, the messages
	// added since the previous request, so the transcript holds what the model was sent
	// without repeating the whole conversation at every step.
	Request struct {
		Messages int    `json:"messages"`
		Last     string `json:"last_role"`
		Sent     []Sent `json:"sent,omitempty"`
		// Tools are the names of the tools an external agent's request offers, when they
		// differ from its previous request's (the loop's are in start).
		Tools []string `json:"tools,omitempty"`
		// Dropped are the tools such a request offers that runner's model is not given
		// (hosted tools, such as web_search, which a provider runs, not the agent).
		Dropped []string `json:"dropped,omitempty"`
		// Refused says why runner's endpoint refused an external agent's request before
		// any model saw it (max_steps, a body it could not read): no step.
		Refused string `json:"refused,omitempty"`
	}
	// Sent is one message added to the conversation. Content is kept for messages no
	// other event holds (the prompt is in start, a tool's result in its tool_call, the
	// model's own text in its response): only its size and the call it answers are kept
	// for those.
	Sent struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id,omitempty"`
		Bytes      int    `json:"bytes"`
		Content    string `json:"content,omitempty"`
	}
	// Response is a model response.
	Response struct {
		Content   string               `json:"content,omitempty"`
		ToolCalls []result.ToolCall    `json:"tool_calls,omitempty"`
		Usage     result.ResponseUsage `json:"usage"`
		Duration  result.Millis        `json:"duration_ms"`
		TokPerSec float64              `json:"tokens_per_second,omitempty"`
		// StopReason is the server's reason for ending the answer ("length": the token
		// limit cut it off).
		StopReason string `json:"stop_reason,omitempty"`
	}
	// ModelError is a failed model request.
	ModelError struct {
		Error    string        `json:"error"`
		Duration result.Millis `json:"duration_ms"`
	}
	// Retry is a failed model request that will be retried.
	Retry struct {
		Attempt int           `json:"attempt"` // the attempt that failed, from 1
		Error   string        `json:"error"`
		Wait    result.Millis `json:"wait_ms"` // the backoff before the next attempt
	}
	// Decision is the approval policy's decision about a tool call.
	Decision struct {
		ID       string          `json:"id"`
		Tool     string          `json:"tool"`
		Decision result.Decision `json:"decision"`
	}
	// ToolCall is a tool call with its arguments, result and duration.
	ToolCall struct {
		ID       string            `json:"id"`
		Name     string            `json:"name"`
		Tool     string            `json:"tool,omitempty"`
		Args     json.RawMessage   `json:"args"`
		Result   result.ToolResult `json:"result"`
		Duration result.Millis     `json:"duration_ms"`
	}
	// Reminder is the loop reminding the model to call a tool.
	Reminder struct {
		Content string `json:"content"`
	}
	// Assertion is an assertion's outcome.
	Assertion result.Assertion
	// FilesChanged is what the agent did to the workspace's files.
	FilesChanged result.FileChanges
	// MCP is an MCP server started (with its tools) or stopped (with its stderr).
	MCP struct {
		Server string   `json:"server"`
		Argv   []string `json:"argv,omitempty"`
		Tools  []string `json:"tools,omitempty"`
		// Stopped marks the event written when the server is stopped, with its stderr.
		Stopped bool   `json:"stopped,omitempty"`
		Stderr  string `json:"stderr,omitempty"`
	}
	// Judge is a judge assertion's request and verdict.
	Judge struct {
		Line    int             `json:"line"`
		Model   string          `json:"model"`
		Prompt  string          `json:"prompt"`
		Verdict *result.Verdict `json:"verdict,omitempty"`
		Passed  bool            `json:"passed"`
		Error   string          `json:"error,omitempty"`
		// Response is the judge's reply when its verdict was malformed; Text its prose
		// answers when it never called the verdict tool.
		Response *result.Response `json:"response,omitempty"`
		Text     []string         `json:"text,omitempty"`
	}
	// Environment is a task's container, started: the agent's, or with
	// verify.fresh_container the one verification runs in (Verify), from ImageID.
	Environment struct {
		Engine    string        `json:"engine"`
		Image     string        `json:"image"`
		ImageID   string        `json:"image_id,omitempty"`
		Verify    bool          `json:"verify,omitempty"`
		Container string        `json:"container"`
		Workdir   string        `json:"workdir"`
		VerifyDir string        `json:"verify_dir"`
		RunID     string        `json:"run_id"`
		Build     result.Millis `json:"build_ms,omitempty"`
		Start     result.Millis `json:"start_ms"`
	}
	// Agent is an external agent program (runner/agent/kinds): started, with its kind,
	// command line and the endpoint it was given, or, with Exited, ended, with its exit
	// status, how its row read it and the tail of its output.
	Agent struct {
		Kind     string   `json:"kind"`
		Argv     []string `json:"argv,omitempty"`
		Protocol string   `json:"protocol,omitempty"`
		// Endpoint is runner's endpoint as the agent reaches it (its base URL).
		Endpoint string `json:"endpoint,omitempty"`
		Exited   bool   `json:"exited,omitempty"`
		ExitCode int    `json:"exit_code,omitempty"`
		// Finished is the row's reading of the exit: the agent says it did the job.
		Finished bool   `json:"finished,omitempty"`
		Reason   string `json:"reason,omitempty"`
		// Killed says runner ended it (the timeout, an interrupt, max_steps reached).
		Killed bool `json:"killed,omitempty"`
		// Output is the tail of what it wrote on stdout and stderr.
		Output string `json:"output,omitempty"`
	}
	// End is the scenario's final status.
	End struct {
		Status   result.Status     `json:"status"`
		Stop     result.StopReason `json:"stop_reason"`
		Reason   string            `json:"reason"`
		Steps    int               `json:"steps"`
		Duration result.Millis     `json:"duration_ms"`
	}
)

// Payload is the data of one event. Type names its event type, so Write cannot pair an
// event type with another type's payload.
type Payload interface{ Type() string }

// Type returns the event type of each payload.
func (Start) Type() string        { return TypeStart }
func (Setup) Type() string        { return TypeSetup }
func (Request) Type() string      { return TypeRequest }
func (Response) Type() string     { return TypeResponse }
func (ModelError) Type() string   { return TypeModelErr }
func (Retry) Type() string        { return TypeRetry }
func (Decision) Type() string     { return TypeDecision }
func (ToolCall) Type() string     { return TypeToolCall }
func (Reminder) Type() string     { return TypeReminder }
func (Assertion) Type() string    { return TypeAssertion }
func (FilesChanged) Type() string { return TypeFilesChanged }
func (MCP) Type() string          { return TypeMCP }
func (Judge) Type() string        { return TypeJudge }
func (Environment) Type() string  { return TypeEnvironment }
func (End) Type() string          { return TypeEnd }
func (Agent) Type() string        { return TypeAgent }

// payloads are the zero values of every payload type.
var payloads = []Payload{
	Start{}, Setup{}, Request{}, Response{}, ModelError{}, Retry{}, Decision{}, ToolCall{},
	Reminder{}, Assertion{}, FilesChanged{}, MCP{}, Judge{}, Environment{}, End{}, Agent{},
}

// Payloads maps each event type to a new value of its payload type (a pointer).
var Payloads = func() map[string]func() any {
	m := make(map[string]func() any, len(payloads))
	for _, p := range payloads {
		t := reflect.TypeOf(p)
		m[p.Type()] = func() any { return reflect.New(t).Interface() }
	}
	return m
}()

// Payload decodes the event's data into its type's payload (a pointer, e.g. *Start).
func (e Event) Payload() (any, error) {
	mk, ok := Payloads[e.Type]
	if !ok {
		return nil, fmt.Errorf("transcript: unknown event type %q", e.Type)
	}
	v := mk()
	if len(e.Data) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return nil, fmt.Errorf("transcript %s event: %w", e.Type, err)
	}
	return v, nil
}

// RawArgs is a tool call's arguments as sent, as valid JSON for ToolCall.Args: {} for
// none, a JSON string for text that is not JSON. The loop and the endpoint both record
// calls with it, so a transcript shows an agent's arguments one way whoever ran it.
func RawArgs(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}
