// Package textcall turns tool calls that a model wrote as text into real calls. Small
// local models often answer with <tool_call>{"name": ..., "arguments": ...}</tool_call>
// (Hermes, Qwen), a bare JSON object, or Llama's <|python_tag|> form instead of the
// server's native tool calls. Wrap puts the parser behind any model: it looks at a
// response only when it holds text and no native call, so it adds nothing to a step of a
// model that calls tools natively.
package textcall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentrunner/runner/runner/model"
)

// Parser modes, as written in a task's tool_call_parser or --tool-call-parser.
const (
	// Auto tries every text form: <tool_call> tags, <|python_tag|>, a bare JSON object.
	Auto = "auto"
	// Native takes only the server's native tool calls; text stays text.
	Native = "native"
	// Hermes reads only <tool_call>...</tool_call> blocks.
	Hermes = "hermes"
	// JSON reads only a bare JSON call (an object, a list of them, or one after
	// <|python_tag|>, where Llama's name(arg=value) form is read too).
	JSON = "json"
	// Off is Native: no text is read as a call.
	Off = "off"
)

// Parser is one row of the registry of tool-call parsers: the mode a task's
// tool_call_parser or --tool-call-parser names, the help line the schema and --help show,
// and the text forms it reads, tried in order (none: text stays text).
type Parser struct {
	Name  string
	Help  string
	reads []func(string) ([]model.ToolCall, string)
}

// Parsers are the modes, in the order of the documentation.
var Parsers = []Parser{
	{Auto, "every form: <tool_call> tags, <|python_tag|>, a bare JSON object", []func(string) ([]model.ToolCall, string){hermes, pythonTag, bareJSON}},
	{Native, "only the server's native tool calls; text stays text", nil},
	{Hermes, "only <tool_call> blocks", []func(string) ([]model.ToolCall, string){hermes}},
	{JSON, "a bare JSON call, also after <|python_tag|>", []func(string) ([]model.ToolCall, string){pythonTag, bareJSON}},
	{Off, "as native: no text is read as a call", nil},
}

// Modes lists the names of Parsers.
var Modes = func() []string {
	out := make([]string, len(Parsers))
	for i, p := range Parsers {
		out[i] = p.Name
	}
	return out
}()

// Choices is "auto, native, hermes, json or off", for help and messages.
func Choices() string {
	return strings.Join(Modes[:len(Modes)-1], ", ") + " or " + Modes[len(Modes)-1]
}

// ErrUnknownMode is what Check returns for a mode not in Parsers.
var ErrUnknownMode = errors.New("unknown tool call parser")

// Check returns nil for a mode in Parsers or "" (the provider's default), else an error
// wrapping ErrUnknownMode that lists the modes.
func Check(mode string) error {
	if Valid(mode) {
		return nil
	}
	return fmt.Errorf("%w %q (want %s)", ErrUnknownMode, mode, Choices())
}

// Valid reports whether mode is one of Modes ("" counts: the provider's default).
func Valid(mode string) bool {
	return mode == "" || slices.Contains(Modes, mode)
}

func find(mode string) (Parser, bool) {
	for _, p := range Parsers {
		if p.Name == mode {
			return p, true
		}
	}
	return Parser{}, false
}

// Model is a model whose text answers are read for tool calls.
type Model struct {
	inner model.Model
	mode  string
}

// Wrap returns m with the parser in mode; for a mode that reads no text (Native, Off, "")
// it returns m itself.
func Wrap(m model.Model, mode string) model.Model {
	if p, ok := find(mode); !ok || len(p.reads) == 0 {
		return m
	}
	return &Model{inner: m, mode: mode}
}

// Name returns the wrapped model's name.
func (m *Model) Name() string { return m.inner.Name() }

// Unwrap returns the wrapped model (for pre-flight checks).
func (m *Model) Unwrap() model.Model { return m.inner }

// Step asks the wrapped model; an answer with no native call but with calls written in
// its text gets those calls, marked FromText, and keeps the text around them.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := m.inner.Step(ctx, req)
	if err != nil || len(resp.ToolCalls) > 0 || strings.TrimSpace(resp.Content) == "" {
		return resp, err
	}
	calls, rest := Parse(resp.Content, m.mode)
	if len(calls) > 0 {
		resp.ToolCalls, resp.Content = calls, rest
	}
	return resp, nil
}

// Parse reads the tool calls written in text in mode and returns them with the text that
// is left. A block that is clearly a call but does not parse becomes a call whose
// arguments are the raw text (as a JSON string), so the tool registry answers the model
// with the usual INVALID_ARGUMENT result and it can try again.
func Parse(text, mode string) ([]model.ToolCall, string) {
	p, _ := find(mode)
	for _, read := range p.reads {
		if calls, rest := read(text); len(calls) > 0 {
			return calls, rest
		}
	}
	return nil, text
}

// mark sets FromText on every call.
func mark(calls []model.ToolCall) []model.ToolCall {
	for i := range calls {
		calls[i].FromText = true
	}
	return calls
}

// unreadable is the name of a call whose text gave no name: the registry then tells the
// model, among the tools it has, that this is not one.
const unreadable = "unreadable_tool_call"
