package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
)

// stallTask reads two files, then waits on a model that takes far too long.
const stallTask = `name: stall
prompt: Read a.txt and b.txt, then call task_complete.
tools: [read_file]
max_steps: 10
workspace:
  files: {a.txt: "A\n", b.txt: "B\n"}
assert:
  - completed: true
`

// stallScript answers two steps at once and holds the third back for a minute (the wait
// ends when the client goes away).
func stallScript() fakellm.Script {
	stall := fakellm.ToolCall("task_complete", map[string]any{"summary": "too late"})
	stall.Delay = fakellm.Duration(time.Minute)
	return fakellm.Script{Replies: []fakellm.Reply{
		fakellm.ToolCall("read_file", map[string]any{"path": "a.txt"}),
		fakellm.ToolCall("read_file", map[string]any{"path": "b.txt"}),
		stall,
	}}
}

// startStalled starts the binary on dir (with extra flags) against a stalling fake and
// returns once the transcript of the stall scenario holds its second tool call.
func startStalled(t *testing.T, paths []string, extra ...string) (cmd *exec.Cmd, out string, stdout, stderr *bytes.Buffer) {
	t.Helper()
	srv := fakellm.Start(stallScript())
	t.Cleanup(srv.Close)
	out = filepath.Join(t.TempDir(), "out")
	p := provider{"openai", true}
	args, env := p.args(srv)
	args = append(append([]string{"run", "--sandbox", "none", "-j", "1", "--out", out}, args...), extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cmd = command(t, ctx, run{Args: append(args, paths...), Env: env})
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	path := filepath.Join(out, "stall", "transcript.jsonl")
	deadline := time.Now().Add(15 * time.Second)
	for {
		if events, err := transcript.ReadFile(path); err == nil && len(eventsOf(events, transcript.TypeToolCall)) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the transcript never held two tool calls\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The third request is on its way; give it a moment to reach the fake.
	for srv.Served() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return cmd, out, stdout, stderr
}

// TestKillMidRun: kill -9 while the model is thinking loses no finished event: the
// transcript reads without error and holds both finished steps whole.
func TestKillMidRun(t *testing.T) {
	t.Parallel()
	cmd, out, _, _ := startStalled(t, []string{writeTask(t, "stall", stallTask)})
	assert.NilError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := cmd.Wait()
	assert.Assert(t, err != nil, "killed process exited cleanly")

	path := filepath.Join(out, "stall", "transcript.jsonl")
	raw, err := os.ReadFile(path)
	assert.NilError(t, err)
	assert.Assert(t, bytes.HasSuffix(raw, []byte("\n")), "the last event is whole")
	events, err := transcript.Read(bytes.NewReader(raw))
	assert.NilError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	// Every line is an event: nothing was torn or lost.
	assert.Equal(t, len(events), bytes.Count(raw, []byte("\n")))
	assert.DeepEqual(t, types, []string{
		"start",
		"request", "response", "decision", "tool_call",
		"request", "response", "decision", "tool_call",
		"request",
	})
	calls := toolCalls(t, events)
	assert.Assert(t, is.Contains(calls[0].Result.Output, "A"))
	assert.Assert(t, is.Contains(calls[1].Result.Output, "B"))
	assert.Equal(t, events[len(events)-1].Step, 3)
	// The run never finished: no result.json.
	_, err = os.Stat(filepath.Join(out, "stall", "result.json"))
	assert.Assert(t, os.IsNotExist(err), "result.json: %v", err)
}

// TestTerminateMidRun: SIGTERM stops the run promptly with exit 143 (128 + SIGTERM, as
// shells report it), and the reports are
// still written: the running scenario and the one that never started are "interrupted".
func TestTerminateMidRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "stall.yaml"), []byte(stallTask), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "zz-later.yaml"),
		[]byte(strings.Replace(stallTask, "name: stall", "name: zz-later", 1)), 0o644))
	reports := t.TempDir()
	junit, jsonFile := filepath.Join(reports, "junit.xml"), filepath.Join(reports, "report.json")
	cmd, out, stdout, stderr := startStalled(t, []string{dir}, "--junit", junit, "--json", jsonFile)

	sent := time.Now()
	assert.NilError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	took := time.Since(sent)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Assert(t, took < 5*time.Second, "exited %s after SIGTERM", took)
	var exit *exec.ExitError
	assert.Assert(t, errors.As(err, &exit), "exit: %v", err)
	assert.Equal(t, exit.ExitCode(), 143)
	assert.Check(t, strings.Contains(stderr.String(), "runner: run: interrupted (SIGTERM): 2 of 2 scenarios did not finish"), stderr)

	b, err := os.ReadFile(jsonFile)
	assert.NilError(t, err)
	var rep struct {
		Totals struct {
			Scenarios, Errored int
		} `json:"totals"`
		Scenarios []result.Scenario `json:"scenarios"`
	}
	assert.NilError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, rep.Totals.Scenarios, 2)
	assert.Equal(t, rep.Totals.Errored, 2)
	for _, s := range rep.Scenarios {
		assert.Equal(t, s.Status, result.Errored, s.Name)
		assert.Equal(t, s.Stop, result.StopInterrupt, s.Name)
		assert.Assert(t, is.Contains(s.Reason, "interrupted"), s.Name)
	}
	assert.Equal(t, rep.Scenarios[0].Steps, 2, "the two finished steps are counted")

	x, err := os.ReadFile(junit)
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(x), `errors="2"`))
	assert.Assert(t, is.Contains(string(x), "interrupted"))
	validateJUnit(t, junit)

	// The running scenario's transcript ends properly.
	events := readTranscript(t, filepath.Join(out, "stall", "transcript.jsonl"))
	last := events[len(events)-1]
	assert.Equal(t, last.Type, "end")
	assert.Assert(t, is.Contains(string(last.Data), `"stop_reason":"interrupted"`))
	assert.Assert(t, is.Contains(stdout.String(), "errors: stall, zz-later"))
}
