package gemini

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/conformance"
)

// The recorder, the two models' run and the comparisons are package conformance's; these
// names keep the tests short.
type (
	recorded = conformance.Recorded
	reply    = conformance.Reply
	outcome  = conformance.Outcome
	stepper  = conformance.Stepper
)

func ok(body string) reply { return conformance.OK(body) }

func raw(s string) reply { return conformance.Raw(s) }

func startRecorder(t *testing.T, replies []reply) *conformance.Recorder {
	t.Helper()
	return conformance.StartRecorder(t, replies)
}

// run plays replies to a fresh model of each kind, the SDK oracle and the client, one step
// per request, and returns the outcome of the last step and the requests each model sent.
func run(t *testing.T, stream bool, replies []reply, reqs ...*model.Request) (sdk, ours outcome, sdkReqs, ourReqs []recorded) {
	t.Helper()
	// A deadline both requests share, so that x-server-timeout is the same: 91 s.
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(90*time.Second+500*time.Millisecond))
	defer cancel()
	config := func(url string) Config {
		return Config{Model: "gemini-2.5-flash", APIKey: "gm-key", BaseURL: url, Stream: stream}
	}
	sdk, sdkReqs = conformance.Play(ctx, t, replies, func(url string) (stepper, error) { return newSDKModel(config(url)) }, reqs...)
	ours, ourReqs = conformance.Play(ctx, t, replies, func(url string) (stepper, error) { return New(config(url)) }, reqs...)
	return sdk, ours, sdkReqs, ourReqs
}

func assertSameOutcome(t *testing.T, sdk, ours outcome) {
	t.Helper()
	conformance.AssertSameOutcome(t, sdk, ours)
}

// assertSameRequests: see conformance.AssertSameRequests. x-goog-api-client may differ
// (the SDK names itself there too), and x-server-timeout by the time between the two
// requests (assertSameTimeout).
func assertSameRequests(t *testing.T, sdk, ours []recorded) {
	t.Helper()
	conformance.AssertSameRequests(t, sdk, ours, func(k string) bool { return k == "X-Goog-Api-Client" || k == "X-Server-Timeout" })
	for i := range sdk {
		assertSameTimeout(t, ours[i].Header, sdk[i].Header)
	}
}

// assertSameTimeout: both send x-server-timeout or neither, and the same number of whole
// seconds but for the time between the two requests of one shared deadline: on a loaded
// machine the second may start after the first's deadline crossed a whole second.
func assertSameTimeout(t *testing.T, ours, sdk http.Header) {
	t.Helper()
	o, s := ours.Get("X-Server-Timeout"), sdk.Get("X-Server-Timeout")
	assert.Equal(t, o == "", s == "", "x-server-timeout: ours %q, the SDK's %q", o, s)
	if o == "" {
		return
	}
	on, err := strconv.Atoi(o)
	assert.NilError(t, err)
	sn, err := strconv.Atoi(s)
	assert.NilError(t, err)
	assert.Assert(t, sn-on >= 0 && sn-on <= 1, "x-server-timeout: ours %d, the SDK's %d", on, sn)
}
