package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
)

// exampleDir is the runnable example of an external agent: a shell script (curl + jq)
// and a task file that runs it.
const exampleDir = "../examples/agents"

// The example, as a person runs it: the oracle plays the reference through runner's
// endpoint and the script, in the default sandbox; the scenario passes.
func TestExampleCurlAgentPasses(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	res := runner(t, run{Args: []string{"run", "--out", out, filepath.Join(exampleDir, "hello.yaml")}, Timeout: 2 * time.Minute})
	assert.Equal(t, res.Code, 0, res.Stdout+res.Stderr)
	got := readResult(t, filepath.Join(out, "curl-agent-hello", "result.json"))
	assert.Equal(t, got.Status, result.Passed)
	assert.Equal(t, got.Agent, "command")
	assert.Equal(t, got.Stop, result.StopCompleted)
}

// agentSuite writes two tasks run by the example agent against a model: one the model
// answers right (passes), one it answers wrong (fails).
func agentSuite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(exampleDir, "curl-agent.sh"))
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "curl-agent.sh"), script, 0o755))
	task := func(name, file string) string {
		return "name: " + name + "\nprompt: Write " + file + " containing hello, then call task_complete.\n" +
			"agent: {command: sh $TASK_DIR/curl-agent.sh}\nmax_steps: 5\ntimeout: 2m\n" +
			"assert:\n  - file_contains: {path: " + file + ", text: hello}\n  - tool_called: write_file\n"
	}
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "right.yaml"), []byte(task("right", "hello.txt")), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "wrong.yaml"), []byte(task("wrong", "bye.txt")), 0o644))
	return dir
}

// The example agent against a fake model server through runner's OpenAI provider: the
// right answer passes, the wrong one fails; recorded, the run replays offline (the server
// stopped) to the same verdicts and transcripts, although the agent's requests name
// another workspace and session each run.
func TestCommandAgentRecordsAndReplaysTheSameVerdict(t *testing.T) {
	t.Parallel()
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "hello.txt", Replies: []fakellm.Reply{
			fakellm.ToolCall("write_file", map[string]any{"path": "hello.txt", "content": "hello\n"}),
			fakellm.ToolCall("task_complete", map[string]any{"summary": "wrote it"}),
		}},
		{Match: "bye.txt", Replies: []fakellm.Reply{
			fakellm.ToolCall("write_file", map[string]any{"path": "bye.txt", "content": "goodbye\n"}),
			fakellm.ToolCall("task_complete", map[string]any{"summary": "wrote it"}),
		}},
	}})
	suite := agentSuite(t)
	cassette := filepath.Join(t.TempDir(), "cassette")
	common := []string{"run", "-j", "2", "--model", "openai:fake"}
	env := []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-fake-provider-key-123456"}

	recOut := filepath.Join(t.TempDir(), "rec")
	rec := runner(t, run{Args: append(append(common, "--out", recOut, "--record", cassette), suite), Env: env, Timeout: 2 * time.Minute})
	assert.Equal(t, rec.Code, 1, rec.Stdout+rec.Stderr)
	right := readResult(t, filepath.Join(recOut, "right", "result.json"))
	assert.Equal(t, right.Status, result.Passed, right.Reason)
	assert.Equal(t, right.Steps, 2)
	assert.Assert(t, right.Usage.PromptTokens > 0, "the fake's usage is the run's")
	wrong := readResult(t, filepath.Join(recOut, "wrong", "result.json"))
	assert.Equal(t, wrong.Status, result.Failed)
	assert.Assert(t, is.Contains(wrong.Reason, "file_contains"))
	// The provider saw the agent's request with the workspace as /workspace.
	reqs := srv.Requests()
	assert.Assert(t, len(reqs) >= 4)
	assert.Assert(t, is.Contains(reqs[0].Messages[0].Content, "You work in /workspace (session "))
	served := srv.Served()
	srv.Close()

	playOut := filepath.Join(t.TempDir(), "play")
	play := runner(t, run{Args: append(append(common, "--out", playOut, "--replay", cassette), suite), Timeout: 2 * time.Minute})
	assert.Equal(t, play.Code, rec.Code, play.Stdout+play.Stderr)
	for _, name := range []string{"right", "wrong"} {
		want, got := readResult(t, filepath.Join(recOut, name, "result.json")), readResult(t, filepath.Join(playOut, name, "result.json"))
		assert.Equal(t, got.Status, want.Status, name)
		assert.Equal(t, got.Reason, want.Reason, name)
		assert.Equal(t, got.Steps, want.Steps, name)
		assert.DeepEqual(t, got.Usage, want.Usage)
		assert.DeepEqual(t, got.Assertions, want.Assertions)
		assert.Equal(t, stableAgentTranscript(t, filepath.Join(playOut, name, "transcript.jsonl"), playOut),
			stableAgentTranscript(t, filepath.Join(recOut, name, "transcript.jsonl"), recOut), name)
	}
	assert.Equal(t, srv.Served(), served, "the replay reached no server")
}

// stableAgentTranscript is stableTranscript without what differs between two runs of an
// external agent: its start line (the forwarder's socket directory), its session id.
func stableAgentTranscript(t *testing.T, path, out string) string {
	t.Helper()
	var keep []string
	for _, line := range strings.Split(stableTranscript(t, path, out), "\n") {
		if strings.Contains(line, `"type":"`+transcript.TypeAgent+`"`) && strings.Contains(line, `"argv"`) {
			continue
		}
		if i := strings.Index(line, "(session "); i >= 0 {
			line = line[:i] + line[i+len("(session ")+36:]
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// The provider's key, in runner's own environment, never reaches the agent: its whole
// view is searched (its environment, every process's environment and command line in
// /proc, its home, the temp dirs), and the scenario fails if the key is found. With
// --sandbox none the agent reads runner's /proc/PID/environ: the control.
func TestProviderKeyIsNowhereInTheAgentsView(t *testing.T) {
	t.Parallel()
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{{Replies: []fakellm.Reply{{Text: "done"}}}}})
	defer srv.Close()
	const half1, half2 = "sk-e2e-provider", "-key-7f3a9c1e55"
	dir := t.TempDir()
	task := "name: grep-key\nprompt: go\nenv: {K1: " + half1 + ", K2: " + half2 + "}\nagent: {command: '" + hostKeyGrep + "'}\n" +
		"assert:\n  - file_absent: leak.txt\n"
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "grep.yaml"), []byte(task), 0o644))
	for _, mode := range []string{"auto", "none"} {
		out := t.TempDir()
		res := runner(t, run{Args: []string{"run", "--out", out, "--model", "openai:fake", "--sandbox", mode, "--keep-workspaces", dir},
			Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=" + half1 + half2, "ANTHROPIC_API_KEY=" + half1 + half2}, Timeout: 2 * time.Minute})
		got := readResult(t, filepath.Join(out, "grep-key", "result.json"))
		leak, _ := os.ReadFile(filepath.Join(got.Workspace, "leak.txt"))
		if mode == "none" {
			assert.Equal(t, got.Status, result.Failed, "the control: unconfined, the agent reads runner's environment")
			assert.Assert(t, is.Contains(string(leak), "/environ"))
			continue
		}
		assert.Equal(t, string(leak), "", "the agent found the provider key")
		assert.Equal(t, res.Code, 0, res.Stdout+res.Stderr)
		assert.Equal(t, got.Status, result.Passed, got.Reason)
	}
}

// --budget-usd holds inside a scenario, for runner's loop and an external agent alike:
// both start at once (-j 2), each first answer costs $1.40 (the --prices file) of a $1
// budget (each held 3 s, so both are sent before either is charged), so each one's
// second model request is refused unsent: the loop stops, and the
// agent's request is answered with its protocol's 400, which ends it. Both scenarios
// stop with stop reason budget, the fake model answered exactly two requests, and the
// run says the budget was spent.
func TestBudgetRefusesTheNextRequestOfEveryRunningScenario(t *testing.T) {
	t.Parallel()
	costly := func(r fakellm.Reply) fakellm.Reply {
		r.Usage = &fakellm.Usage{PromptTokens: 1_000_000, CompletionTokens: 200_000}
		if r.ToolCalls[0].Name == "write_file" {
			r.Delay = fakellm.Duration(3 * time.Second) // both first requests in flight before either is charged
		}
		return r
	}
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "LOOP-TASK", Replies: []fakellm.Reply{
			costly(fakellm.ToolCall("write_file", map[string]any{"path": "hello.txt", "content": "hello\n"})),
			costly(fakellm.ToolCall("task_complete", map[string]any{"summary": "done"})),
		}},
		{Match: "AGENT-TASK", Replies: []fakellm.Reply{
			costly(fakellm.ToolCall("write_file", map[string]any{"path": "hello.txt", "content": "hello\n"})),
			costly(fakellm.ToolCall("task_complete", map[string]any{"summary": "done"})),
		}},
	}})
	defer srv.Close()
	dir := agentSuite(t)
	for _, f := range []string{"right.yaml", "wrong.yaml"} {
		assert.NilError(t, os.Remove(filepath.Join(dir, f)))
	}
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte("name: loop\nprompt: LOOP-TASK write hello.txt.\ntools: [write_file]\n"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: agent\nprompt: AGENT-TASK write hello.txt.\n"+
		"agent: {command: sh $TASK_DIR/curl-agent.sh}\ntimeout: 2m\n"), 0o644))
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	assert.NilError(t, os.WriteFile(prices, []byte("models:\n  openai:fake: {input: 1.0, output: 2.0}\n"), 0o644))
	out := t.TempDir()
	res := runner(t, run{Args: []string{"run", "-j", "2", "--out", out, "--model", "openai:fake", "--prices", prices, "--budget-usd", "1", dir},
		Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-fake"}, Timeout: 2 * time.Minute})
	assert.Equal(t, res.Code, 3, res.Stdout+res.Stderr)
	assert.Check(t, is.Contains(res.Stderr, "the --budget-usd of $1.00 was spent"))
	for _, name := range []string{"loop", "agent"} {
		got := readResult(t, filepath.Join(out, name, "result.json"))
		assert.Check(t, is.Equal(got.Status, result.Errored), name)
		assert.Check(t, is.Equal(got.Stop, result.StopBudget), name)
		assert.Check(t, is.Equal(got.Steps, 1), name)
		assert.Check(t, is.Contains(got.Reason, "of its budget of $1.00"), name)
	}
	assert.Equal(t, srv.Served(), 2, "the refused requests never reached the model")
	agent := readTranscript(t, filepath.Join(out, "agent", "transcript.jsonl"))
	var output string
	for _, e := range agent {
		if e.Type == transcript.TypeAgent && strings.Contains(string(e.Data), `"exited":true`) {
			output = string(e.Data)
		}
	}
	assert.Check(t, is.Contains(output, "invalid_request_error"), "the agent was refused in its protocol: %s", output)
}

// runner show and the pages tell an external agent's run step by step, as they tell the
// loop's: the agent and its command line, what it sent each step (the tools it offered,
// its own system prompt and user turn), the model's answers, the calls it ran with their
// results (also the one the refused request carried), a request refused past max_steps,
// and how it ended; every piece of agent and model text inert (markup escaped on the
// page, terminal escapes made visible).
func TestExternalAgentStepsAreShown(t *testing.T) {
	t.Parallel()
	const evil = "</pre><script>alert(1)</script>\x1b[31mRED\x1b[0m"
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "hello.txt", Replies: []fakellm.Reply{
			fakellm.ToolCall("write_file", map[string]any{"path": "hello.txt", "content": "hello " + evil + "\n"}),
			fakellm.ToolCall("run_in_terminal", map[string]any{"command": "cat hello.txt"}),
			fakellm.ToolCall("run_in_terminal", map[string]any{"command": "echo again"}),
		}},
	}})
	defer srv.Close()
	dir := agentSuite(t)
	assert.NilError(t, os.Remove(filepath.Join(dir, "wrong.yaml")))
	b, err := os.ReadFile(filepath.Join(dir, "right.yaml"))
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "right.yaml"), []byte(strings.Replace(string(b), "max_steps: 5", "max_steps: 2", 1)), 0o644))
	out := t.TempDir()
	res := runner(t, run{Args: []string{"run", "--out", out, "--model", "openai:fake", dir},
		Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-fake"}, Timeout: 2 * time.Minute})
	assert.Equal(t, res.Code, 1, res.Stdout+res.Stderr)

	show := runner(t, run{Args: []string{"show", out, "right"}})
	assert.Equal(t, show.Code, 0, show.Stderr)
	text := show.Stdout
	for _, want := range []string{
		"agent command\n  /usr/bin/sh -c sh $TASK_DIR/curl-agent.sh",
		"(through runner's forwarder)",
		"step 1 ", "tools offered: write_file, read_file, run_in_terminal, task_complete",
		"sent (system, ", "You work in /workspace (session ",
		"sent (user, ", "Write hello.txt containing hello",
		"→ write_file", `content: hello </pre><script>alert(1)</script>\x1b[31mRED\x1b[0m`,
		"step 2 ", "→ run_in_terminal", `hello </pre><script>alert(1)</script>\x1b[31mRED\x1b[0m`,
		"refused by runner's endpoint: max_steps: runner's endpoint answered 2 model requests",
		"agent exited with code 2: gave up", `curl-agent: the model request failed: {"error":{"code":"invalid_request_error"`,
	} {
		assert.Check(t, is.Contains(text, want))
	}
	assert.Check(t, !strings.Contains(text, "\x1b"), "a terminal escape of the model's reached the terminal")

	page, err := os.ReadFile(filepath.Join(out, "right", "index.html"))
	assert.NilError(t, err)
	html := string(page)
	for _, want := range []string{
		"<h2>The agent</h2>", "sh -c sh $TASK_DIR/curl-agent.sh", "Step 1</h3>", "Step 2</h3>",
		"tools offered: <code>write_file</code>", "You work in /workspace (session ",
		"hello &lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31mRED",
		"Refused by runner's endpoint: max_steps", "<h2>How the agent ended</h2>", "exit code 2",
	} {
		assert.Check(t, is.Contains(html, want))
	}
	assert.Check(t, !strings.Contains(html, "<script>alert"), "markup of the model's reached the page")
	assert.Check(t, !strings.Contains(html, "\x1b"))
}
