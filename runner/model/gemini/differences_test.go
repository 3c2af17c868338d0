package gemini

// Where the REST client parts from the SDK provider it replaced, on purpose; each test
// pins both sides, so that a change on either shows.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
)

var hi = &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}

// A 200 whose body is null made the SDK panic (a nil map in deserializeUnaryResponse),
// taking the runner down; the client reads it as an answer without candidates.
func TestDifferenceNullBody(t *testing.T) {
	rec := startRecorder(t, []reply{ok("null"), ok("null")})
	sdk, err := newSDKModel(Config{Model: "m", APIKey: "k", BaseURL: rec.URL})
	assert.NilError(t, err)
	panicked := func() (p any) {
		defer func() { p = recover() }()
		_, _ = sdk.Step(context.Background(), hi)
		return nil
	}()
	assert.Assert(t, panicked != nil, "the SDK no longer panics on null: move this case to the conformance test")
	ours, err := New(Config{Model: "m", APIKey: "k", BaseURL: rec.URL})
	assert.NilError(t, err)
	_, err = ours.Step(context.Background(), hi)
	assert.ErrorContains(t, err, "unexpected response: no candidates")
}

// A stream that ends inside an event, with no error from the connection (a server that
// closed mid-write), was an unexpected response to the SDK, not retried; to the client it
// is what it most likely is, a dropped connection, retried.
func TestDifferenceTornLastEvent(t *testing.T) {
	torn := ok("data: " + `{"candidates":[{"content":{"parts":[{"text":"Hel"}]}}]}` + "\n\ndata: {\"candidates\": [{\"con")
	sdk, ours, _, _ := run(t, true, []reply{torn}, hi)
	assert.Assert(t, sdk.Err != nil && !sdk.Err.Temporary && strings.HasPrefix(sdk.Err.Message, "unexpected response"), "%v", sdk.Err)
	assert.Assert(t, ours.Err != nil && ours.Err.Temporary && strings.HasPrefix(ours.Err.Message, "connection dropped"), "%v", ours.Err)
}

// The SDK provider ran every response through wire.Fix, meant for OpenAI's and Ollama's
// "function":{"arguments"}: a Gemini call whose own arguments had that shape was rewritten.
// The client leaves arguments as sent, and keeps every digit of a number the SDK's
// map[string]any turned into a float.
func TestDifferenceArgumentsAsSent(t *testing.T) {
	body := `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":` +
		`{"function":{"arguments":"kept"},"n":12345678901234567890}}}]},"finishReason":"STOP"}]}`
	sdk, ours, _, _ := run(t, false, []reply{ok(body)}, hi)
	assert.Equal(t, string(ours.Resp.ToolCalls[0].Arguments), `{"function":{"arguments":"kept"},"n":12345678901234567890}`)
	assert.Equal(t, string(sdk.Resp.ToolCalls[0].Arguments), `{"function":{"arguments":{"\u0000raw_arguments":"kept"}},"n":12345678901234567000}`)
}

// Server-sent events may carry comments (a proxy's keep-alive) and event, id and retry
// fields; the SDK failed on any line but data:, the client skips them.
func TestDifferenceSSEComments(t *testing.T) {
	body := ": keep-alive\n\nevent: message\nid: 1\ndata: " +
		`{"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}` + "\n\n"
	sdk, ours, _, _ := run(t, true, []reply{ok(body)}, hi)
	assert.Assert(t, sdk.Err != nil && strings.Contains(sdk.Err.Message, "invalid stream chunk"), "%v", sdk.Err)
	assert.Assert(t, ours.Err == nil, "%v", ours.Err)
	assert.Equal(t, ours.Resp.Content, "ok")
}

// A blocked prompt without a message: the SDK provider left a trailing space.
func TestDifferenceBlockedWithoutMessage(t *testing.T) {
	for _, stream := range []bool{false, true} {
		body := `{"promptFeedback":{"blockReason":"OTHER"}}`
		if stream {
			body = sse(body)
		}
		sdk, ours, _, _ := run(t, stream, []reply{ok(body)}, hi)
		assert.Equal(t, sdk.Err.Message, "prompt blocked: OTHER ")
		assert.Equal(t, ours.Err.Message, "prompt blocked: OTHER")
		assert.Equal(t, ours.Err.Temporary, sdk.Err.Temporary)
	}
}

// The SDK continues an answer for as long as the server hands out tokens; the client
// gives up after maxHops requests rather than hold the step forever.
func TestDifferenceContinuationBound(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			var replies []reply
			for i := range maxHops {
				body := fmt.Sprintf(`{"candidates":[{"content":{"parts":[{"text":"."}]},"finishReason":"CONTINUATION","continuationToken":"%s"}]}`,
					fmt.Sprintf("dG9r%04d", i))
				if stream {
					body = sse(body)
				}
				replies = append(replies, ok(body))
			}
			rec := startRecorder(t, replies)
			m, err := New(Config{Model: "m", APIKey: "k", BaseURL: rec.URL, Stream: stream})
			assert.NilError(t, err)
			_, err = m.Step(context.Background(), hi)
			assert.ErrorContains(t, err, fmt.Sprintf("unexpected response: the answer still asked to be continued after %d requests", maxHops))
			assert.Equal(t, len(rec.Requests()), maxHops)
		})
	}
}

// A model name the SDK refuses at every request (tModel: invalid model parameter) is
// refused when the model is opened.
func TestDifferenceInvalidModelName(t *testing.T) {
	sdk, err := newSDKModel(Config{Model: "a?b", APIKey: "k", BaseURL: "http://127.0.0.1:9"})
	assert.NilError(t, err)
	_, err = sdk.Step(context.Background(), hi)
	assert.ErrorContains(t, err, "invalid model parameter")
	_, err = New(Config{Model: "a?b", APIKey: "k"})
	assert.ErrorContains(t, err, `gemini: invalid model name "a?b"`)
}
