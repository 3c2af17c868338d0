// Package tools defines the agent's hands: the Tool interface, the Result every call
// returns, the Registry that finds tools by name or alias, and the Workspace that confines
// every path to one directory. The tool families live in sub-packages.
package tools

import (
	"context"
	"fmt"
)

// Risk classifies what a tool can do to the workspace; the approval policy reads it.
type Risk string

// Risk levels, from harmless to destructive.
const (
	RiskReadOnly  Risk = "read_only"
	RiskSafeWrite Risk = "safe_write"
	RiskDangerous Risk = "dangerous"
)

// Spec is the static description of a tool: what the model is shown.
type Spec struct {
	// Name is the canonical snake_case name.
	Name string
	// Description is written for a model: what the tool does and when to use it.
	Description string
	// Parameters is a JSON Schema whose root is an object.
	Parameters *Schema
	// Risk is the tool's static risk level.
	Risk Risk
	// Freeform, when set, marks a tool whose input is text rather than JSON arguments
	// (OpenAI's custom tools, which an external agent such as Codex offers: its
	// apply_patch, its code mode's exec). Parameters is then FreeformParameters: what a
	// provider without such tools offers the model instead, so a call's arguments are
	// {"input": TEXT} whichever way the model was asked.
	Freeform *Freeform
}

// Freeform is the form of a free-form tool's text input: a grammar (Syntax "lark" or
// "regex", and its Definition), or any text (both empty).
type Freeform struct {
	Syntax     string `json:"syntax,omitempty"`
	Definition string `json:"definition,omitempty"`
}

// FreeformInput is the key of the one argument a free-form tool's call carries.
const FreeformInput = "input"

// FreeformParameters is the schema a free-form tool is offered with where a provider has
// only JSON tools: one string, the whole input, its grammar in the description.
func FreeformParameters(f *Freeform) *Schema {
	desc := "The tool's whole input as plain text (it is a free-form tool: this one string is its input, not JSON)."
	if f != nil && f.Definition != "" {
		desc += " The text follows this " + f.Syntax + " grammar:\n" + f.Definition
	}
	return Object(map[string]*Schema{FreeformInput: String(desc)}, FreeformInput)
}

// MaxNameLen is the longest tool name providers accept.
const MaxNameLen = 64

// ValidName reports whether name is what providers accept as a tool name (OpenAI and
// Anthropic: ^[a-zA-Z0-9_-]{1,64}$), so a tool of that name can be offered to every model.
// A loop rather than that regexp: compiling it at init cost every start ~0.1 ms.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Tool is one capability offered to the agent. Implementations must never panic on bad
// input: every failure is a Result with an Error.
type Tool interface {
	Spec() Spec
	// Validate checks arguments beyond what the schema can say (paths, ranges, regexes).
	// Arguments have already passed the schema and carry its defaults.
	Validate(args Args, ws *Workspace) *Error
	// Execute performs the call. It is only called with validated arguments.
	Execute(ctx context.Context, args Args, ws *Workspace) Result
	// RequiresApproval reports whether this particular call is destructive enough to need
	// approval even when the tool itself is allowed (an overwrite, a delete).
	RequiresApproval(args Args, ws *Workspace) bool
}

// ErrorCode is the machine-readable kind of a tool failure.
type ErrorCode string

// The error codes a Result can carry.
const (
	CodeInvalidArgument  ErrorCode = "INVALID_ARGUMENT"
	CodeInvalidPath      ErrorCode = "INVALID_PATH"
	CodeFileNotFound     ErrorCode = "FILE_NOT_FOUND"
	CodeAlreadyExists    ErrorCode = "ALREADY_EXISTS"
	CodeNotADirectory    ErrorCode = "NOT_A_DIRECTORY"
	CodeIsADirectory     ErrorCode = "IS_A_DIRECTORY"
	CodePermissionDenied ErrorCode = "PERMISSION_DENIED"
	CodeTooLarge         ErrorCode = "TOO_LARGE"
	CodeTimeout          ErrorCode = "TIMEOUT"
	CodeExecutionError   ErrorCode = "EXECUTION_ERROR"
	CodeNetworkError     ErrorCode = "NETWORK_ERROR"
	CodeDenied           ErrorCode = "DENIED"
)

// Error is a structured tool failure, written so that a model can recover from it.
type Error struct {
	Code       ErrorCode `json:"code"`
	Message    string    `json:"message"`
	Suggestion string    `json:"suggestion,omitempty"`
}

// Error implements the error interface so a *Error can travel through Go error paths.
func (e *Error) Error() string {
	if e.Suggestion != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Suggestion)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf builds an *Error with a formatted message.
func Errorf(code ErrorCode, suggestion, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...), Suggestion: suggestion}
}

// Result is the outcome of one tool call. Output is the text the model reads.
type Result struct {
	Success         bool           `json:"success"`
	Output          string         `json:"output"`
	Error           *Error         `json:"error,omitempty"`
	FilesAffected   []string       `json:"files_affected,omitempty"`
	ExecutionTimeMS int64          `json:"execution_time_ms"`
	Metadata        map[string]any `json:"metadata,omitempty"`
}

// OK returns a successful Result with the given output.
func OK(output string) Result {
	return Result{Success: true, Output: output}
}

// Fail returns a failed Result for err. The output repeats the message (and suggestion) so
// that providers which only forward text still tell the model what went wrong.
func Fail(err *Error) Result {
	out := "Error: " + err.Message
	if err.Suggestion != "" {
		out += ". " + err.Suggestion
	}
	return Result{Success: false, Output: out, Error: err}
}

// Failf is Fail(Errorf(...)).
func Failf(code ErrorCode, suggestion, format string, a ...any) Result {
	return Fail(Errorf(code, suggestion, format, a...))
}

// WithMeta sets a metadata key and returns the result, for terse construction.
func (r Result) WithMeta(key string, value any) Result {
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	r.Metadata[key] = value
	return r
}
