package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model/fakellm"
)

// echoTask passes once the model calls task_complete; its summary is the model's.
const echoTask = `name: echo
prompt: Say something, then call task_complete.
max_steps: 4
assert:
  - completed: true
`

// grepOutputs fails the test for every file under dir, and for stdout and stderr, that
// holds any of secrets; it returns how many files it read.
func grepOutputs(t *testing.T, dir string, o outcome, secrets ...string) int {
	t.Helper()
	for _, s := range secrets {
		assert.Check(t, !strings.Contains(o.Stdout, s), "stdout holds %q:\n%s", s, o.Stdout)
		assert.Check(t, !strings.Contains(o.Stderr, s), "stderr holds %q:\n%s", s, o.Stderr)
	}
	files := 0
	assert.NilError(t, filepath.Walk(dir, func(f string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		files++
		for _, s := range secrets {
			assert.Check(t, !strings.Contains(string(b), s), "%s holds %q:\n%s", f, s, b)
		}
		return nil
	}))
	return files
}

// Issue 16 A: anthropic:, gemini: and openai-responses: copied a server's error body
// into the reason, and a gateway that quotes the key ("Incorrect API key provided:
// sk-...") put it in the console, result.json, the transcript, --json and JUnit. Every
// provider is run against a fake that echoes its credential (the key, or for Ollama the
// token in OLLAMA_HOST's user info) in a 401 body, in a 200 answer and in a streamed one,
// with every output on: console, transcript, result.json, --json, JUnit, GitHub
// annotations and job summary, a cassette. No output may hold the credential.
func TestServerEchoOfTheKeyLeavesNoOutput(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ollama", "openai", "openai-responses", "anthropic", "gemini"} {
		for _, tc := range []struct {
			name   string
			stream bool
			code   int
		}{{"401", false, 3}, {"200", false, 0}, {"stream", true, 0}} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				key := fmt.Sprintf("sk-echo-%s-%s-0123456789abcdef", strings.ReplaceAll(name, "-", ""), tc.name)
				replies := []fakellm.Reply{fakellm.Status(401, "Incorrect API key provided: "+key+". You can find your API key at https://example.invalid.")}
				if tc.code == 0 {
					replies = []fakellm.Reply{
						{Text: "Your key is " + key + " and it works."},
						fakellm.ToolCall("task_complete", map[string]any{"summary": "done; the key was " + key}),
					}
				}
				srv := fakellm.Start(fakellm.Script{Replies: replies})
				t.Cleanup(srv.Close)
				p := provider{Name: name, Stream: tc.stream}
				args, env := p.args(srv)
				for i, e := range env {
					k, v, _ := strings.Cut(e, "=")
					switch {
					case k == "OLLAMA_HOST":
						env[i] = k + "=" + strings.Replace(v, "http://", "http://"+key+"@", 1)
					case strings.HasSuffix(k, "_API_KEY"):
						env[i] = k + "=" + key
					}
				}
				dir := t.TempDir()
				env = append(env, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+filepath.Join(dir, "summary.md"))
				path := writeTask(t, "echo", echoTask)
				args = append([]string{"run", "--out", filepath.Join(dir, "out"), "--sandbox", "none", "--retries", "1",
					"--json", filepath.Join(dir, "report.json"), "--junit", filepath.Join(dir, "junit.xml"),
					"--record", filepath.Join(dir, "cassette")}, args...)
				o := runner(t, run{Args: append(args, path), Env: env})
				assert.Equal(t, o.Code, tc.code)
				files := grepOutputs(t, dir, o, key)
				assert.Assert(t, files >= 5, "transcript, result.json, report.json, junit.xml, summary.md (and the cassette): %d", files)
				res := readResult(t, filepath.Join(dir, "out", "echo", "result.json"))
				if tc.code != 0 {
					assert.Assert(t, strings.Contains(res.Reason, "Incorrect API key provided: [REDACTED]") || name == "ollama",
						"the server's words are kept, the key is not: %s", res.Reason)
				} else {
					assert.Equal(t, res.Summary, "done; the key was [REDACTED]")
				}
			})
		}
	}
}

// A task's secrets: reach its commands, but no output: the agent prints the token, a
// failing assertion quotes it, and neither the console nor a file shows it.
func TestTaskSecretNeverReachesAnOutput(t *testing.T) {
	t.Parallel()
	const token = "npm_TaskSecret0123456789abcdef"
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
		fakellm.ToolCall("run_in_terminal", map[string]any{"command": "echo token=$DEPLOY_TOKEN; echo $DEPLOY_TOKEN > seen.txt"}),
		fakellm.ToolCall("task_complete", map[string]any{"summary": "printed it"}),
	}})
	t.Cleanup(srv.Close)
	path := writeTask(t, "secret", `name: secret
prompt: Print the deploy token.
secrets: [DEPLOY_TOKEN]
assert:
  - file_contains: {path: seen.txt, text: npm_}
  - command: {run: 'echo "the token is $DEPLOY_TOKEN"; exit 1'}
`)
	dir := t.TempDir()
	args, env := provider{Name: "openai"}.args(srv)
	env = append(env, "DEPLOY_TOKEN="+token, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+filepath.Join(dir, "summary.md"))
	args = append([]string{"run", "--out", filepath.Join(dir, "out"), "--sandbox", "none",
		"--json", filepath.Join(dir, "report.json"), "--junit", filepath.Join(dir, "junit.xml")}, args...)
	o := runner(t, run{Args: append(args, path), Env: env})
	assert.Equal(t, o.Code, 1, "the file assertion passes (the command got the token), the command fails")
	grepOutputs(t, dir, o, token)
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			assert.Assert(t, !strings.Contains(m.Content, token), "the model's server was sent the token: %s", m.Content)
		}
	}
	assert.Assert(t, strings.Contains(strings.Join(mapValues(toolResults(srv)), "\n"), "token=[REDACTED]"), "%v", toolResults(srv))
	res := readResult(t, filepath.Join(dir, "out", "secret", "result.json"))
	assert.Assert(t, res.Assertions[0].Passed, "the command saw the token: %+v", res.Assertions[0])
	assert.Assert(t, strings.Contains(res.Assertions[1].Message, "the token is [REDACTED]"), "%s", res.Assertions[1].Message)
}

// runner bench writes bench.json, bench.md and bench.html beside every cell's transcript:
// a key a server echoes reaches none of them.
func TestServerEchoOfTheKeyLeavesNoBenchFile(t *testing.T) {
	t.Parallel()
	const key = "sk-echo-bench-0123456789abcdef"
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
		{Text: "Your key is " + key + "."},
		fakellm.ToolCall("task_complete", map[string]any{"summary": "<b>" + key + "</b>"}),
	}})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	path := writeTask(t, "echo", echoTask)
	o := runner(t, run{Args: []string{"bench", "--model", "openai:fake-model", "--repeat", "1", "--sandbox", "none", "--out", dir, path},
		Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=" + key}, Timeout: 60 * time.Second})
	assert.Equal(t, o.Code, 0)
	for _, f := range []string{"bench.json", "bench.md", "bench.html"} {
		_, err := os.Stat(filepath.Join(dir, f))
		assert.NilError(t, err)
	}
	grepOutputs(t, dir, o, key)
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
