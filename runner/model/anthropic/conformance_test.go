package anthropic

// The official SDK is the authority on the Messages API's wire format; the runner leaves
// it out of the binary (see the package doc) on the strength of these tests. Each one
// plays the same scripted server to the SDK provider the runner used to have
// (sdkoracle_test.go) and to the REST client, and requires the same requests of both and
// the same reading of every response. differences_test.go lists the few places where they
// part, on purpose.

import (
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// everyKeyword is a tool whose schema has every keyword a tool may use, empty ones too,
// and a free-form object.
func everyKeyword(t *testing.T) tools.Spec {
	t.Helper()
	props := map[string]any{
		"name":  map[string]any{"type": "string", "description": "", "minLength": 1, "maxLength": 80, "pattern": "^[a-z]+$", "enum": []any{"a", "b"}},
		"count": map[string]any{"type": "integer", "minimum": 0, "maximum": 10.5, "default": 3},
		"tags":  map[string]any{"type": "array", "minItems": 0, "maxItems": 4, "items": map[string]any{"type": "string"}},
		"inner": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "boolean"}}, "required": []any{}},
		"env":   map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
	}
	s, err := tools.RawSchema(map[string]any{"type": "object", "properties": props, "required": []any{"name"}, "additionalProperties": false})
	assert.NilError(t, err)
	return tools.Spec{Name: "every_keyword", Description: "", Parameters: s}
}

// noParameters is a tool that takes nothing at all.
func noParameters() tools.Spec { return tools.Spec{Name: "now", Description: "The time."} }

// firstAnswer is text and two calls; secondAnswer ends the conversation.
const (
	firstAnswer = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[` +
		`{"type":"text","text":"Reading a.go first."},` +
		`{"type":"tool_use","id":"toolu_01","name":"read_file","input":{"path":"a.go","start_line":2}},` +
		`{"type":"tool_use","id":"toolu_02","name":"list_dir","input":{"path":"."}}],` +
		`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":21,"cache_creation_input_tokens":50,"cache_read_input_tokens":250,"output_tokens":45}}`
	secondAnswer = `{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",` +
		`"content":[{"type":"text","text":"Fixed."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":400,"output_tokens":3}}`
)

// sse renders events as the API sends them: "event:" and "data:" lines, a blank line
// after each. Arguments are name, data, name, data...
func sse(nameData ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(nameData); i += 2 {
		b.WriteString("event: " + nameData[i] + "\n" + "data: " + nameData[i+1] + "\n\n")
	}
	return b.String()
}

const (
	messageStart = `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",` +
		`"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":21,"cache_creation_input_tokens":50,"cache_read_input_tokens":250,"output_tokens":1}}}`
	messageStop = `{"type":"message_stop"}`
)

func blockStart(i int, block string) string {
	return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block)
}

func textDelta(i int, text string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, i, text)
}

func jsonDelta(i int, partial string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, partial)
}

func blockStop(i int) string { return fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i) }

func messageDelta(usage string) string {
	return `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":` + usage + `}`
}

// firstAnswerStream is firstAnswer in pieces, with a ping and a thinking block before it
// as extended thinking sends them.
var firstAnswerStream = sse(
	"message_start", messageStart,
	"ping", `{"type": "ping"}`,
	"content_block_start", blockStart(0, `{"type":"thinking","thinking":"","signature":""}`),
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The bug is likely in a.go."}}`,
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}`,
	"content_block_stop", blockStop(0),
	"content_block_start", blockStart(1, `{"type":"text","text":""}`),
	"content_block_delta", textDelta(1, "Reading "),
	"content_block_delta", textDelta(1, "a.go first."),
	"content_block_stop", blockStop(1),
	"content_block_start", blockStart(2, `{"type":"tool_use","id":"toolu_01","name":"read_file","input":{}}`),
	"content_block_delta", jsonDelta(2, ""),
	"content_block_delta", jsonDelta(2, `{"path": "a.go",`),
	"content_block_delta", jsonDelta(2, ` "start_line": 2}`),
	"content_block_stop", blockStop(2),
	"content_block_start", blockStart(3, `{"type":"tool_use","id":"toolu_02","name":"list_dir","input":{}}`),
	"content_block_delta", jsonDelta(3, `{"path":"."}`),
	"content_block_stop", blockStop(3),
	"message_delta", messageDelta(`{"output_tokens":45}`),
	"message_stop", messageStop,
)

// secondAnswerStream is secondAnswer in pieces.
var secondAnswerStream = sse(
	"message_start", strings.Replace(messageStart, `"input_tokens":21`, `"input_tokens":100`, 1),
	"content_block_start", blockStart(0, `{"type":"text","text":""}`),
	"content_block_delta", textDelta(0, "Fixed."),
	"content_block_stop", blockStop(0),
	"message_delta", messageDelta(`{"output_tokens":3}`),
	"message_stop", messageStop,
)

// The same two-step conversation through both: the first request (system prompt, user
// text, every catalog tool, a tool with every keyword and one without parameters, every
// option) and the second (the answer's text and calls, both results in one user turn,
// history with string-wrapped, malformed and empty arguments, an empty assistant turn,
// empty user text) are the same requests, and the answers read the same.
func TestConformanceConversation(t *testing.T) {
	specs := append(catalog.Default().Specs(), everyKeyword(t), noParameters())
	temp, topP, seed := 0.123456789, 0.9, 42
	first := &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You are terse."},
			{Role: model.RoleSystem, Content: "Use the tools."},
			{Role: model.RoleUser, Content: "Fix the bug in a.go <&>"},
		},
		Tools:   specs,
		Options: model.Options{Temperature: &temp, TopP: &topP, Seed: &seed, MaxTokens: 1024, NumCtx: 8192},
	}
	calls := []model.ToolCall{
		{ID: "toolu_01", Name: "read_file", Arguments: []byte(`{"path":"a.go","start_line":2}`)},
		{ID: "toolu_02", Name: "list_dir", Arguments: []byte(`{"path":"."}`)},
	}
	second := &model.Request{Tools: specs, Options: first.Options, Messages: append(append([]model.Message(nil), first.Messages...),
		model.Message{Role: model.RoleAssistant, Content: "Reading a.go first.", ToolCalls: calls},
		model.Message{Role: model.RoleTool, ToolCallID: "toolu_01", ToolName: "read_file", Content: "package a\n"},
		model.Message{Role: model.RoleTool, ToolCallID: "toolu_02", ToolName: "list_dir", Content: ""},
		model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c3", Name: "run_in_terminal", Arguments: []byte(`"{\"command\":\"go test ./...\",\"n\":12345678901234567890}"`)},
			{ID: "c4", Name: "read_file", Arguments: []byte(`not json`)},
			{ID: "c5", Name: "list_dir", Arguments: []byte(``)},
			{ID: "c6", Name: "list_dir", Arguments: []byte(`[1]`)},
		}},
		model.Message{Role: model.RoleTool, ToolCallID: "c3", ToolName: "run_in_terminal", Content: "ok"},
		model.Message{Role: model.RoleUser, Content: "Now summarise."},
		model.Message{Role: model.RoleAssistant},
		model.Message{Role: model.RoleUser, Content: ""},
	)}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			replies := []reply{ok(firstAnswer), ok(secondAnswer)}
			if stream {
				replies = []reply{ok(firstAnswerStream), ok(secondAnswerStream)}
			}
			sdk, ours, sdkReqs, ourReqs := run(t, stream, replies[:1], first)
			assertSameOutcome(t, sdk, ours)
			assert.Equal(t, ours.Resp.Content, "Reading a.go first.")
			// The prompt is input_tokens plus the cache's reads and writes; the reads cost less.
			assert.DeepEqual(t, ours.Resp.Usage, model.Usage{PromptTokens: 321, CompletionTokens: 45, CachedPromptTokens: 250})
			assert.Equal(t, len(ours.Resp.ToolCalls), 2)
			assertSameRequests(t, sdkReqs, ourReqs)

			sdk, ours, sdkReqs, ourReqs = run(t, stream, replies, first, second)
			assertSameOutcome(t, sdk, ours)
			assert.Equal(t, ours.Resp.Content, "Fixed.")
			assertSameRequests(t, sdkReqs, ourReqs)
			assert.Equal(t, ourReqs[0].Header.Get("X-Api-Key"), "sk-ant-key")
			assert.Equal(t, ourReqs[0].Header.Get("Anthropic-Version"), "2023-06-01")
			assert.Equal(t, ourReqs[0].Path, "/v1/messages")
		})
	}
}

// A request without tools, system prompt or options sends the default max_tokens.
func TestConformanceBareRequest(t *testing.T) {
	for _, stream := range []bool{false, true} {
		body := secondAnswer
		if stream {
			body = secondAnswerStream
		}
		sdk, ours, sdkReqs, ourReqs := run(t, stream, []reply{ok(body)},
			&model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
		assertSameOutcome(t, sdk, ours)
		assertSameRequests(t, sdkReqs, ourReqs)
		assert.Assert(t, strings.Contains(string(ourReqs[0].Body), `"max_tokens":4096`), "%s", ourReqs[0].Body)
	}
}

// responseCase is a script of replies, read by both.
type responseCase struct {
	name    string
	replies []reply
	// want is what the client must come to: "" an answer, else the error's start.
	want string
}

func status(code int, body string, header ...string) reply {
	r := reply{Status: code, Body: body, Header: map[string]string{}}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header[header[i]] = header[i+1]
	}
	return r
}

func apiErr(typ, msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_1"}`, typ, msg)
}

// Errors whose reading does not depend on streaming: the status, the error object or
// whatever a proxy sent, and Retry-After.
var statusCases = []responseCase{
	{"400 invalid request", []reply{status(400, apiErr("invalid_request_error", "messages: at least one message is required"))}, "anthropic at"},
	{"401 bad key", []reply{status(401, apiErr("authentication_error", "invalid x-api-key"))}, "anthropic at"},
	{"404 unknown model", []reply{status(404, apiErr("not_found_error", "model: claude-x"))}, "anthropic at"},
	{"413 too large", []reply{status(413, apiErr("request_too_large", "Request exceeds the maximum allowed number of bytes."))}, "anthropic at"},
	{"429 with Retry-After", []reply{status(429, apiErr("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), "Retry-After", "7")}, "anthropic at"},
	{"429 with a date in Retry-After", []reply{status(429, apiErr("rate_limit_error", "slow down"), "Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")}, "anthropic at"},
	{"500 api error", []reply{status(500, apiErr("api_error", "Internal server error"))}, "anthropic at"},
	{"529 overloaded", []reply{status(529, apiErr("overloaded_error", "Overloaded"))}, "anthropic at"},
	{"503 from a proxy, HTML", []reply{status(503, "<html><body>upstream unavailable</body></html>")}, "anthropic at"},
	{"502 with an empty body", []reply{status(502, "")}, "anthropic at"},
	{"401 JSON without an error object", []reply{status(401, `{"message":"no key"}`)}, "anthropic at"},
	{"403 error as a string", []reply{status(403, `{"error":"forbidden"}`)}, "anthropic at"},
	{"an error object without a type", []reply{status(400, `{"error":{"message":"bad"}}`)}, "anthropic at"},
	{"connection dropped without a response", []reply{raw("")}, "anthropic at"},
	{"an error body cut short", []reply{raw("HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"type\":\"error\"")}, "anthropic at"},
}

// createCases are answers of a request without streaming.
var createCases = []responseCase{
	{"text and calls", []reply{ok(firstAnswer)}, ""},
	{"thinking, then text", []reply{ok(`{"model":"m","content":[{"type":"thinking","thinking":"hmm","signature":"c2ln"},{"type":"redacted_thinking","data":"x"},{"type":"text","text":"a"},{"type":"text","text":"b"}],"usage":{"input_tokens":1,"output_tokens":2}}`)}, ""},
	{"a call without input, one with null input", []reply{ok(`{"model":"m","content":[{"type":"tool_use","id":"t1","name":"now"},{"type":"tool_use","id":"t2","name":"now","input":null}],"usage":{}}`)}, ""},
	{"a call whose input is a big number and nested", []reply{ok(`{"model":"m","content":[{"type":"tool_use","id":"t1","name":"f","input":{"n":12345678901234567890,"o":{"a":[1,"<&>"]}}}]}`)}, ""},
	{"no content", []reply{ok(`{"model":"m","content":[],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":0}}`)}, ""},
	{"server tool use and unknown blocks", []reply{ok(`{"model":"m","content":[{"type":"server_tool_use","id":"s1","name":"web_search","input":{"q":"x"}},{"type":"web_search_tool_result","tool_use_id":"s1","content":[]},{"type":"text","text":"ok"}]}`)}, ""},
	{"a body that is not JSON", []reply{ok(`{"content":[<html>not json</html>`)}, "anthropic at"},
	{"an empty body", []reply{ok("")}, "anthropic at"},
	{"a truncated JSON document", []reply{ok(`{"model":"m","content":[{"type":"text","text":"hal`)}, "anthropic at"},
	{"JSON after JSON", []reply{ok(`{"model":"m","content":[{"type":"text","text":"a"}]} {"more":1}`)}, ""},
	{"HTML with status 200", []reply{status(200, "<html>login</html>", "Content-Type", "text/html")}, "anthropic at"},
	{"JSON with a +json type", []reply{status(200, secondAnswer, "Content-Type", "application/vnd.api+json")}, ""},
	{"a body cut short", []reply{raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n" + firstAnswer[:120])}, "anthropic at"},
}

// streamCases are answers of a streamed request.
var streamCases = []responseCase{
	{"text, thinking and calls in pieces", []reply{ok(firstAnswerStream)}, ""},
	{"CRLF line ends, data: without a space", []reply{ok(strings.ReplaceAll(strings.ReplaceAll(firstAnswerStream, "\n", "\r\n"), "data: ", "data:"))}, ""},
	{"comments, ids and retry fields", []reply{ok(": keep-alive\n\nid: 7\nretry: 100\n" + secondAnswerStream)}, ""},
	{"data split over two lines", []reply{ok("event: message_start\ndata: " + messageStart[:40] + "\ndata: " + messageStart[40:] + "\n\n" +
		strings.SplitN(secondAnswerStream, "\n\n", 2)[1])}, ""},
	{"an event without a name is skipped", []reply{ok("data: " + blockStart(5, `{"type":"text","text":""}`) + "\n\n" + secondAnswerStream)}, ""},
	{"an event with empty data is skipped", []reply{ok("event: content_block_start\ndata: \n\n" + secondAnswerStream)}, ""},
	{"message_stop without a blank line after it", []reply{ok(strings.TrimRight(secondAnswerStream, "\n"))}, "anthropic at"},
	{"a stream that ends before message_stop", []reply{ok(sse("message_start", messageStart, "content_block_start", blockStart(0, `{"type":"text","text":""}`), "content_block_delta", textDelta(0, "half an ans")))}, "anthropic at"},
	{"an empty stream", []reply{ok("")}, "anthropic at"},
	{"an event that is not JSON", []reply{ok(sse("message_start", `{"type": <html>`))}, "anthropic at"},
	{"a delta before its block", []reply{ok(sse("message_start", messageStart, "content_block_delta", textDelta(0, "x")))}, "anthropic at"},
	{"a block that starts out of order", []reply{ok(sse("message_start", messageStart, "content_block_start", blockStart(1, `{"type":"text","text":""}`)))}, "anthropic at"},
	{"a stop of a block that never started", []reply{ok(sse("message_start", messageStart, "content_block_stop", blockStop(0)))}, "anthropic at"},
	{"a call whose pieces are not JSON", []reply{ok(sse("message_start", messageStart,
		"content_block_start", blockStart(0, `{"type":"tool_use","id":"t1","name":"f","input":{}}`),
		"content_block_delta", jsonDelta(0, `{"path": "a.g`),
		"content_block_stop", blockStop(0),
		"message_delta", messageDelta(`{"output_tokens":9}`), "message_stop", messageStop))}, ""},
	{"a call that never stops", []reply{ok(sse("message_start", messageStart,
		"content_block_start", blockStart(0, `{"type":"tool_use","id":"t1","name":"f","input":{}}`),
		"content_block_delta", jsonDelta(0, `{"a":`),
		"message_stop", messageStop))}, ""},
	{"a call that starts with input", []reply{ok(sse("message_start", messageStart,
		"content_block_start", blockStart(0, `{"type":"tool_use","id":"t1","name":"f","input":{"a":1}}`),
		"content_block_stop", blockStop(0), "message_stop", messageStop))}, ""},
	{"usage in message_delta: input when sent, output always", []reply{ok(sse("message_start", messageStart,
		"message_delta", messageDelta(`{"input_tokens":500,"output_tokens":7}`),
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`,
		"message_stop", messageStop))}, ""},
	{"a second message_start starts over", []reply{ok(sse("message_start", messageStart,
		"content_block_start", blockStart(0, `{"type":"text","text":"lost"}`),
		"message_start", strings.Replace(messageStart, "claude-sonnet-4-5-20250929", "other", 1),
		"content_block_start", blockStart(0, `{"type":"text","text":"kept"}`),
		"message_stop", messageStop))}, ""},
	{"events after message_stop", []reply{ok(secondAnswerStream + sse("content_block_start", blockStart(1, `{"type":"text","text":" more"}`)))}, ""},
	{"an unknown event", []reply{ok(sse("message_start", messageStart, "surprise", `{"type":"surprise","x":1}`, "message_stop", messageStop))}, ""},
	{"a stream cut by a failed read", []reply{raw("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
		chunk(sse("message_start", messageStart)) + "40\r\nevent: content_block_start\ndata: {\"ty")}, "anthropic at"},
	{"JSON instead of events", []reply{ok(secondAnswer)}, "anthropic at"},
}

// chunk is s as one chunk of a chunked body.
func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

// Every response read the same by both, and every request the same, streamed or not.
func TestConformanceResponses(t *testing.T) {
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
	for _, stream := range []bool{false, true} {
		cases := append(append([]responseCase(nil), statusCases...), createCases...)
		if stream {
			cases = append(append([]responseCase(nil), statusCases...), streamCases...)
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("stream=%v/%s", stream, c.name), func(t *testing.T) {
				sdk, ours, sdkReqs, ourReqs := run(t, stream, c.replies, req)
				assertSameOutcome(t, sdk, ours)
				assertSameRequests(t, sdkReqs, ourReqs)
				if c.want == "" {
					assert.Assert(t, ours.Err == nil, "%v", ours.Err)
				} else {
					assert.Assert(t, ours.Err != nil && strings.HasPrefix(ours.Err.Error(), c.want), "%v", ours.Err)
				}
			})
		}
	}
}
