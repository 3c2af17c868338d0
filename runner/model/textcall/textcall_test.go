package textcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

type call struct{ Name, Args string }

func calls(cs []model.ToolCall) []call {
	var out []call
	for _, c := range cs {
		out = append(out, call{c.Name, string(c.Arguments)})
	}
	return out
}

func TestParseFormats(t *testing.T) {
	tests := []struct {
		name, mode, text string
		want             []call
		rest             string
	}{
		{"hermes", textcall.Auto,
			"I will read it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.go\"}}\n</tool_call>",
			[]call{{"read_file", `{"path": "a.go"}`}}, "I will read it."},
		{"hermes two blocks, last unclosed", textcall.Hermes,
			"<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n<tool_call>{\"name\": \"list_dir\", \"arguments\": {}}",
			[]call{{"read_file", `{"path": "a"}`}, {"list_dir", `{}`}}, ""},
		{"hermes fenced, parameters", textcall.Auto,
			"<tool_call>\n```json\n{\"name\": \"list_dir\", \"parameters\": {\"path\": \".\"}}\n```\n</tool_call>",
			[]call{{"list_dir", `{"path": "."}`}}, ""},
		{"hermes arguments as a string", textcall.Auto,
			`<tool_call>{"name": "read_file", "arguments": "{\"path\": \"a\"}"}</tool_call>`,
			[]call{{"read_file", `"{\"path\": \"a\"}"`}}, ""},
		{"bare json", textcall.Auto,
			`{"name": "read_file", "arguments": {"path": "main.go"}}`,
			[]call{{"read_file", `{"path": "main.go"}`}}, ""},
		{"bare json fenced list", textcall.JSON,
			"```json\n[{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}, {\"function\": {\"name\": \"list_dir\", \"arguments\": {}}}]\n```",
			[]call{{"read_file", `{"path": "a"}`}, {"list_dir", `{}`}}, ""},
		{"llama python_tag json", textcall.Auto,
			`<|python_tag|>{"name": "read_file", "parameters": {"path": "a.go"}}<|eom_id|>`,
			[]call{{"read_file", `{"path": "a.go"}`}}, ""},
		{"llama python_tag two json calls", textcall.JSON,
			`<|python_tag|>{"name": "read_file", "parameters": {"path": "a"}}; {"name": "read_file", "parameters": {"path": "b"}}`,
			[]call{{"read_file", `{"path": "a"}`}, {"read_file", `{"path": "b"}`}}, ""},
		{"llama python_tag python call", textcall.Auto,
			`Let me search.<|python_tag|>web_search.call(query="go 1.26 \"release\"", num_results=3, safe=True)`,
			[]call{{"web_search", `{"num_results":3,"query":"go 1.26 \"release\"","safe":true}`}}, "Let me search."},
		{"prose with json is prose", textcall.Auto,
			`The config is {"name": "x", "arguments": {}} as you can see.`, nil,
			`The config is {"name": "x", "arguments": {}} as you can see.`},
		{"data object is not a call", textcall.Auto, `{"name": "Bob", "age": 3}`, nil, `{"name": "Bob", "age": 3}`},
		{"hermes mode ignores bare json", textcall.Hermes, `{"name": "read_file", "arguments": {}}`, nil, `{"name": "read_file", "arguments": {}}`},
		{"json mode ignores tags", textcall.JSON, `<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`, nil,
			`<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`},
		{"native", textcall.Native, `{"name": "read_file", "arguments": {}}`, nil, `{"name": "read_file", "arguments": {}}`},
		{"off", textcall.Off, `<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`, nil,
			`<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`},
		{"malformed hermes keeps the name", textcall.Auto,
			`<tool_call>{"name": "read_file", "arguments": {"path": "a.go"</tool_call>`,
			[]call{{"read_file", `"{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.go\""`}}, ""},
		{"malformed hermes without a name", textcall.Auto, `<tool_call>read it please</tool_call>`,
			[]call{{"unreadable_tool_call", `"read it please"`}}, ""},
		{"malformed python_tag", textcall.Auto, `<|python_tag|>search(`, []call{{"unreadable_tool_call", `"search("`}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, rest := textcall.Parse(tc.text, tc.mode)
			assert.DeepEqual(t, calls(got), tc.want)
			assert.Equal(t, rest, tc.rest)
			for _, c := range got {
				assert.Assert(t, c.FromText)
			}
		})
	}
}

// Malformed text reaches the model as the registry's usual error result, not a crash.
func TestMalformedIsAnErrorResult(t *testing.T) {
	reg := catalog.Default()
	for _, text := range []string{
		`<tool_call>{"name": "read_file", "arguments": {"path": "a.go"</tool_call>`,
		`<tool_call>read it please</tool_call>`,
		`<|python_tag|>search(`,
	} {
		got, _ := textcall.Parse(text, textcall.Auto)
		assert.Equal(t, len(got), 1, text)
		_, err := reg.Prepare(got[0].Name, got[0].Arguments)
		assert.Assert(t, err != nil, text)
		assert.Equal(t, err.Code, tools.CodeInvalidArgument, text)
	}
}

type fixed struct{ resp model.Response }

func (f *fixed) Name() string { return "ollama:x" }
func (f *fixed) Step(context.Context, *model.Request) (*model.Response, error) {
	r := f.resp
	return &r, nil
}

// The wrapper reads text only when the server sent no native call.
func TestWrap(t *testing.T) {
	native := model.Response{Content: `<tool_call>{"name": "list_dir", "arguments": {}}</tool_call>`,
		ToolCalls: []model.ToolCall{{Name: "read_file", Arguments: json.RawMessage(`{}`)}}}
	m := textcall.Wrap(&fixed{resp: native}, textcall.Auto)
	r, err := m.Step(context.Background(), &model.Request{})
	assert.NilError(t, err)
	assert.DeepEqual(t, calls(r.ToolCalls), []call{{"read_file", `{}`}})
	assert.Assert(t, !r.ToolCalls[0].FromText)

	m = textcall.Wrap(&fixed{resp: model.Response{Content: native.Content}}, textcall.Auto)
	r, err = m.Step(context.Background(), &model.Request{})
	assert.NilError(t, err)
	assert.DeepEqual(t, calls(r.ToolCalls), []call{{"list_dir", `{}`}})
	assert.Assert(t, r.ToolCalls[0].FromText)
	assert.Equal(t, r.Content, "")

	inner := &fixed{}
	assert.Equal(t, textcall.Wrap(inner, textcall.Native), model.Model(inner))
	assert.Equal(t, textcall.Wrap(inner, ""), model.Model(inner))
}

// TestEveryParserRowReadsWhatItsHelpSays ties each row's help to what it reads: a mode
// that reads no text leaves the model unwrapped, the others read a Hermes or JSON call.
func TestEveryParserRowReadsWhatItsHelpSays(t *testing.T) {
	hermesCall := `<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>`
	jsonCall := `{"name": "read_file", "arguments": {"path": "a"}}`
	for _, p := range textcall.Parsers {
		calls, _ := textcall.Parse(hermesCall, p.Name)
		jcalls, _ := textcall.Parse(jsonCall, p.Name)
		switch p.Name {
		case textcall.Native, textcall.Off:
			if len(calls)+len(jcalls) != 0 {
				t.Errorf("%s read a call", p.Name)
			}
		case textcall.Hermes:
			if len(calls) != 1 || len(jcalls) != 0 {
				t.Errorf("hermes: %d tag calls, %d JSON calls", len(calls), len(jcalls))
			}
		case textcall.JSON:
			if len(calls) != 0 || len(jcalls) != 1 {
				t.Errorf("json: %d tag calls, %d JSON calls", len(calls), len(jcalls))
			}
		case textcall.Auto:
			if len(calls) != 1 || len(jcalls) != 1 {
				t.Errorf("auto: %d tag calls, %d JSON calls", len(calls), len(jcalls))
			}
		default:
			t.Errorf("parser %q has no case here: say what it reads", p.Name)
		}
		if p.Help == "" {
			t.Errorf("parser %q has no help line", p.Name)
		}
	}
	if err := textcall.Check("xml"); !errors.Is(err, textcall.ErrUnknownMode) || err.Error() != `unknown tool call parser "xml" (want auto, native, hermes, json or off)` {
		t.Errorf("Check: %v", err)
	}
}
