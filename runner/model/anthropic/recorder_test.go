package anthropic

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
		return Config{Model: "claude-sonnet-4-5", APIKey: "sk-ant-key", BaseURL: url, Stream: stream}
	}
	sdk, sdkReqs = conformance.Play(ctx, t, replies, func(url string) (stepper, error) { return newSDKModel(config(url)) }, reqs...)
	ours, ourReqs = conformance.Play(ctx, t, replies, func(url string) (stepper, error) { return New(config(url)) }, reqs...)
	return sdk, ours, sdkReqs, ourReqs
}

func assertSameOutcome(t *testing.T, sdk, ours outcome) {
	t.Helper()
	conformance.AssertSameOutcome(t, sdk, ours)
}

// assertSameRequests: see conformance.AssertSameRequests. The SDK's X-Stainless-* headers
// (its language, version, OS, retry count) may differ: the client does not pretend to be
// the SDK.
func assertSameRequests(t *testing.T, sdk, ours []recorded) {
	t.Helper()
	conformance.AssertSameRequests(t, sdk, ours, func(k string) bool { return strings.HasPrefix(k, "X-Stainless-") })
}
