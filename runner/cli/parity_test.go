package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
)

// judgedTask's reference solution writes a poem that a judge model then scores.
const judgedTask = `name: judged
prompt: Write a haiku about autumn into poem.txt.
tools: [write_file]
sandbox: none
reference:
  - write_file: {path: poem.txt, content: "Red leaves drift and fall\n"}
  - task_complete: {summary: wrote the haiku}
assert:
  - file_exists: poem.txt
  - judge:
      model: openai:judge-model
      rubric: A haiku about autumn.
      files: [poem.txt]
      min_score: 0.7
`

// The same task gets the same verdict from run, bench and validate --oracle, its judge
// assertion included: every command builds its runtime in session.New, so none can run
// without a part of it (bench once ran without the judge and errored every judged cell).
// The judge is a model on the fake OpenAI server; the agent is the task's reference
// solution (the oracle), so the judge alone decides.
func TestRunBenchAndValidateGiveTheSameVerdict(t *testing.T) {
	for _, tc := range []struct {
		name     string
		score    float64
		want     result.Status
		runCode  int
		valiCode int
	}{
		{"judge passes", 0.9, result.Passed, ExitOK, ExitOK},
		{"judge fails", 0.2, result.Failed, ExitFailed, ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdict := fakellm.ToolCall("verdict", map[string]any{"score": tc.score, "reasoning": "scored"})
			srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{{Match: "## Rubric", Repeat: true, Replies: []fakellm.Reply{verdict}}}})
			defer srv.Close()
			t.Setenv("OPENAI_BASE_URL", srv.OpenAIURL())
			t.Setenv("OPENAI_API_KEY", "sk-test")
			t.Setenv("XDG_CACHE_HOME", t.TempDir()) // validate's default cache
			path := writeTask(t, t.TempDir(), "judged.yaml", judgedTask)

			out := t.TempDir()
			code, stdout, stderr := invoke(t, "run", "--sandbox", "none", "--cache-dir", "", "--out", out, path)
			assert.Equal(t, code, tc.runCode, "run: %s%s", stdout, stderr)
			ran := readScenario(t, filepath.Join(out, "judged", "result.json"))

			bout := t.TempDir()
			code, stdout, stderr = invoke(t, "bench", "--model", "oracle", "--repeat", "1", "-j", "1",
				"--sandbox", "none", "--cache-dir", "", "--out", bout, path)
			assert.Equal(t, code, ExitOK, "bench measures a failure, it does not fail: %s%s", stdout, stderr)
			cells, err := filepath.Glob(filepath.Join(bout, "oracle", "*", "result.json"))
			assert.NilError(t, err)
			assert.Equal(t, len(cells), 1, "%s%s", stdout, stderr)
			benched := readScenario(t, cells[0])

			code, stdout, stderr = invoke(t, "validate", "--oracle", path)
			assert.Equal(t, code, tc.valiCode, "validate: %s%s", stdout, stderr)
			if tc.want == result.Failed {
				assert.Check(t, is.Contains(stderr, "reference solution failed: judge:"))
			}

			for _, s := range []result.Scenario{ran, benched} {
				assert.Equal(t, s.Status, tc.want, s.Reason)
				assert.Equal(t, len(s.Assertions), 2)
				j := s.Assertions[1]
				assert.Assert(t, j.Judge != nil, "the judge answered: %s", j.Message)
				assert.Equal(t, j.Judge.Score, tc.score)
			}
			assert.Equal(t, benched.Reason, ran.Reason)
		})
	}
}

func readScenario(t *testing.T, path string) result.Scenario {
	t.Helper()
	b, err := os.ReadFile(path)
	assert.NilError(t, err)
	var s result.Scenario
	assert.NilError(t, json.Unmarshal(b, &s))
	return s
}
