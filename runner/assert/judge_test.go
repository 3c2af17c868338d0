package assert

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
)

// judgeRun is a finished run whose judge talks to srv's OpenAI API, recording events.
func judgeRun(t *testing.T, srv *fakellm.Server, events *[]transcript.Judge) *Run {
	t.Helper()
	run := baseRun(workspace(t))
	run.Judge = &JudgeEnv{
		Prompt: "Rename OldName to NewName.",
		Open: func(spec string) (model.Model, error) {
			return providers.Open(spec, providers.OpenOptions{Retries: 1, Getenv: func(k string) string {
				if k == "OPENAI_BASE_URL" {
					return srv.OpenAIURL()
				}
				return ""
			}})
		},
		Record: func(data transcript.Payload) {
			assert.Equal(t, data.Type(), transcript.TypeJudge)
			*events = append(*events, data.(transcript.Judge))
		},
	}
	return run
}

func judgeAssertion(minScore float64, files ...string) task.Assertion {
	return task.Assertion{Kind: task.KindJudge, Pos: task.Position{Line: 7},
		Spec: task.Judge{Model: "openai:judge", Rubric: "NewName replaces OldName everywhere.", Files: files, MinScore: minScore}}
}

func verdict(score any, reasoning string) fakellm.Reply {
	r := fakellm.ToolCall("verdict", map[string]any{"score": score, "reasoning": reasoning})
	r.Usage = &fakellm.Usage{PromptTokens: 120, CompletionTokens: 30}
	return r
}

func TestJudgePassesAndFailsOnTheScore(t *testing.T) {
	for _, tc := range []struct {
		score  any
		passed bool
		msg    string
	}{
		{0.9, true, "judge openai:judge: score 0.90 >= 0.70: looks right"},
		{0.7, true, "score 0.70 >= 0.70"},
		{"0.3", false, "judge openai:judge: score 0.30 < 0.70: looks right"},
	} {
		srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{verdict(tc.score, "looks right")}})
		var events []transcript.Judge
		r := Check(context.Background(), judgeAssertion(0.7, "main.go", "missing.txt"), judgeRun(t, srv, &events))
		srv.Close()
		assert.Equal(t, r.Passed, tc.passed, r.Message)
		assert.Assert(t, !r.Error)
		assert.Check(t, is.Contains(r.Message, tc.msg))
		assert.Assert(t, r.Judge != nil)
		assert.Equal(t, r.Judge.Reasoning, "looks right")
		assert.DeepEqual(t, r.Judge.Usage, result.Usage{PromptTokens: 120, CompletionTokens: 30})
		assert.Equal(t, len(events), 1)
		assert.Equal(t, events[0].Passed, tc.passed)

		// What the judge saw: the task, the rubric, the summary, the files; the verdict tool.
		reqs := srv.Requests()
		assert.Equal(t, len(reqs), 1)
		assert.DeepEqual(t, reqs[0].Tools, []string{"verdict"})
		user := reqs[0].Messages[1].Content
		for _, want := range []string{"Rename OldName to NewName.", "NewName replaces OldName everywhere.",
			"Renamed OldName to NewName in 2 files", "### main.go", "func NewName() {}", "### missing.txt", "(the file does not exist)"} {
			assert.Check(t, is.Contains(user, want))
		}
	}
}

func TestJudgeRemindedOnceThenErrors(t *testing.T) {
	// Prose first, then the verdict: one reminder is enough.
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{fakellm.Text("I think it is fine."), verdict(1, "done")}})
	defer srv.Close()
	var events []transcript.Judge
	r := Check(context.Background(), judgeAssertion(0.5), judgeRun(t, srv, &events))
	assert.Assert(t, r.Passed && !r.Error, r.Message)
	assert.Equal(t, len(srv.Requests()), 2)
	last := srv.Requests()[1].Messages
	assert.Check(t, is.Contains(last[len(last)-1].Content, "Call the verdict tool"))

	// Never a verdict: the judge failed, not the agent.
	srv2 := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{fakellm.Text("fine"), fakellm.ToolCall("read_file", map[string]any{})}})
	defer srv2.Close()
	r = Check(context.Background(), judgeAssertion(0.5), judgeRun(t, srv2, &events))
	assert.Assert(t, r.Error && !r.Passed)
	assert.Check(t, is.Contains(r.Message, "no verdict"))
}

func TestJudgeFailuresAreErrors(t *testing.T) {
	for name, reply := range map[string]fakellm.Reply{
		"score out of range": verdict(1.5, "x"),
		"score not a number": verdict("high", "x"),
		"server error":       fakellm.Status(500, "judge overloaded"),
	} {
		t.Run(name, func(t *testing.T) {
			srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{reply}})
			defer srv.Close()
			var events []transcript.Judge
			r := Check(context.Background(), judgeAssertion(0.5), judgeRun(t, srv, &events))
			assert.Assert(t, r.Error && !r.Passed, r.Message)
			assert.Check(t, strings.HasPrefix(r.Message, "judge openai:judge: "), r.Message)
			assert.Equal(t, len(events), 1)
			assert.Equal(t, events[0].Error, r.Message)
		})
	}
	// No way to open a model at all.
	r := Check(context.Background(), judgeAssertion(0.5), baseRun(workspace(t)))
	assert.Assert(t, r.Error)
}

// TestJudgeReadsOnlyTheWorkspace performs what an agent could try: make a file the judge
// reads a symlink to a secret outside the workspace, so that it is sent to the judge's
// model. The judge must see an error, never the content.
func TestJudgeReadsOnlyTheWorkspace(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{verdict(0.5, "ok")}})
	defer srv.Close()
	var events []transcript.Judge
	r := Check(context.Background(), judgeAssertion(0.5, "escape"), judgeRun(t, srv, &events)) // escape -> /etc/passwd
	assert.Assert(t, !r.Error, r.Message)
	user := srv.Requests()[0].Messages[1].Content
	assert.Check(t, is.Contains(user, "### escape"))
	assert.Check(t, is.Contains(user, "(cannot read:"))
	assert.Check(t, !strings.Contains(user, "root:"), "a file outside the workspace reached the judge")
}
