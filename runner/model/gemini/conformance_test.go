package gemini

// The official SDK is the authority on the Gemini wire format; the runner leaves it out
// of the binary (see the package doc) on the strength of these tests. Each one plays the
// same scripted server to the SDK provider the runner used to have (sdkoracle_test.go)
// and to the REST client, and requires the same requests of both and the same reading of
// every response. differences_test.go lists the few places where they part, on purpose.

import (
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// everyKeyword is a tool whose schema uses every keyword tools/format keeps for Gemini,
// empty ones too, and one free-form object, which sends the whole schema as
// parametersJsonSchema.
func everyKeyword(t *testing.T, freeForm bool) tools.Spec {
	t.Helper()
	props := map[string]any{
		"name":  map[string]any{"type": "string", "description": "", "minLength": 1, "maxLength": 80, "pattern": "^[a-z]+$", "enum": []any{"a", "b"}},
		"count": map[string]any{"type": "integer", "minimum": 0, "maximum": 10.5, "default": 3, "nullable": false},
		"mode":  map[string]any{"type": "number", "enum": []any{1, 2}},
		"tags":  map[string]any{"type": "array", "minItems": 0, "maxItems": 4, "items": map[string]any{"type": "string"}},
		"inner": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "boolean"}}, "required": []any{}},
	}
	if freeForm {
		props["env"] = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	}
	s, err := tools.RawSchema(map[string]any{"type": "object", "properties": props, "required": []any{"name", "env"}})
	assert.NilError(t, err)
	name := "every_keyword"
	if freeForm {
		name += "_free_form"
	}
	return tools.Spec{Name: name, Description: "", Parameters: s}
}

// firstAnswer is text, a thought, and two calls, one with a thoughtSignature; secondAnswer
// ends the conversation.
const (
	firstAnswer = `{"candidates":[{"content":{"role":"model","parts":[` +
		`{"text":"Reading a.go first."},{"text":"The bug is likely in a.go.","thought":true},` +
		`{"functionCall":{"name":"read_file","args":{"path":"a.go","start_line":2}},"thoughtSignature":"c2lnbmF0dXJlLTE="},` +
		`{"functionCall":{"name":"list_dir","args":{"path":"."}}}]},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":321,"cachedContentTokenCount":250,"candidatesTokenCount":45,"totalTokenCount":366},"modelVersion":"gemini-2.5-flash-001","responseId":"r1"}`
	secondAnswer = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Fixed."}]},"finishReason":"STOP"}],` +
		`"usageMetadata":{"promptTokenCount":400,"candidatesTokenCount":3},"modelVersion":"gemini-2.5-flash-001"}`
)

// sse renders responses as the stream sends them: one data line and a blank line each.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\r\n\r\n")
	}
	return b.String()
}

// firstAnswerStream is firstAnswer in pieces: text, the thought, the calls, then the
// finish reason with the usage.
var firstAnswerStream = sse(
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"Reading "}]}}],"modelVersion":"gemini-2.5-flash-001"}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"a.go first."},{"text":"The bug is likely in a.go.","thought":true}]}}],"usageMetadata":{"promptTokenCount":321}}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{"path":"a.go","start_line":2}},"thoughtSignature":"c2lnbmF0dXJlLTE="},{"functionCall":{"name":"list_dir","args":{"path":"."}}}]}}]}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":321,"cachedContentTokenCount":250,"candidatesTokenCount":45},"modelVersion":"gemini-2.5-flash-001"}`,
)

// The same two-step conversation through both: the first request (system prompt, user
// text, every catalog tool and the keyword tool, every option) and the second (the
// answer's text and calls with the signature sent back, both results in one user turn,
// history with string-wrapped, malformed and empty arguments, an empty assistant turn)
// are the same requests, and the answers read the same.
func TestConformanceConversation(t *testing.T) {
	specs := append(catalog.Default().Specs(), everyKeyword(t, false), everyKeyword(t, true))
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
		{ID: "call_1_1", Name: "read_file", Arguments: []byte(`{"path":"a.go","start_line":2}`)},
		{ID: "call_1_2", Name: "list_dir", Arguments: []byte(`{"path":"."}`)},
	}
	second := &model.Request{Tools: specs, Options: first.Options, Messages: append(append([]model.Message(nil), first.Messages...),
		model.Message{Role: model.RoleAssistant, Content: "Reading a.go first.", ToolCalls: calls},
		model.Message{Role: model.RoleTool, ToolCallID: "call_1_1", ToolName: "read_file", Content: "package a\n"},
		model.Message{Role: model.RoleTool, ToolCallID: "call_1_2", ToolName: "list_dir", Content: ""},
		model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c3", Name: "run_in_terminal", Arguments: []byte(`"{\"command\":\"go test ./...\",\"n\":12345678901234567890}"`)},
			{ID: "c4", Name: "read_file", Arguments: []byte(`not json`)},
			{ID: "c5", Name: "list_dir", Arguments: []byte(`{}`)},
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
				replies = []reply{ok(firstAnswerStream), ok(sse(secondAnswer))}
			}
			sdk, ours, sdkReqs, ourReqs := run(t, stream, replies[:1], first)
			assertSameOutcome(t, sdk, ours)
			assert.Equal(t, ours.Resp.Content, "Reading a.go first.")
			assert.DeepEqual(t, ours.Resp.Usage, model.Usage{PromptTokens: 321, CompletionTokens: 45, CachedPromptTokens: 250})
			assertSameRequests(t, sdkReqs, ourReqs)

			// The second step on the same model, which saw the signature in the first.
			sdk, ours, sdkReqs, ourReqs = run(t, stream, replies, first, second)
			assertSameOutcome(t, sdk, ours)
			assert.Equal(t, ours.Resp.Content, "Fixed.")
			assertSameRequests(t, sdkReqs, ourReqs)
			assert.Assert(t, strings.Contains(string(ourReqs[1].Body), `"thoughtSignature":"c2lnbmF0dXJlLTE="`), "%s", ourReqs[1].Body)
			// 90.5 s left when the step began: 91, or 90 once half a second has gone by.
			timeout := ourReqs[0].Header.Get("X-Server-Timeout")
			assert.Assert(t, timeout == "91" || timeout == "90", "x-server-timeout %q", timeout)
			assert.Equal(t, ourReqs[0].Header.Get("X-Goog-Api-Key"), "gm-key")
		})
	}
}

// A request without tools, system prompt or options still sends generationConfig, {}.
func TestConformanceBareRequest(t *testing.T) {
	for _, stream := range []bool{false, true} {
		body := secondAnswer
		if stream {
			body = sse(secondAnswer)
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

// Errors whose reading does not depend on streaming: the status, the error object or
// whatever a proxy sent, and Retry-After.
var statusCases = []responseCase{
	{"400 error object", []reply{status(400, `{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified","status":"INVALID_ARGUMENT"}}`)}, "gemini at"},
	{"429 with Retry-After", []reply{status(429, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, "Retry-After", "7")}, "gemini at"},
	{"429 without a code in the body", []reply{status(429, `{"error":{"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`, "Retry-After", "120")}, "gemini at"},
	{"500 error object", []reply{status(500, `{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`)}, "gemini at"},
	{"503 from a proxy, HTML", []reply{status(503, "<html><body>upstream unavailable</body></html>")}, "gemini at"},
	{"502 with an empty body", []reply{status(502, "")}, "gemini at"},
	{"401 JSON without an error object", []reply{status(401, `{"message":"no key"}`)}, "gemini at"},
	{"403 error as a string", []reply{status(403, `{"error":"API key not valid"}`)}, "gemini at"},
	{"body code differs from the status", []reply{status(500, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)}, "gemini at"},
	{"connection dropped without a response", []reply{raw("")}, "gemini at"},
}

// generateCases are answers of generateContent.
var generateCases = []responseCase{
	{"text, thought and calls", []reply{ok(firstAnswer)}, ""},
	{"a call with the server's id, and one without args", []reply{ok(`{"candidates":[{"content":{"role":"model","parts":[` +
		`{"functionCall":{"id":"fc-9","name":"grep","args":{"pattern":"x","paths":["a","b"],"n":1.5e3}}},{"functionCall":{"name":"list_dir"}},{"functionCall":{"name":"f","args":null}}]},"finishReason":"STOP"}]}`)}, ""},
	{"a candidate without content", []reply{ok(`{"candidates":[{"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":9}}`)}, ""},
	{"no candidates", []reply{ok(`{"usageMetadata":{"promptTokenCount":5},"modelVersion":"m"}`)}, "gemini at"},
	{"an empty body", []reply{ok("")}, "gemini at"},
	{"an error object in a 200", []reply{ok(`{"error":{"code":500,"message":"x","status":"INTERNAL"}}`)}, "gemini at"},
	{"blocked prompt", []reply{ok(`{"promptFeedback":{"blockReason":"SAFETY","blockReasonMessage":"The prompt was blocked."},"usageMetadata":{"promptTokenCount":12}}`)}, "gemini at"},
	{"a body that is not JSON", []reply{ok(`{"candidates":[<html>not json</html>`)}, "gemini at"},
	{"args that are not an object", []reply{ok(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"{}"}}]},"finishReason":"STOP"}]}`)}, "gemini at"},
	{"a thoughtSignature that is not base64", []reply{ok(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"},"thoughtSignature":"%%"}]},"finishReason":"STOP"}]}`)}, "gemini at"},
	{"a body cut short", []reply{raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n" + firstAnswer[:120])}, "gemini at"},
	{"continued twice", []reply{
		ok(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Part one, "}]},"finishReason":"CONTINUATION","continuationToken":"dG9rLTE="}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3},"modelVersion":"v-1"}`),
		ok(`{"candidates":[{"content":{"role":"model","parts":[{"text":"part two, "},{"functionCall":{"name":"f","args":{"x":1}}}]},"continuationToken":"dG9rLTI="}],"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":4}}`),
		ok(`{"candidates":[{"content":{"role":"model","parts":[{"text":"end."},{"functionCall":{"name":"g"}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":5},"modelVersion":"v-3"}`),
	}, ""},
	{"continued, then no candidates", []reply{
		ok(`{"candidates":[{"content":{"parts":[{"text":"Part one."}]},"finishReason":"CONTINUATION","continuationToken":"dG9r"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3}}`),
		ok(`{"promptFeedback":{"blockReason":"OTHER","blockReasonMessage":"late"},"usageMetadata":{"promptTokenCount":1}}`),
	}, ""},
	{"continued, then refused", []reply{
		ok(`{"candidates":[{"content":{"parts":[{"text":"Part one."}]},"finishReason":"CONTINUATION","continuationToken":"dG9r"}]}`),
		status(429, `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`, "Retry-After", "3"),
	}, "gemini at"},
	{"CONTINUATION without a token", []reply{ok(`{"candidates":[{"content":{"parts":[{"text":"only part."}]},"finishReason":"CONTINUATION"}]}`)}, ""},
}

// streamCases are answers of streamGenerateContent.
var streamCases = []responseCase{
	{"text, thought and calls in pieces", []reply{ok(firstAnswerStream)}, ""},
	{"LF line ends, data: without a space", []reply{ok(strings.ReplaceAll(strings.ReplaceAll(firstAnswerStream, "\r\n", "\n"), "data: ", "data:"))}, ""},
	{"the last event without a blank line after it", []reply{ok(strings.TrimRight(firstAnswerStream, "\r\n"))}, ""},
	{"a stream that ends before a finishReason", []reply{ok(sse(`{"candidates":[{"content":{"parts":[{"text":"half an ans"}]}}]}`))}, "gemini at"},
	{"an empty stream", []reply{ok("")}, "gemini at"},
	{"no candidates", []reply{ok(sse(`{"usageMetadata":{"promptTokenCount":5}}`))}, "gemini at"},
	{"blocked prompt", []reply{ok(sse(`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT","blockReasonMessage":"no"},"usageMetadata":{"promptTokenCount":12}}`))}, "gemini at"},
	{"an error event after text", []reply{ok(sse(`{"candidates":[{"content":{"parts":[{"text":"Hel"}]}}]}`, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`))}, "gemini at"},
	{"an error event without a code", []reply{ok(sse(`{"error":{"message":"stopped","status":"INTERNAL"}}`))}, "gemini at"},
	{"an error object on a line of its own", []reply{ok("data: " + `{"candidates":[{"content":{"parts":[{"text":"Hel"}]}}]}` + "\n\n" + `{"error":{"code":500,"message":"boom","status":"INTERNAL"}}` + "\n\n")}, "gemini at"},
	{"an error that is not an error object", []reply{ok(sse(`{"error":"text","candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`))}, ""},
	{"an event that is not JSON", []reply{ok(sse(`{"candidates": <html>`, `{"candidates":[{"finishReason":"STOP"}]}`))}, "gemini at"},
	{"a line that is neither data nor an error", []reply{ok("data: {}\n\nhello world\n\n")}, "gemini at"},
	{"FINISH_REASON_UNSPECIFIED ends the answer", []reply{ok(sse(`{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"FINISH_REASON_UNSPECIFIED"}]}`))}, ""},
	{"a stream cut by a failed read", []reply{raw("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
		chunk(sse(`{"candidates":[{"content":{"parts":[{"text":"Hel"}]}}]}`)) + "40\r\ndata: {\"candidates\": [{\"con")}, "gemini at"},
	{"continued after CONTINUATION", []reply{
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"modelVersion":"v1"}`,
			`{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"CONTINUATION","continuationToken":"dG9r"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2}}`)),
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"c"},{"functionCall":{"name":"f","args":{"k":"v"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":6,"candidatesTokenCount":3},"modelVersion":"v2"}`)),
	}, ""},
	{"resumed from a checkpoint after a drop", []reply{
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"continuationToken":"Y2hrLTE="}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1}}`)),
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2}}`)),
	}, ""},
	{"resumed after a failed read", []reply{
		raw("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunk(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"continuationToken":"Y2hr"}]}`)) + "40\r\ndata: {"),
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}]}`)),
	}, ""},
	{"resumed, refused", []reply{
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"CONTINUATION","continuationToken":"dG9r"}]}`)),
		status(429, `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`, "Retry-After", "3"),
	}, "gemini at"},
	{"resumed, then empty until the SDK gives up", []reply{
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"continuationToken":"dG9r"}]}`)),
		ok(sse(`{"candidates":[{"continuationToken":"dG9r"}]}`)), ok(""), ok(""), ok(""),
	}, "gemini at"},
	{"resumed after CONTINUATION, then empty until the SDK gives up", []reply{
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"CONTINUATION","continuationToken":"dG9r"}]}`)),
		ok(""), ok(""), ok(""), ok(""),
	}, "gemini at"},
	{"a failed read after a checkpoint, then empty until the SDK gives up", []reply{
		raw("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunk(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"continuationToken":"Y2hr"}]}`)) + "40\r\ndata: {"),
		ok(""), ok(""), ok(""), ok(""),
	}, "gemini at"},
	{"a checkpoint with a finish reason that ends the answer", []reply{
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"MAX_TOKENS","continuationToken":"dG9r"}]}`)),
	}, ""},
	{"prompt feedback stops a continuation", []reply{
		ok(sse(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"CONTINUATION","continuationToken":"dG9r"}],"promptFeedback":{}}`)),
	}, ""},
}

// chunk is s as one chunk of a chunked body.
func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

// Every response read the same by both, and every request the same, streamed or not.
func TestConformanceResponses(t *testing.T) {
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
	for _, stream := range []bool{false, true} {
		cases := append(append([]responseCase(nil), statusCases...), generateCases...)
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
