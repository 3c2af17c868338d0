//go:build ollama_e2e

package ollama

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tests/ollama/internal/bigram"
)

// passes checks a hello run passed with the two calls the model makes, and returns its
// transcript.
func passes(t *testing.T, inv invocation, name string) []transcript.Event {
	t.Helper()
	assert.Equal(t, inv.Code, 0, "stdout:\n%s", inv.Stdout)
	res := scenarioResult(t, inv, name)
	assert.Equal(t, res.Status, result.Passed, res.Reason)
	evs := events(t, inv, name)
	calls := payloads[transcript.ToolCall](t, evs, transcript.TypeToolCall)
	assert.Equal(t, len(calls), 2)
	assert.Equal(t, calls[0].Name, "write_file")
	assert.Equal(t, calls[1].Name, "task_complete")
	return evs
}

func TestNativeToolCallsPass(t *testing.T) {
	t.Parallel()
	inv := run(t, shared.host, "bigram", writeTask(t, "hello", helloTask("hello", "")))
	evs := passes(t, inv, "hello")
	for _, r := range payloads[transcript.Response](t, evs, transcript.TypeResponse) {
		for _, c := range r.ToolCalls {
			assert.Assert(t, !c.FromText, "a native call read as text")
		}
	}
}

func TestStreamedToolCallsPass(t *testing.T) {
	t.Parallel()
	passes(t, run(t, shared.host, "bigram", writeTask(t, "hello", helloTask("hello", "")), "--stream"), "hello")
}

// TestTextToolCallsPassWithAuto: a template without a ToolCalls block makes Ollama return
// the call as text; the auto parser reads it, and the call has one id in every event
// (issue 17, 2.3: the response event showed "" and the rest call_1_1).
func TestTextToolCallsPassWithAuto(t *testing.T) {
	t.Parallel()
	inv := run(t, shared.host, "bigram-text", writeTask(t, "hello", helloTask("hello", "")), "--tool-call-parser", "auto")
	evs := passes(t, inv, "hello")
	var ids []string
	for _, r := range payloads[transcript.Response](t, evs, transcript.TypeResponse) {
		for _, c := range r.ToolCalls {
			assert.Assert(t, c.FromText)
			ids = append(ids, c.ID)
		}
	}
	var decided, called []string
	for _, d := range payloads[transcript.Decision](t, evs, transcript.TypeDecision) {
		decided = append(decided, d.ID)
	}
	for _, c := range payloads[transcript.ToolCall](t, evs, transcript.TypeToolCall) {
		called = append(called, c.ID)
	}
	assert.DeepEqual(t, ids, []string{"call_1_1", "call_2_1"})
	assert.DeepEqual(t, decided, ids)
	assert.DeepEqual(t, called, ids)
}

func TestModelNotPulled(t *testing.T) {
	t.Parallel()
	inv := run(t, shared.host, "no-such-model", writeTask(t, "hello", helloTask("hello", "")))
	assert.Assert(t, inv.Code != 0)
	assert.Assert(t, is.Contains(inv.Stdout+inv.Stderr, "ollama pull no-such-model"))
}

func TestModelWithoutToolsCapability(t *testing.T) {
	t.Parallel()
	inv := run(t, shared.host, "bigram-notools", writeTask(t, "hello", helloTask("hello", "")))
	assert.Assert(t, inv.Code != 0)
	assert.Assert(t, is.Contains(inv.Stdout+inv.Stderr, "does not support tools"))
}

// TestServerDownMidRun stops a server of its own while the model's first call (sleep 3)
// runs: the next step cannot reach it, and the scenario errors naming the server.
func TestServerDownMidRun(t *testing.T) {
	t.Parallel()
	srv, err := startServer(filepath.Join(t.TempDir(), "server.log"))
	assert.NilError(t, err)
	defer srv.stop()
	task := writeTask(t, "sleepy", `name: sleepy
prompt: Sleep, then write hello.txt.
tools: [run_in_terminal, write_file]
approval: auto
max_steps: 4
assert:
  - completed: true
`)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runnerBin, "run", "--out", out, "--model", "ollama:bigram-sleep",
		"--sandbox", "none", "--retries", "2", task)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OLLAMA_HOST=" + srv.host}
	stdout, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	assert.NilError(t, err)
	defer func() { _ = stdout.Close() }() // a pipe end; the test reads what it needs
	cmd.Stdout, cmd.Stderr = stdout, stdout
	assert.NilError(t, cmd.Start())
	waitFor(t, filepath.Join(out, "sleepy", "transcript.jsonl"), `"type":"decision"`, 2*time.Minute)
	srv.stop()
	err = cmd.Wait()
	b, _ := os.ReadFile(stdout.Name())
	t.Logf("runner output:\n%s", b)
	assert.Assert(t, err != nil, "runner passed with its server gone")
	res := scenarioResult(t, invocation{Out: out}, "sleepy")
	assert.Equal(t, res.Status, result.Errored)
	assert.Equal(t, res.Steps, 1)
	assert.Assert(t, is.Contains(res.Reason, srv.host), res.Reason)
}

// TestTokenLimitIsNamed: with max_tokens 1 Ollama stops inside the call, drops the half
// call and answers empty with done_reason "length"; the failure names the limit
// (issue 17, 2.1).
func TestTokenLimitIsNamed(t *testing.T) {
	t.Parallel()
	inv := run(t, shared.host, "bigram", writeTask(t, "short", helloTask("short", "model_options: {max_tokens: 1}")))
	assert.Equal(t, inv.Code, 1)
	res := scenarioResult(t, inv, "short")
	assert.Equal(t, res.Status, result.Failed)
	assert.Assert(t, is.Contains(res.Reason, "max_tokens"), res.Reason)
	assert.Assert(t, is.Contains(res.Reason, "num_predict = 1"), res.Reason)
	for _, r := range payloads[transcript.Response](t, events(t, inv, "short"), transcript.TypeResponse) {
		assert.Equal(t, r.StopReason, "length")
	}
}

// TestCallToToolNotOffered: Ollama drops a call to a tool the request does not offer and
// answers "" after generating tokens; the failure says what likely happened (2.2).
func TestCallToToolNotOffered(t *testing.T) {
	t.Parallel()
	inv := run(t, shared.host, "bigram-badtool", writeTask(t, "bad", helloTask("bad", "")))
	assert.Equal(t, inv.Code, 1)
	res := scenarioResult(t, inv, "bad")
	assert.Equal(t, res.Status, result.Failed)
	assert.Assert(t, is.Contains(res.Reason, "empty answer"), res.Reason)
	assert.Assert(t, is.Contains(res.Reason, "a tool the request does not offer"), res.Reason)
}

// TestTruncationWarnedInRun: an 1,800-token prompt with num_ctx 1024 is cut by the server
// and passes; runner warns, on the console and in result.json (2.4).
func TestTruncationWarnedInRun(t *testing.T) {
	t.Parallel()
	body := helloTask("long", "model_options: {num_ctx: 1024}")
	body = strings.Replace(body, "prompt: ", "prompt: "+strings.Repeat("Some context. ", 130), 1)
	inv := run(t, shared.host, "bigram", writeTask(t, "long", body))
	assert.Equal(t, inv.Code, 0)
	res := scenarioResult(t, inv, "long")
	assert.Equal(t, len(res.Warnings), 1, "%v", res.Warnings)
	assert.Assert(t, is.Contains(res.Warnings[0], "context length 1024"))
	assert.Assert(t, is.Contains(res.Warnings[0], "system prompt"))
	assert.Assert(t, is.Contains(inv.Stdout+inv.Stderr, "context length 1024"))
}

var _ = bigram.File
