package scenario

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
)

// A tool_not_called that passed because runner saw no call of an agent whose calls it
// cannot see is no verdict: it fails, saying why; other assertions and agents whose
// calls reach the endpoint are left alone.
func TestToolAssertionsCannotApplyToUnseenCalls(t *testing.T) {
	as := func() []result.Assertion {
		return []result.Assertion{
			{Kind: task.KindToolNotCalled, Passed: true, Message: "rm was never executed"},
			{Kind: task.KindToolCalled, Passed: false},
			{Kind: task.KindFileExists, Passed: true},
		}
	}
	blind := kinds.Kind{Name: "blind"}
	got := unseenCalls(blind, as())
	assert.Assert(t, !got[0].Passed && !got[1].Passed)
	assert.Equal(t, got[0].Message, "cannot apply to agent blind: its tool use does not reach runner's endpoint as tool calls, so there are none to count")
	assert.Assert(t, got[2].Passed)
	for _, k := range []kinds.Kind{{Name: "seen", ToolsVisible: true}, {Name: "runner", Builtin: true}} {
		assert.DeepEqual(t, unseenCalls(k, as()), as())
	}
}
