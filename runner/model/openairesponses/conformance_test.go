package openairesponses

// The official SDK is the authority on the Responses API's wire format; the runner leaves
// it out of the binary (see the package doc) on the strength of these tests. Each one
// plays the same scripted server to the SDK provider the runner used to have
// (sdkoracle_test.go) and to the go-openai client, and requires the same requests of both
// and the same reading of every response. differences_test.go lists the few places where
// they part, on purpose.

import (
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// noParameters is a tool that takes nothing at all.
func noParameters() tools.Spec { return tools.Spec{Name: "now", Description: ""} }

// firstAnswer is reasoning, text and two calls; secondAnswer ends the conversation.
const (
	firstAnswer = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-5-mini-2025-08-07","output":[` +
		`{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"think"}]},` +
		`{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Reading a.go first.","annotations":[]},{"type":"refusal","refusal":"no"}]},` +
		`{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"read_file","arguments":"{\"path\":\"a.go\",\"start_line\":2}"},` +
		`{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_2","name":"list_dir","arguments":"{\"path\":\".\"}"}],` +
		`"usage":{"input_tokens":321,"input_tokens_details":{"cached_tokens":250},"output_tokens":45,"output_tokens_details":{"reasoning_tokens":10},"total_tokens":366},"error":null}`
	secondAnswer = `{"id":"resp_2","object":"response","status":"completed","model":"gpt-5-mini-2025-08-07","output":[` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}]}],"usage":{"input_tokens":400,"output_tokens":3}}`
)

// sse renders events as the API sends them: "event:" and "data:" lines, a blank line
// after each; the event name is the data's type.
func sse(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		typ := "message"
		if i := strings.Index(d, `"type":"`); i >= 0 {
			typ = d[i+len(`"type":"`):]
			typ = typ[:strings.Index(typ, `"`)]
		}
		b.WriteString("event: " + typ + "\ndata: " + d + "\n\n")
	}
	return b.String()
}

func completed(resp string) string {
	return `{"type":"response.completed","sequence_number":9,"response":` + resp + `}`
}

// streamOf is an answer as a stream: created, a few deltas, then completed with the whole.
func streamOf(resp string) string {
	return sse(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Read"}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":1,"delta":"{\"pa"}`,
		completed(resp))
}

// The same two-step conversation through both: the first request (system prompt, user
// text, every catalog tool and one without parameters, every option) and the second (the
// answer's text and calls, both results, history with string-wrapped, malformed and
// empty arguments, an empty assistant turn, empty user text) are the same requests, and
// the answers read the same.
func TestConformanceConversation(t *testing.T) {
	specs := append(catalog.Default().Specs(), noParameters())
	temp, topP, seed := 0.25, 0.5, 42 // exact as float32 too: see TestDifferenceFloat32Options
	first := &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You are terse."},
			{Role: model.RoleSystem, Content: "Use the tools."},
			{Role: model.RoleUser, Content: "Fix the bug in a.go <&>"},
		},
		Tools:   specs,
		Options: model.Options{Temperature: &temp, TopP: &topP, Seed: &seed, MaxTokens: 1024, NumCtx: 8192},
	}
	second := &model.Request{Tools: specs, Options: first.Options, Messages: append(append([]model.Message(nil), first.Messages...),
		model.Message{Role: model.RoleAssistant, Content: "Reading a.go first.", ToolCalls: []model.ToolCall{
			{ID: "call_1", Name: "read_file", Arguments: []byte(`{"path":"a.go","start_line":2}`)},
			{ID: "call_2", Name: "list_dir", Arguments: []byte(`{"path":"."}`)},
		}},
		model.Message{Role: model.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Content: "package a\n"},
		model.Message{Role: model.RoleTool, ToolCallID: "call_2", ToolName: "list_dir", Content: ""},
		model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c3", Name: "run_in_terminal", Arguments: []byte(`"{\"command\":\"go test ./...\"}"`)},
			{ID: "c4", Name: "read_file", Arguments: []byte(`"not json"`)},
			{ID: "c5", Name: "list_dir", Arguments: []byte(``)},
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
				replies = []reply{ok(streamOf(firstAnswer)), ok(streamOf(secondAnswer))}
			}
			sdk, ours, sdkReqs, ourReqs := run(t, stream, replies[:1], first)
			assertSameOutcome(t, sdk, ours)
			assert.Equal(t, ours.Resp.Content, "Reading a.go first.")
			assert.DeepEqual(t, ours.Resp.Usage, model.Usage{PromptTokens: 321, CompletionTokens: 45, CachedPromptTokens: 250})
			assert.Equal(t, len(ours.Resp.ToolCalls), 2)
			assertSameRequests(t, sdkReqs, ourReqs)

			sdk, ours, sdkReqs, ourReqs = run(t, stream, replies, first, second)
			assertSameOutcome(t, sdk, ours)
			assert.Equal(t, ours.Resp.Content, "Fixed.")
			assertSameRequests(t, sdkReqs, ourReqs)
			assert.Equal(t, ourReqs[0].Header.Get("Authorization"), "Bearer sk-oa-key")
			assert.Equal(t, ourReqs[0].Path, "/responses")
		})
	}
}

// A request without tools, instructions or options.
func TestConformanceBareRequest(t *testing.T) {
	for _, stream := range []bool{false, true} {
		body := secondAnswer
		if stream {
			body = streamOf(secondAnswer)
		}
		sdk, ours, sdkReqs, ourReqs := run(t, stream, []reply{ok(body)},
			&model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
		assertSameOutcome(t, sdk, ours)
		assertSameRequests(t, sdkReqs, ourReqs)
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

func apiErr(typ, code, msg string) string {
	return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%q}}`, msg, typ, code)
}

// Errors whose reading does not depend on streaming.
var statusCases = []responseCase{
	{"400 invalid request", []reply{status(400, apiErr("invalid_request_error", "unsupported_parameter", "Unsupported parameter: 'temperature'"))}, "openai-responses at"},
	{"401 bad key", []reply{status(401, apiErr("invalid_request_error", "invalid_api_key", "Incorrect API key provided"))}, "openai-responses at"},
	{"404 unknown model", []reply{status(404, apiErr("invalid_request_error", "model_not_found", "The model does not exist"))}, "openai-responses at"},
	{"429 with Retry-After", []reply{status(429, apiErr("requests", "rate_limit_exceeded", "Rate limit reached"), "Retry-After", "7")}, "openai-responses at"},
	{"500 server error", []reply{status(500, apiErr("server_error", "", "The server had an error"))}, "openai-responses at"},
	{"502 with an empty body", []reply{status(502, "")}, "openai-responses at"},
	{"connection dropped without a response", []reply{raw("")}, "openai-responses at"},
}

// createCases are answers of a request without streaming.
var createCases = []responseCase{
	{"reasoning, text and calls", []reply{ok(firstAnswer)}, ""},
	{"no output", []reply{ok(`{"status":"completed","model":"m","output":[]}`)}, ""},
	{"incomplete: the token cap", []reply{ok(`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"m","output":[{"type":"message","content":[{"type":"output_text","text":"half"}]}]}`)}, ""},
	{"failed", []reply{ok(`{"status":"failed","error":{"code":"server_error","message":"The model failed."},"model":"m","output":[]}`)}, "openai-responses at"},
	{"a call without arguments", []reply{ok(`{"status":"completed","model":"m","output":[{"type":"function_call","call_id":"c","name":"now","arguments":""}]}`)}, ""},
	{"a call with arguments that are not JSON", []reply{ok(`{"status":"completed","model":"m","output":[{"type":"function_call","call_id":"c","name":"now","arguments":"{bad"}]}`)}, ""},
	{"a body that is not JSON", []reply{ok(`{"output":[<html>not json</html>`)}, "openai-responses at"},
	{"a body cut short", []reply{raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n" + firstAnswer[:120])}, "openai-responses at"},
}

// streamCases are answers of a streamed request.
var streamCases = []responseCase{
	{"reasoning, text and calls", []reply{ok(streamOf(firstAnswer))}, ""},
	{"incomplete ends the answer", []reply{ok(sse(`{"type":"response.incomplete","response":{"status":"incomplete","model":"m","output":[{"type":"message","content":[{"type":"output_text","text":"half"}]}]}}`))}, ""},
	{"failed", []reply{ok(sse(`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[]}}`))}, "openai-responses at"},
	{"an error event", []reply{ok(sse(`{"type":"error","code":"server_error","message":"The server had an error","param":null}`))}, "openai-responses at"},
	{"a stream that ends before response.completed", []reply{ok(sse(`{"type":"response.created","response":{"status":"in_progress","output":[]}}`))}, "openai-responses at"},
	{"an empty stream", []reply{ok("")}, "openai-responses at"},
	{"an event that is not JSON", []reply{ok(sse(`{"type":"response.created", <html>`))}, "openai-responses at"},
	{"data lines only", []reply{ok("data: " + completed(secondAnswer) + "\n\n")}, ""},
	{"[DONE] before completed", []reply{ok(sse(`{"type":"response.created","response":{"output":[]}}`) + "data: [DONE]\n\n" + sse(completed(secondAnswer)))}, "openai-responses at"},
	{"CRLF line ends", []reply{ok(strings.ReplaceAll(streamOf(secondAnswer), "\n", "\r\n"))}, ""},
}

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
