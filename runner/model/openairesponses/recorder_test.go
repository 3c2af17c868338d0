package openairesponses

import (
	"context"
	"strings"
	"testing"

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

// run plays replies to a fresh model of each kind, the SDK oracle and the client, one step
// per request, and returns the outcome of the last step and the requests each model sent.
func run(t *testing.T, stream bool, replies []reply, reqs ...*model.Request) (sdk, ours outcome, sdkReqs, ourReqs []recorded) {
	t.Helper()
	ctx := context.Background()
	config := func(url string) Config {
		return Config{Model: "gpt-5-mini", APIKey: "sk-oa-key", BaseURL: url, Stream: stream}
	}
	sdk, sdkReqs = conformance.Play(ctx, t, replies, func(url string) (stepper, error) { return newSDKModel(config(url)) }, reqs...)
	ours, ourReqs = conformance.Play(ctx, t, replies, func(url string) (stepper, error) { return New(config(url)) }, reqs...)
	return sdk, ours, sdkReqs, ourReqs
}

func assertSameOutcome(t *testing.T, sdk, ours outcome) {
	t.Helper()
	conformance.AssertSameOutcome(t, sdk, ours)
}

// streamHeaders are what go-openai adds to a streamed request, and the SDK does not
// (TestDifferenceStreamHeaders).
var streamHeaders = map[string]bool{"Accept": true, "Cache-Control": true, "Connection": true}

// assertSameRequests: see conformance.AssertSameRequests. The SDK's X-Stainless-* headers
// (its language, version, OS, retry count) may differ, and so may streamHeaders.
func assertSameRequests(t *testing.T, sdk, ours []recorded) {
	t.Helper()
	conformance.AssertSameRequests(t, sdk, ours, func(k string) bool {
		return strings.HasPrefix(k, "X-Stainless-") || streamHeaders[k]
	})
}
