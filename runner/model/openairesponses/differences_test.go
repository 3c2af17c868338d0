package openairesponses

// Where the go-openai client parts from the SDK provider it replaced, on purpose; each
// test pins both sides, so that a change on either shows.

import (
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
)

var hi = &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}

// An error response that is not an error object (a proxy's page): the SDK's message was
// empty, the client quotes what was sent, as the other providers do.
func TestDifferenceErrorBodyThatIsNotAnErrorObject(t *testing.T) {
	for _, stream := range []bool{false, true} {
		sdk, ours, _, _ := run(t, stream, []reply{status(503, "<html><body>upstream unavailable</body></html>")}, hi)
		assert.Equal(t, sdk.Err.Message, "")
		assert.Equal(t, ours.Err.Message, "<html><body>upstream unavailable</body></html>")
		assert.Equal(t, ours.Err.StatusCode, sdk.Err.StatusCode)
		assert.Equal(t, ours.Err.Temporary, sdk.Err.Temporary)
	}
}

// go-openai asks for an event stream as one (Accept: text/event-stream, no caching); the
// SDK sent Accept: application/json for a stream too.
func TestDifferenceStreamHeaders(t *testing.T) {
	_, _, sdkReqs, ourReqs := run(t, true, []reply{ok(streamOf(secondAnswer))}, hi)
	assert.Equal(t, sdkReqs[0].Header.Get("Accept"), "application/json")
	assert.Equal(t, ourReqs[0].Header.Get("Accept"), "text/event-stream")
	assert.Equal(t, ourReqs[0].Header.Get("Cache-Control"), "no-cache")
}

// go-openai holds temperature and top_p as float32: a value with more digits than a
// float32 keeps is sent rounded to 7 significant digits, as the openai provider sends it.
func TestDifferenceFloat32Options(t *testing.T) {
	temp, topP := 0.123456789, 0.9
	req := &model.Request{Messages: hi.Messages, Options: model.Options{Temperature: &temp, TopP: &topP}}
	_, _, sdkReqs, ourReqs := run(t, false, []reply{ok(secondAnswer)}, req)
	var sdkBody, ourBody map[string]any
	assert.NilError(t, json.Unmarshal(sdkReqs[0].Body, &sdkBody))
	assert.NilError(t, json.Unmarshal(ourReqs[0].Body, &ourBody))
	assert.Equal(t, sdkBody["temperature"], 0.123456789)
	assert.Equal(t, ourBody["temperature"], 0.12345679)
	assert.Equal(t, sdkBody["top_p"], 0.9)
	assert.Equal(t, ourBody["top_p"], 0.9)
}

// A stream whose data is an error object, {"error":{...}}: the SDK quoted the object as an
// unexpected response, the client says its message. Neither retries it.
func TestDifferenceErrorObjectInAStream(t *testing.T) {
	sdk, ours, _, _ := run(t, true, []reply{ok("data: " + apiErr("server_error", "", "boom") + "\n\n")}, hi)
	assert.Equal(t, sdk.Err.Message, `unexpected response: received error while streaming: {"message":"boom","type":"server_error","param":null,"code":""}`)
	assert.Equal(t, ours.Err.Message, "boom")
	assert.Equal(t, ours.Err.Temporary, false)
	assert.Equal(t, sdk.Err.Temporary, false)
}
