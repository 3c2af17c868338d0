package format

import (
	"testing"

	"gotest.tools/v3/assert"
)

type parseCase struct {
	name  string
	input string
	want  []ToolCall
}

func call(id, name, args string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: []byte(args)}
}

func runParse(t *testing.T, parse func([]byte) ([]ToolCall, error), cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse([]byte(tc.input))
			assert.NilError(t, err)
			assert.Equal(t, len(got), len(tc.want), "%+v", got)
			for i := range tc.want {
				assert.Equal(t, got[i].ID, tc.want[i].ID)
				assert.Equal(t, got[i].Name, tc.want[i].Name)
				assert.Equal(t, string(got[i].Arguments), string(tc.want[i].Arguments))
			}
		})
	}
}

func TestParseOpenAI(t *testing.T) {
	runParse(t, ParseOpenAI, []parseCase{
		{"string arguments", `{"role":"assistant","content":null,"tool_calls":[
			{"id":"call_abc","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a.go\"}"}},
			{"id":"call_def","type":"function","function":{"name":"list_dir","arguments":"{}"}}]}`,
			[]ToolCall{call("call_abc", "read_file", `{"path":"a.go"}`), call("call_def", "list_dir", `{}`)}},
		{"object arguments", `{"tool_calls":[{"id":"c1","function":{"name":"x","arguments":{"n": 1}}}]}`,
			[]ToolCall{call("c1", "x", `{"n":1}`)}},
		{"empty string arguments", `{"tool_calls":[{"id":"c1","function":{"name":"x","arguments":""}}]}`,
			[]ToolCall{call("c1", "x", `{}`)}},
		{"missing id", `{"tool_calls":[{"function":{"name":"a"}},{"function":{"name":"b"}}]}`,
			[]ToolCall{call("call_0", "a", `{}`), call("call_1", "b", `{}`)}},
		{"whole response", `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant",
			"tool_calls":[{"id":"c9","type":"function","function":{"name":"grep","arguments":"{\"q\":\"x\"}"}}]}}]}`,
			[]ToolCall{call("c9", "grep", `{"q":"x"}`)}},
		{"bare array", `[{"id":"c1","function":{"name":"x","arguments":"{\"a\":[1, 2]}"}}]`,
			[]ToolCall{call("c1", "x", `{"a":[1,2]}`)}},
		{"legacy function_call", `{"function_call":{"name":"x","arguments":"{\"a\":1}"}}`,
			[]ToolCall{call("call_0", "x", `{"a":1}`)}},
		{"text only", `{"role":"assistant","content":"Done."}`, nil},
	})
}

func TestParseOllama(t *testing.T) {
	runParse(t, ParseOllama, []parseCase{
		{"object arguments", `{"role":"assistant","content":"","tool_calls":[
			{"function":{"name":"read_file","arguments":{"path":"a.go","limit":10}}},
			{"function":{"index":1,"name":"list_dir","arguments":{}}}]}`,
			[]ToolCall{call("call_0", "read_file", `{"path":"a.go","limit":10}`), call("call_1", "list_dir", `{}`)}},
		{"string arguments", `{"tool_calls":[{"function":{"name":"x","arguments":"{\"a\": true}"}}]}`,
			[]ToolCall{call("call_0", "x", `{"a":true}`)}},
		{"id kept", `{"tool_calls":[{"id":"call_xyz","function":{"name":"x","arguments":{}}}]}`,
			[]ToolCall{call("call_xyz", "x", `{}`)}},
		{"whole response", `{"model":"qwen3","message":{"role":"assistant","tool_calls":[
			{"function":{"name":"x","arguments":{"b":"c"}}}]},"done":true}`,
			[]ToolCall{call("call_0", "x", `{"b":"c"}`)}},
		{"no calls", `{"role":"assistant","content":"hi"}`, nil},
	})
}

func TestParseAnthropic(t *testing.T) {
	runParse(t, ParseAnthropic, []parseCase{
		{"content blocks", `[{"type":"text","text":"Let me look."},
			{"type":"tool_use","id":"toolu_01","name":"read_file","input":{"path":"a.go"}},
			{"type":"tool_use","id":"toolu_02","name":"list_dir","input":{}}]`,
			[]ToolCall{call("toolu_01", "read_file", `{"path":"a.go"}`), call("toolu_02", "list_dir", `{}`)}},
		{"message", `{"id":"msg_1","role":"assistant","stop_reason":"tool_use","content":[
			{"type":"tool_use","id":"toolu_9","name":"x","input":{"a": 1}}]}`,
			[]ToolCall{call("toolu_9", "x", `{"a":1}`)}},
		{"string input", `[{"type":"tool_use","id":"t1","name":"x","input":"{\"a\":1}"}]`,
			[]ToolCall{call("t1", "x", `{"a":1}`)}},
		{"missing id and input", `[{"type":"tool_use","name":"x"}]`,
			[]ToolCall{call("call_0", "x", `{}`)}},
		{"text content", `{"role":"assistant","content":"plain text"}`, nil},
		{"text blocks only", `[{"type":"text","text":"hi"}]`, nil},
	})
}

func TestParseGemini(t *testing.T) {
	runParse(t, ParseGemini, []parseCase{
		{"content", `{"role":"model","parts":[{"text":"Reading."},
			{"functionCall":{"name":"read_file","args":{"path":"a.go"}}},
			{"functionCall":{"name":"list_dir","args":{}}}]}`,
			[]ToolCall{call("call_0", "read_file", `{"path":"a.go"}`), call("call_1", "list_dir", `{}`)}},
		{"whole response", `{"candidates":[{"content":{"role":"model","parts":[
			{"functionCall":{"name":"x","args":{"n":2}}}]},"finishReason":"STOP"}],"usageMetadata":{}}`,
			[]ToolCall{call("call_0", "x", `{"n":2}`)}},
		{"parts array with id", `[{"functionCall":{"id":"fc-1","name":"x"}}]`,
			[]ToolCall{call("fc-1", "x", `{}`)}},
		{"string args", `[{"functionCall":{"name":"x","args":"{\"a\":\"b\"}"}}]`,
			[]ToolCall{call("call_0", "x", `{"a":"b"}`)}},
		{"candidate without content", `{"candidates":[{"finishReason":"SAFETY"}]}`, nil},
		{"text only", `{"parts":[{"text":"Done."}]}`, nil},
	})
}

// Synthesized ids depend only on the call's position, so parsing twice agrees.
func TestSynthesizedIDsAreStable(t *testing.T) {
	in := []byte(`{"parts":[{"functionCall":{"name":"a"}},{"text":"x"},{"functionCall":{"name":"b"}}]}`)
	first, err := ParseGemini(in)
	assert.NilError(t, err)
	second, err := ParseGemini(in)
	assert.NilError(t, err)
	assert.DeepEqual(t, first, second)
	assert.Equal(t, first[1].ID, "call_1")
}

func TestParseMalformed(t *testing.T) {
	parsers := map[string]func([]byte) ([]ToolCall, error){
		"openai": ParseOpenAI, "ollama": ParseOllama, "anthropic": ParseAnthropic, "gemini": ParseGemini,
	}
	// Each input is malformed in every provider's shape.
	common := []struct{ name, input, want string }{
		{"empty", ``, "empty input"},
		{"not json", `hello`, "want a JSON object or array"},
		{"scalar", `42`, "want a JSON object or array"},
		{"truncated", `{"tool_calls":[{"function":`, ""},
		{"truncated array", `[{"type":"tool_use"`, ""},
	}
	for pname, parse := range parsers {
		for _, tc := range common {
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				calls, err := parse([]byte(tc.input))
				assert.Assert(t, err != nil, "got %+v", calls)
				assert.ErrorContains(t, err, "parse "+pname+" tool calls")
				assert.ErrorContains(t, err, tc.want)
			})
		}
	}
	specific := []struct {
		name  string
		parse func([]byte) ([]ToolCall, error)
		input string
		want  string
	}{
		{"openai bad argument string", ParseOpenAI,
			`{"tool_calls":[{"id":"c","function":{"name":"x","arguments":"{\"a\": "}}]}`, "not valid JSON"},
		{"openai array arguments", ParseOpenAI,
			`{"tool_calls":[{"id":"c","function":{"name":"x","arguments":"[1]"}}]}`, "not a JSON object"},
		{"openai no name", ParseOpenAI, `{"tool_calls":[{"id":"c","function":{"arguments":"{}"}}]}`, "no function name"},
		{"openai wrong types", ParseOpenAI, `{"tool_calls":{"id":1}}`, "cannot unmarshal"},
		{"ollama number arguments", ParseOllama, `{"tool_calls":[{"function":{"name":"x","arguments":5}}]}`, "not a JSON object"},
		{"anthropic no name", ParseAnthropic, `[{"type":"tool_use","id":"t","input":{}}]`, "no function name"},
		{"anthropic string input not object", ParseAnthropic, `[{"type":"tool_use","name":"x","input":"oops"}]`, "not a JSON object"},
		{"gemini no name", ParseGemini, `[{"functionCall":{"args":{}}}]`, "no function name"},
		{"gemini bad args string", ParseGemini, `[{"functionCall":{"name":"x","args":"{"}}]`, "not valid JSON"},
	}
	for _, tc := range specific {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := tc.parse([]byte(tc.input))
			assert.Assert(t, err != nil, "got %+v", calls)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestNormalizeArguments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{`""`, `{}`},
		{`"  "`, `{}`},
		{` { "a" : [1, {"b": null}] } `, `{"a":[1,{"b":null}]}`},
		{`"{\"a\":\"x y\"}"`, `{"a":"x y"}`},
	} {
		got, err := NormalizeArguments([]byte(tc.in))
		assert.NilError(t, err, tc.in)
		assert.Equal(t, string(got), tc.want, tc.in)
	}
}
