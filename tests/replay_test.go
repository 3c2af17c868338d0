package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
)

// replayFailTask fails one assertion, so the suite has both verdicts.
const replayFailTask = `name: wrong-file
prompt: Write bye.txt containing bye, then call task_complete.
tools: [write_file, read_file]
max_steps: 6
assert:
  - completed: true
  - file_contains: {path: bye.txt, text: bye}
`

// A suite recorded against a fake server replays with the server stopped: the same exit
// code, verdicts and transcripts apart from timings. A changed prompt is a clear miss,
// an error (exit 3) naming the scenario, the step and the difference.
func TestRecordReplaySuite(t *testing.T) {
	t.Parallel()
	for _, p := range []provider{{"ollama", false}, {"anthropic", true}} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
				{Match: "hello.txt", Replies: []fakellm.Reply{
					{Text: "Writing it.", ToolCalls: []fakellm.Call{writeHello.ToolCalls[0]}},
					fakellm.ToolCall("read_file", map[string]any{"path": "hello.txt"}), complete,
				}},
				{Match: "bye.txt", Replies: []fakellm.Reply{
					fakellm.ToolCall("write_file", map[string]any{"path": "bye.txt", "content": "hello\n"}), complete,
				}},
			}})
			suite := t.TempDir()
			assert.NilError(t, os.WriteFile(filepath.Join(suite, "hello.yaml"), []byte(helloTask), 0o644))
			assert.NilError(t, os.WriteFile(filepath.Join(suite, "wrong.yaml"), []byte(replayFailTask), 0o644))
			cassette := filepath.Join(t.TempDir(), "cassette")
			args, env := p.args(srv)
			common := []string{"run", "--sandbox", "none", "-j", "2"}

			recOut := filepath.Join(t.TempDir(), "rec")
			rec := runner(t, run{Args: append(append(append(common, "--out", recOut, "--record", cassette), args...), suite), Env: env})
			assert.Equal(t, rec.Code, 1)
			served := srv.Served()
			srv.Close()

			// --replay over the tasks' model, and --model replay:DIR: no server, no env.
			for _, how := range [][]string{append(args, "--replay", cassette), {"--model", "replay:" + cassette}} {
				out := filepath.Join(t.TempDir(), "play")
				play := runner(t, run{Args: append(append(append(common, "--out", out), how...), suite)})
				assert.Equal(t, play.Code, rec.Code, "%v", how)
				for _, name := range []string{"hello", "wrong-file"} {
					want, got := readResult(t, filepath.Join(recOut, name, "result.json")), readResult(t, filepath.Join(out, name, "result.json"))
					assert.Equal(t, got.Status, want.Status, name)
					assert.Equal(t, got.Steps, want.Steps, name)
					assert.Equal(t, got.Model, want.Model, name)
					assert.DeepEqual(t, got.Usage, want.Usage)
					assert.DeepEqual(t, got.Assertions, want.Assertions)
					assert.Equal(t, got.Reason, want.Reason)
					assert.Equal(t, stableTranscript(t, filepath.Join(out, name, "transcript.jsonl"), out),
						stableTranscript(t, filepath.Join(recOut, name, "transcript.jsonl"), recOut), name)
				}
			}
			assert.Equal(t, srv.Served(), served)

			// A changed prompt: the scenario errors with the miss, the other still passes.
			changed := strings.Replace(helloTask, "containing hello", "containing hi", 1)
			assert.NilError(t, os.WriteFile(filepath.Join(suite, "hello.yaml"), []byte(changed), 0o644))
			out := filepath.Join(t.TempDir(), "miss")
			miss := runner(t, run{Args: append(append(append(common, "--out", out), args...), "--replay", cassette, filepath.Join(suite, "hello.yaml"))})
			assert.Equal(t, miss.Code, 3)
			res := readResult(t, filepath.Join(out, "hello", "result.json"))
			assert.Equal(t, res.Status, result.Errored)
			for _, want := range []string{`replay miss: scenario "hello", step 1: messages[1].content (user): recorded …"llo.txt containing hello, then`, `now …"llo.txt containing hi, then`} {
				assert.Assert(t, strings.Contains(res.Reason, want), "%q not in %s", want, res.Reason)
			}
		})
	}
}

// timing matches the fields of transcript events that differ between two runs of the
// same conversation.
var timing = regexp.MustCompile(`^(time|started|modified|workspace)$|_ms$`)

// stableTranscript is a transcript without its times and durations, with out replaced.
func stableTranscript(t *testing.T, path, out string) string {
	t.Helper()
	var lines []string
	for _, e := range readTranscript(t, path) {
		var data any
		if len(e.Data) > 0 {
			assert.NilError(t, json.Unmarshal(e.Data, &data))
		}
		b, err := json.Marshal(map[string]any{"type": e.Type, "step": e.Step, "data": dropTiming(data)})
		assert.NilError(t, err)
		lines = append(lines, strings.ReplaceAll(string(b), out, "OUT"))
	}
	return strings.Join(lines, "\n")
}

func dropTiming(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if timing.MatchString(k) {
				delete(v, k)
				continue
			}
			v[k] = dropTiming(x)
		}
	case []any:
		for i := range v {
			v[i] = dropTiming(v[i])
		}
	}
	return v
}
