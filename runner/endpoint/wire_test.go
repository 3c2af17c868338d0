package endpoint_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/endpoint"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
)

// post sends body as the agent would and returns the status and the SSE events' names
// and data (or the JSON body as one event named "").
func post(t *testing.T, url string, header map[string]string, body string) (int, []string, []string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	assert.NilError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var names, data []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			names = append(names, strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && line != "":
			data = append(data, line)
		}
	}
	return resp.StatusCode, names, data
}

// Claude Code's request as the wire notes captured it (2.1.332): ?beta=true, system as
// cache-controlled blocks, the opening user turn as reminder blocks with the prompt last,
// thinking and metadata, a tool schema with $schema and additionalProperties, stream.
func TestClaudeCodeShapedRequest(t *testing.T) {
	inner := &scripted{answers: []model.Response{{Content: "writing", ToolCalls: []model.ToolCall{{ID: "toolu_1", Name: "Write",
		Arguments: json.RawMessage(`{"file_path":"/workspace/a.txt","content":"hi\n"}`)}}, Usage: model.Usage{PromptTokens: 50, CompletionTokens: 9}}}}
	work := "/tmp/runner-cc-42"
	srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 5, Record: &events{}, Workdir: work})
	body := `{"model":"ollama:qwen3","max_tokens":32000,"stream":true,
	 "system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332"},{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],
	 "messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>cwd: ` + work + `\nToday's date is 2026-11-28.</system-reminder>"},{"type":"text","text":"Write a.txt"}]}],
	 "tools":[{"name":"Write","description":"Writes a file","input_schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}}],
	 "thinking":{"type":"adaptive"},"metadata":{"user_id":"{\"session_id\":\"x\"}"}}`
	code, names, data := post(t, base+"/v1/messages?beta=true", map[string]string{"X-Api-Key": srv.Token(), "Anthropic-Version": "2023-06-01",
		"Anthropic-Beta": "claude-code-20250219,interleaved-thinking-2025-05-14"}, body)
	assert.Equal(t, code, http.StatusOK, strings.Join(data, "\n"))
	assert.DeepEqual(t, names, []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"})
	assert.Assert(t, is.Contains(data[5], `"partial_json":"{\"file_path\":\"`+work+`/a.txt\",\"content\":\"hi\\n\"}"`), "the model's /workspace is the agent's workspace again")
	assert.Assert(t, is.Contains(data[7], `"stop_reason":"tool_use"`))

	asked := inner.asked[0]
	assert.Equal(t, asked.Messages[0].Content, "x-anthropic-billing-header: cc_version=2.1.332\n\nYou are Claude Code.")
	assert.Equal(t, asked.Messages[1].Content, "<system-reminder>cwd: /workspace\nToday's date is 2026-11-28.</system-reminder>\n\nWrite a.txt")
	assert.Equal(t, asked.Tools[0].Name, "Write")

	// Its health check, before the first call when non-essential traffic is on.
	req, _ := http.NewRequest(http.MethodHead, base+"/api/hello", nil)
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusOK)
}

// Codex's request as the wire notes captured it (0.171.0): the system prompt as developer
// messages, a custom tool (offered as a free-form tool), the previous turn's function
// call and its output, stream, fields to ignore.
func TestCodexShapedRequest(t *testing.T) {
	inner := &scripted{answers: []model.Response{{Content: "done", Usage: model.Usage{PromptTokens: 80, CompletionTokens: 2, CachedPromptTokens: 10}}}}
	srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 5, Record: &events{}})
	body := `{"model":"ollama:qwen3","instructions":"","stream":true,"store":false,"tool_choice":"auto","parallel_tool_calls":true,
	 "reasoning":{"summary":"auto"},"include":["reasoning.encrypted_content"],"prompt_cache_key":"0b9d6f7e","client_metadata":{},
	 "input":[
	  {"type":"message","id":"msg_1","role":"developer","content":[{"type":"input_text","text":"You are Codex."}]},
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context><cwd>/w</cwd></environment_context>"}]},
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"make f.txt"}]},
	  {"type":"function_call","id":"fc_1","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"touch f.txt\"}","status":"completed"},
	  {"type":"function_call_output","id":"fco_1","call_id":"call_1","output":"Chunk ID: 3f9a2c\nProcess exited with code 0"}],
	 "tools":[{"type":"function","name":"exec_command","description":"Runs a command","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}},
	  {"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}}]}`
	code, names, data := post(t, base+"/v1/responses", map[string]string{"Authorization": "Bearer " + srv.Token()}, body)
	assert.Equal(t, code, http.StatusOK, strings.Join(data, "\n"))
	assert.Equal(t, names[0], "response.created")
	assert.Equal(t, names[len(names)-1], "response.completed")
	assert.Assert(t, is.Contains(names, "response.output_item.done"))
	assert.Assert(t, is.Contains(data[len(data)-1], `"input_tokens_details":{"cached_tokens":10}`))
	for i, d := range data {
		assert.Assert(t, is.Contains(d, `"sequence_number":`+itoa(i)), "event %d", i)
	}
	asked := inner.asked[0]
	assert.Equal(t, asked.Messages[0].Role, model.RoleSystem)
	assert.Equal(t, asked.Messages[0].Content, "You are Codex.")
	assert.Equal(t, asked.Messages[3].Role, model.RoleAssistant)
	assert.Equal(t, asked.Messages[3].ToolCalls[0].Name, "exec_command")
	assert.Equal(t, asked.Messages[4].Role, model.RoleTool)
	assert.Equal(t, asked.Messages[4].ToolCallID, "call_1")
	assert.Assert(t, is.Len(asked.Tools, 2))
	assert.Equal(t, asked.Tools[1].Name, "apply_patch")
	assert.DeepEqual(t, asked.Tools[1].Freeform, &tools.Freeform{Syntax: "lark", Definition: "start: x"})
}

// itemsOf returns the output items of a Responses answer (its last event's response).
func itemsOf(t *testing.T, data []string) []map[string]any {
	t.Helper()
	var done struct {
		Response struct {
			Output []map[string]any `json:"output"`
		} `json:"response"`
	}
	assert.NilError(t, json.Unmarshal([]byte(data[len(data)-1]), &done))
	return done.Response.Output
}

// Codex with a model it knows (gpt-5.5, captured at 0.171.0) offers apply_patch as a
// custom tool with a Lark grammar: the model gets it as a free-form tool; its call,
// however the provider carried it ({"input": PATCH} through a JSON-only one), goes back
// to Codex as a custom_tool_call holding the patch as text (streamed: the item and the
// input's delta and done events); the next request's custom_tool_call and its output
// (a list of parts) are the call and its result, and the call counts as run.
func TestCodexCustomToolRoundTrip(t *testing.T) {
	const patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello world\n*** End Patch\n"
	args, _ := json.Marshal(map[string]string{"input": "*** Begin Patch\n*** Add File: hello.txt\n+hello world\n*** End Patch\n"})
	inner := &scripted{answers: []model.Response{{ToolCalls: []model.ToolCall{{ID: "call_p", Name: "apply_patch", Arguments: args}}}, {Content: "done"}}}
	rec := &events{}
	srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 5, Record: rec})
	tools := `"tools":[{"type":"function","name":"exec_command","description":"Runs","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}},
	  {"type":"custom","name":"apply_patch","description":"Edit files. FREEFORM.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}}]`
	first := `{"model":"gpt-5.5","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"add hello.txt"}]}],` + tools + `}`
	code, names, data := post(t, base+"/v1/responses", map[string]string{"Authorization": "Bearer " + srv.Token()}, first)
	assert.Equal(t, code, http.StatusOK, strings.Join(data, "\n"))
	assert.Check(t, is.Contains(names, "response.custom_tool_call_input.done"))
	out := itemsOf(t, data)
	assert.Assert(t, is.Len(out, 1))
	assert.Equal(t, out[0]["type"], "custom_tool_call")
	assert.Equal(t, out[0]["name"], "apply_patch")
	assert.Equal(t, out[0]["call_id"], "call_p")
	assert.Equal(t, out[0]["input"], patch)
	assert.Check(t, out[0]["arguments"] == nil)
	offered := inner.asked[0].Tools
	assert.Equal(t, offered[1].Name, "apply_patch")
	assert.Assert(t, offered[1].Freeform != nil)
	assert.Equal(t, offered[1].Freeform.Definition, "start: begin_patch hunk+ end_patch")
	assert.Check(t, offered[1].Parameters.Properties["input"] != nil, "a JSON-only provider offers one string")

	second := `{"model":"gpt-5.5","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"add hello.txt"}]},
	  {"type":"custom_tool_call","id":"ctc_runner_1_1","status":"completed","call_id":"call_p","name":"apply_patch","input":` + strconv.Quote(patch) + `},
	  {"type":"custom_tool_call_output","id":"ctco_1","call_id":"call_p","output":[{"type":"input_text","text":"Success. Updated the following files:\nA hello.txt"}]}],` + tools + `}`
	code, _, data = post(t, base+"/v1/responses", map[string]string{"Authorization": "Bearer " + srv.Token()}, second)
	assert.Equal(t, code, http.StatusOK, strings.Join(data, "\n"))
	msgs := inner.asked[1].Messages
	assert.Assert(t, is.Len(msgs, 3))
	assert.Equal(t, msgs[1].ToolCalls[0].Name, "apply_patch")
	assert.Equal(t, argText(msgs[1].ToolCalls[0].Arguments), string(args))
	assert.Equal(t, msgs[2].ToolCallID, "call_p")
	assert.Equal(t, msgs[2].Content, "Success. Updated the following files:\nA hello.txt")
	calls := srv.Outcome().Calls
	assert.Assert(t, is.Len(calls, 1))
	assert.Check(t, calls[0].Executed && calls[0].Success && calls[0].Name == "apply_patch")
	tc := rec.of(transcript.TypeToolCall)
	assert.Assert(t, is.Len(tc, 1))
	assert.Check(t, is.Contains(string(tc[0].(transcript.ToolCall).Args), "Begin Patch"))
}

// Codex with its newest models (gpt-6.2-sol, gpt-5.6-luna: code mode) offers no tools
// list: an additional_tools input item holds namespaces, the default one (functions)
// with a custom exec taking JavaScript, others (clock) with functions; a hosted
// web_search is dropped, and said so in the transcript. The model knows clock's sleep as
// clock__sleep; its calls go back as a custom_tool_call of exec (no namespace: the
// default's) and a function_call of sleep in namespace clock, and such a call in the
// history is clock__sleep again. A client-side tool_search is a function to the model,
// its call a tool_search_call with arguments as an object; the tools a search found are
// offered from then on.
func TestCodexCodeModeNamespacesAndToolSearch(t *testing.T) {
	exec, _ := json.Marshal(map[string]string{"input": "await tools.exec_command({cmd: \"ls\"})"})
	inner := &scripted{answers: []model.Response{{ToolCalls: []model.ToolCall{
		{ID: "c1", Name: "exec", Arguments: exec},
		{ID: "c2", Name: "clock__sleep", Arguments: json.RawMessage(`{"duration_ms":5}`)},
		{ID: "c3", Name: "tool_search", Arguments: json.RawMessage(`"{\"query\":\"gmail\"}"`)},
	}}}}
	rec := &events{}
	srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 5, Record: rec})
	body := `{"model":"gpt-6.2-sol","stream":false,"tools":[{"type":"web_search","external_web_access":true},
	  {"type":"tool_search","execution":"client","description":"Find tools","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}],
	 "input":[{"type":"additional_tools","id":"at_1","role":"developer","tools":[
	   {"type":"namespace","name":"functions","description":"","tools":[{"type":"custom","name":"exec","description":"Run JavaScript","format":{"type":"grammar","syntax":"lark","definition":"start: SOURCE"}},
	     {"type":"function","name":"wait","description":"Wait","parameters":{"type":"object","properties":{"cell_id":{"type":"string"}}}}]},
	   {"type":"namespace","name":"clock","description":"","tools":[{"type":"function","name":"sleep","description":"Sleep","parameters":{"type":"object","properties":{"duration_ms":{"type":"number"}}}}]}]},
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
	  {"type":"function_call","call_id":"old","namespace":"clock","name":"sleep","arguments":"{\"duration_ms\":1}"},
	  {"type":"function_call_output","call_id":"old","output":"slept"},
	  {"type":"tool_search_call","call_id":"ts0","execution":"client","arguments":{"query":"mail"},"status":"completed"},
	  {"type":"tool_search_output","call_id":"ts0","execution":"client","status":"completed","tools":[
	    {"type":"namespace","name":"mcp__gmail","tools":[{"type":"function","name":"send","description":"Send mail","parameters":{"type":"object","properties":{}}}]}]}]}`
	code, _, data := post(t, base+"/v1/responses", map[string]string{"Authorization": "Bearer " + srv.Token()}, body)
	assert.Equal(t, code, http.StatusOK, strings.Join(data, "\n"))
	var names []string
	for _, s := range inner.asked[0].Tools {
		names = append(names, s.Name)
	}
	assert.DeepEqual(t, names, []string{"tool_search", "exec", "wait", "clock__sleep", "mcp__gmail__send"})
	msgs := inner.asked[0].Messages
	assert.Equal(t, msgs[1].ToolCalls[0].Name, "clock__sleep")
	assert.Equal(t, msgs[3].ToolCalls[0].Name, "tool_search")
	assert.Equal(t, argText(msgs[3].ToolCalls[0].Arguments), `{"query":"mail"}`)
	assert.Equal(t, msgs[4].Content, "- mcp__gmail__send: Send mail")
	reqs := rec.of(transcript.TypeRequest)
	assert.DeepEqual(t, reqs[0].(transcript.Request).Dropped, []string{"web_search"})

	var resp struct {
		Output []map[string]any `json:"output"`
	}
	assert.NilError(t, json.Unmarshal([]byte(data[0]), &resp))
	out := resp.Output
	assert.Assert(t, is.Len(out, 3))
	assert.Equal(t, out[0]["type"], "custom_tool_call")
	assert.Equal(t, out[0]["name"], "exec")
	assert.Check(t, out[0]["namespace"] == nil, "the default namespace is not named")
	assert.Equal(t, out[0]["input"], `await tools.exec_command({cmd: "ls"})`)
	assert.Equal(t, out[1]["type"], "function_call")
	assert.Equal(t, out[1]["name"], "sleep")
	assert.Equal(t, out[1]["namespace"], "clock")
	assert.Equal(t, out[1]["arguments"], `{"duration_ms":5}`)
	assert.Equal(t, out[2]["type"], "tool_search_call")
	assert.Equal(t, out[2]["execution"], "client")
	assert.DeepEqual(t, out[2]["arguments"], map[string]any{"query": "gmail"})
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
