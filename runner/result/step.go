package result

import (
	"encoding/json"
	"time"
)

// The records of one step, as transcripts, cassettes and result files hold them: what a
// model was asked with and answered, what the approval policy decided, what a tool
// returned, what a setup command did. They sit here, at the bottom, so that the
// transcript's events can be made of them without importing the runtime: runner/model,
// runner/policy and runner/workspace use these types under their own names (model.Usage
// is ResponseUsage, policy.Decision is Decision, ...); tools/, which runner/ cannot be
// below, has its own types, which the runtime converts where it writes (a tools.Result in
// runner/agent and runner/endpoint, tools.Limits and task.Approval in runner/scenario).

// ToolCall is one call the model asked for (model.ToolCall). Arguments are raw JSON as
// the provider sent them: an object, or a string holding one; the tool registry decodes
// both.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// FromText marks a call the model wrote in its text, read by runner/model/textcall,
	// rather than one the server returned as a tool call.
	FromText bool `json:"from_text,omitempty"`
}

// ModelOptions are sampling options from the task file (model.Options). Providers map
// what they support.
type ModelOptions struct {
	Temperature *float64 `json:"temperature,omitempty" jsonschema_description:"Sampling temperature; 0 for the most deterministic answers."`
	Seed        *int     `json:"seed,omitempty" jsonschema_description:"Random seed, for reproducible sampling where the provider supports it."`
	NumCtx      int      `json:"num_ctx,omitempty" jsonschema_description:"Context window in tokens (Ollama's num_ctx)."`
	MaxTokens   int      `json:"max_tokens,omitempty" jsonschema_description:"Upper bound on tokens generated per response."`
	TopP        *float64 `json:"top_p,omitempty" jsonschema_description:"Nucleus sampling probability mass."`
}

// ResponseUsage is what a provider reports about one response (model.Usage).
type ResponseUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedPromptTokens are the prompt tokens the provider served from its cache, where
	// its API says (OpenAI, Anthropic, Gemini): they cost less.
	CachedPromptTokens int `json:"cached_prompt_tokens,omitempty"`
	// EvalDuration is the provider's generation time, where it reports one (Ollama).
	EvalDuration Millis `json:"eval_duration_ms,omitempty"`
	// PromptEvalDuration is the server's time processing the prompt (Ollama).
	PromptEvalDuration Millis `json:"prompt_eval_duration_ms,omitempty"`
	// LoadDuration is the time the server took before the model could run the request
	// (Ollama's load_duration): scheduling it, and loading the model when that happened.
	// It is no sign of a load by itself: on a big model every request spends tens of
	// milliseconds here. runner bench tells loads apart through the server's /api/ps.
	LoadDuration Millis `json:"load_duration_ms,omitempty"`
	// TotalDuration is the server's whole time on the request (Ollama's total_duration):
	// what it spent beyond loading, the prompt and generation is waiting: for a free slot,
	// or for other requests' turn in a batch they share.
	TotalDuration Millis `json:"total_duration_ms,omitempty"`
}

// TokensPerSecond is the generation speed, from the provider's own timing when it has one.
func (u ResponseUsage) TokensPerSecond() float64 {
	if u.EvalDuration <= 0 || u.CompletionTokens == 0 {
		return 0
	}
	return float64(u.CompletionTokens) / u.EvalDuration.Seconds()
}

// Clamped is u as runner counts it: a server's answer is data, and a negative count or
// duration (which would lower the run's total, its cost and a budget) counts as 0, as do
// cached tokens beyond the prompt's (which would price uncached tokens below zero).
func (u ResponseUsage) Clamped() ResponseUsage {
	u.PromptTokens, u.CompletionTokens = max(u.PromptTokens, 0), max(u.CompletionTokens, 0)
	u.CachedPromptTokens = min(max(u.CachedPromptTokens, 0), u.PromptTokens)
	u.EvalDuration, u.PromptEvalDuration = max(u.EvalDuration, 0), max(u.PromptEvalDuration, 0)
	u.LoadDuration, u.TotalDuration = max(u.LoadDuration, 0), max(u.TotalDuration, 0)
	return u
}

// Add accumulates another response's usage, clamped (see Clamped), into sums that stop
// at their maximum rather than wrap.
func (u *ResponseUsage) Add(o ResponseUsage) {
	o = o.Clamped()
	u.PromptTokens = AddCount(u.PromptTokens, o.PromptTokens)
	u.CompletionTokens = AddCount(u.CompletionTokens, o.CompletionTokens)
	u.CachedPromptTokens = AddCount(u.CachedPromptTokens, o.CachedPromptTokens)
	u.EvalDuration = AddMillis(u.EvalDuration, o.EvalDuration)
	u.PromptEvalDuration = AddMillis(u.PromptEvalDuration, o.PromptEvalDuration)
	u.LoadDuration = AddMillis(u.LoadDuration, o.LoadDuration)
	u.TotalDuration = AddMillis(u.TotalDuration, o.TotalDuration)
}

// UnmarshalJSON reads usage as transcripts and cassettes store it, also ones written
// before durations were *_ms (eval_duration_ns, load_duration_ns).
func (u *ResponseUsage) UnmarshalJSON(b []byte) error {
	type plain ResponseUsage
	if err := json.Unmarshal(b, (*plain)(u)); err != nil {
		return err
	}
	return ReadLegacy(b,
		Legacy{Key: "eval_duration_ns", New: "eval_duration_ms", Unit: time.Nanosecond, To: &u.EvalDuration},
		Legacy{Key: "load_duration_ns", New: "load_duration_ms", Unit: time.Nanosecond, To: &u.LoadDuration})
}

// Response is one model response (model.Response).
type Response struct {
	Content   string        `json:"content,omitempty"`
	ToolCalls []ToolCall    `json:"tool_calls,omitempty"`
	Usage     ResponseUsage `json:"usage"`
	// Model is the model name the provider reports.
	Model string `json:"model,omitempty"`
	// StopReason is why the server stopped generating, as it says it ("stop", "length"
	// when the token limit cut the answer off); "" when it does not say.
	StopReason string `json:"stop_reason,omitempty"`
}

// Decision is the approval policy's outcome for one call (policy.Decision).
type Decision struct {
	Allowed bool `json:"allowed"`
	// Source is one of runner/policy's Source constants.
	Source string `json:"source"`
	// Rule describes the rule that decided, when one did:
	// approval.rules[1] {tool: run_in_terminal, match: '...', action: allow} (task.yaml:12:7).
	Rule string `json:"rule,omitempty"`
	// By names the decider in a few words, for messages: "approval.rules[1]",
	// "approval mode read-only", "the approval default (deny)", "the user".
	By string `json:"by"`
	// Reason and Suggestion are written for the model (and the person reading the run).
	Reason     string `json:"reason,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

// SetupStep is the record of one setup command (workspace.Step).
type SetupStep struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
}

// ToolResult is the outcome of one tool call as records keep it: tools.Result, which the
// runtime converts where it writes. Output is the text the model read.
type ToolResult struct {
	Success         bool           `json:"success"`
	Output          string         `json:"output"`
	Error           *ToolError     `json:"error,omitempty"`
	FilesAffected   []string       `json:"files_affected,omitempty"`
	ExecutionTimeMS int64          `json:"execution_time_ms"`
	Metadata        map[string]any `json:"metadata,omitempty"`
}

// ToolError is a failed call's error: tools.Error, its Code one of tools' error codes.
type ToolError struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion,omitempty"`
}

// Limits are the per-command resource limits a scenario ran with (tools.Limits, which
// converts to this type as it is). Zero means the sandbox's default.
type Limits struct {
	CPUSeconds int `json:"cpu_seconds,omitempty"`
	MemoryMB   int `json:"memory_mb,omitempty"`
	FileSizeMB int `json:"file_size_mb,omitempty"`
	Processes  int `json:"processes,omitempty"`
}

// Approval is the approval policy as a task resolved it, as the start event records it:
// task.Approval, converted where it is written.
type Approval struct {
	Mode    string         `json:"mode"`
	Default string         `json:"default,omitempty"`
	Rules   []ApprovalRule `json:"rules,omitempty"`
}

// ApprovalRule is one approval rule as the task file wrote it, with its place there.
type ApprovalRule struct {
	Tool     string     `json:"tool,omitempty"`
	Match    string     `json:"match,omitempty"`
	Action   string     `json:"action"`
	Reason   string     `json:"reason,omitempty"`
	Expires  *time.Time `json:"expires,omitempty"`
	Disabled bool       `json:"disabled,omitempty"`
	Pos      Position   `json:"pos"`
}

// Position is a place in a task file.
type Position struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}
