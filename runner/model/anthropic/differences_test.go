package anthropic

// Where the REST client parts from the SDK provider it replaced, on purpose; each test
// pins both sides, so that a change on either shows.

import (
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
)

var hi = &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}

// An error event inside a stream is the server giving up mid-answer. The SDK read it as
// an HTTP error with the stream's status, 200, which is never retried. The client reads
// the error's type: overloaded_error, api_error and rate_limit_error (what the statuses
// 529, 500 and 429 stand for) pass and are retried; any other will not heal.
func TestDifferenceErrorEventsAreClassifiedByType(t *testing.T) {
	for _, c := range []struct {
		typ       string
		temporary bool
	}{
		{"overloaded_error", true},
		{"api_error", true},
		{"rate_limit_error", true},
		{"invalid_request_error", false},
	} {
		t.Run(c.typ, func(t *testing.T) {
			body := sse("message_start", messageStart,
				"content_block_start", blockStart(0, `{"type":"text","text":""}`),
				"content_block_delta", textDelta(0, "Hel"),
				"error", apiErr(c.typ, "stopped"))
			sdk, ours, _, _ := run(t, true, []reply{ok(body)}, hi)
			assert.Equal(t, sdk.Err.StatusCode, http.StatusOK)
			assert.Equal(t, sdk.Err.Temporary, false)
			assert.Equal(t, sdk.Err.Message, c.typ+": stopped")
			assert.Equal(t, ours.Err.StatusCode, 0)
			assert.Equal(t, ours.Err.Temporary, c.temporary)
			assert.Equal(t, ours.Err.Message, c.typ+": stopped")
			assert.Equal(t, ours.Err.Error(), "anthropic at http://server: "+c.typ+": stopped")
		})
	}
}

// An error event whose data is not an error object: both report it as sent, neither
// retries; the SDK with status 200.
func TestDifferenceErrorEventThatIsNotJSON(t *testing.T) {
	sdk, ours, _, _ := run(t, true, []reply{ok(sse("message_start", messageStart, "error", "<html>bad gateway</html>"))}, hi)
	assert.Equal(t, sdk.Err.StatusCode, http.StatusOK)
	assert.Equal(t, ours.Err.StatusCode, 0)
	assert.Equal(t, ours.Err.Message, sdk.Err.Message)
	assert.Equal(t, ours.Err.Message, "<html>bad gateway</html>")
	assert.Equal(t, ours.Err.Temporary, false)
	assert.Equal(t, sdk.Err.Temporary, false)
}
