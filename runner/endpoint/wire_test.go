package endpoint_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/endpoint"
	"github.com/agentrunner/runner/runner/model"
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
// messages, a custom tool (dropped: never offered to the model), the previous turn's
// function call and its output, stream, fields to ignore.
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
	assert.Assert(t, is.Len(asked.Tools, 1), "the custom tool is not offered")
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
