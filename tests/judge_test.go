package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
)

const judgeTask = `name: judged
prompt: Write a haiku about autumn into poem.txt.
tools: [write_file]
max_steps: 4
assert:
  - file_exists: poem.txt
  - judge:
      model: JUDGE
      rubric: A haiku about autumn.
      files: [poem.txt]
      min_score: 0.7
`

// judgeScript plays the agent (write the poem, complete) and, on conversations that
// carry a rubric, the judge.
func judgeScript(judge ...fakellm.Reply) fakellm.Script {
	return fakellm.Script{
		Routes: []fakellm.Route{{Match: "## Rubric", Replies: judge}},
		Replies: []fakellm.Reply{
			fakellm.ToolCall("write_file", map[string]any{"path": "poem.txt", "content": "Red leaves drift and fall\n"}),
			fakellm.ToolCall("task_complete", map[string]any{"summary": "wrote the haiku"}),
		},
	}
}

func verdictReply(score float64, reasoning string) fakellm.Reply {
	r := fakellm.ToolCall("verdict", map[string]any{"score": score, "reasoning": reasoning})
	r.Usage = &fakellm.Usage{PromptTokens: 200, CompletionTokens: 40}
	return r
}

func runJudged(t *testing.T, srv *fakellm.Server, judgeModel string, env ...string) (outcome, result.Scenario, string) {
	t.Helper()
	path := writeTask(t, "judged", judgeTaskWith(judgeModel))
	out := filepath.Join(t.TempDir(), "out")
	args, penv := provider{"openai", false}.args(srv)
	args = append(append([]string{"run", "--sandbox", "none", "--retries", "1", "--out", out,
		"--junit", filepath.Join(out, "junit.xml")}, args...), path)
	o := runner(t, run{Args: args, Env: append(penv, env...)})
	return o, readResult(t, filepath.Join(out, "judged", "result.json")), out
}

func judgeTaskWith(model string) string {
	return strings.ReplaceAll(judgeTask, "JUDGE", model)
}

// TestJudgeEndToEnd: the judge is a model on the fake OpenAI server; its verdict decides
// the assertion, shows in the console, result.json, the transcript and JUnit, and its
// tokens are counted apart from the agent's.
func TestJudgeEndToEnd(t *testing.T) {
	t.Parallel()
	t.Run("passes", func(t *testing.T) {
		t.Parallel()
		srv := fakellm.Start(judgeScript(verdictReply(0.9, "a fine autumn haiku")))
		defer srv.Close()
		o, res, out := runJudged(t, srv, "openai:judge-model")
		assert.Equal(t, o.Code, 0, res.Reason)
		assert.Equal(t, res.Status, result.Passed)
		j := res.Assertions[1]
		assert.Equal(t, j.Kind, "judge")
		assert.Assert(t, j.Judge != nil)
		assert.Equal(t, j.Judge.Score, 0.9)
		assert.Equal(t, j.Judge.Reasoning, "a fine autumn haiku")
		assert.DeepEqual(t, res.JudgeUsage, &result.Usage{PromptTokens: 200, CompletionTokens: 40})
		// The agent's usage is its own: two steps of the fake's default usage, no judge.
		assert.Assert(t, res.Usage.PromptTokens > 0 && res.Usage.PromptTokens != 200, "agent usage %+v", res.Usage)

		// The judge read the poem and the summary; its conversation is its own.
		var judgeReq *fakellm.Request
		for _, r := range srv.Requests() {
			if r.Model == "judge-model" {
				judgeReq = &r
			}
		}
		assert.Assert(t, judgeReq != nil, "the judge model was never asked")
		assert.DeepEqual(t, judgeReq.Tools, []string{"verdict"})
		assert.Check(t, is.Contains(judgeReq.Messages[1].Content, "Red leaves drift and fall"))
		assert.Check(t, is.Contains(judgeReq.Messages[1].Content, "wrote the haiku"))

		events := readTranscript(t, filepath.Join(out, "judged", "transcript.jsonl"))
		judged := eventsOf(events, "judge")
		assert.Equal(t, len(judged), 1)
		var ev struct {
			Model   string         `json:"model"`
			Verdict result.Verdict `json:"verdict"`
			Passed  bool           `json:"passed"`
		}
		assert.NilError(t, json.Unmarshal(judged[0].Data, &ev))
		assert.Equal(t, ev.Verdict.Score, 0.9)
		assert.Assert(t, ev.Passed)
		validateJUnit(t, filepath.Join(out, "junit.xml"))
	})
	t.Run("fails on a low score", func(t *testing.T) {
		t.Parallel()
		srv := fakellm.Start(judgeScript(verdictReply(0.2, "this is a limerick, not a haiku")))
		defer srv.Close()
		o, res, _ := runJudged(t, srv, "openai:judge-model")
		assert.Equal(t, o.Code, 1)
		assert.Equal(t, res.Status, result.Failed)
		assert.Check(t, is.Contains(res.Reason, "score 0.20 < 0.70: this is a limerick, not a haiku"))
		assert.Check(t, is.Contains(o.Stdout, "this is a limerick"))
	})
	t.Run("no verdict is an error", func(t *testing.T) {
		t.Parallel()
		srv := fakellm.Start(judgeScript(fakellm.Text("Nice poem!"), fakellm.Text("Really nice.")))
		defer srv.Close()
		o, res, _ := runJudged(t, srv, "openai:judge-model")
		assert.Equal(t, o.Code, 3)
		assert.Equal(t, res.Status, result.Errored)
		assert.Check(t, is.Contains(res.Reason, "no verdict"))
	})
	t.Run("an unreachable judge is an error", func(t *testing.T) {
		t.Parallel()
		srv := fakellm.Start(judgeScript())
		defer srv.Close()
		o, res, _ := runJudged(t, srv, "ollama:judge", "OLLAMA_HOST="+closedAddr(t))
		assert.Equal(t, o.Code, 3)
		assert.Equal(t, res.Status, result.Errored)
		assert.Check(t, is.Contains(res.Reason, "judge ollama:judge"))
		assert.Assert(t, res.Assertions[0].Passed, "the other assertions still ran")
	})
}

// TestJudgeExample runs the judge example of docs/assertions.md (tests/testdata/judge) as written.
func TestJudgeExample(t *testing.T) {
	t.Parallel()
	script, err := fakellm.LoadScript("testdata/judge/script.json")
	assert.NilError(t, err)
	srv := fakellm.Start(script)
	defer srv.Close()
	sr := runScenario(t, provider{"openai", false}, srv, "testdata/judge/haiku.yaml", "judged-haiku")
	assert.Equal(t, sr.Code, 0, sr.Result.Reason)
	assert.Equal(t, sr.Result.Assertions[2].Judge.Score, 0.85)
}
