package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
)

// fifoTask is an agent (the oracle playing reference:) that replaces the file a
// file_contains assertion reads, and a verify file's path, with FIFOs: both used to block
// the runner for ever. Its last assertion runs for a minute, so the run is still busy
// verifying when a test interrupts it.
const fifoTask = `name: fifo
prompt: Write ok to result.txt.
tools: [run_in_terminal]
timeout: 2m
verify:
  files: {hidden.txt: "hidden\n"}
assert:
  - file_contains: {path: result.txt, text: ok}
  - command: {run: "sleep %s", timeout: 2m}
reference:
  - run_in_terminal: {command: "mkfifo result.txt %s"}
  - task_complete: {summary: done}
`

// A FIFO under a file assertion fails the scenario at once (exit 1); a FIFO at a verify
// file's path is the agent breaking the workspace: a failure too, not an error.
func TestFIFOsFailInsteadOfHanging(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, extra, want string }{
		{"assertion", "", "result.txt is a FIFO (named pipe), not a regular file"},
		{"verify path", "hidden.txt", "the agent broke the workspace: hidden.txt is a FIFO (named pipe) where a regular file must go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeTask(t, "fifo", fmt.Sprintf(fifoTask, "0", tc.extra))
			out := filepath.Join(t.TempDir(), "out")
			o := runner(t, run{Args: []string{"run", "--sandbox", "none", "--out", out, path}})
			assert.Equal(t, o.Code, 1)
			s := readResult(t, filepath.Join(out, "fifo", "result.json"))
			assert.Equal(t, s.Status, result.Failed)
			assert.Assert(t, is.Contains(s.Reason, tc.want))
		})
	}
}

// SIGINT while the run is verifying a workspace full of FIFOs writes result.json, the
// JSON report and the JUnit report within seconds, with exit 3.
func TestInterruptDuringVerification(t *testing.T) {
	t.Parallel()
	path := writeTask(t, "fifo", fmt.Sprintf(fifoTask, "60", ""))
	out := filepath.Join(t.TempDir(), "out")
	reports := t.TempDir()
	junit, jsonFile := filepath.Join(reports, "junit.xml"), filepath.Join(reports, "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(t, ctx, run{Args: []string{"run", "--sandbox", "none", "--out", out, "--junit", junit, "--json", jsonFile, path}})
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// The agent has finished once task_complete is in the transcript; give verification a
	// moment to reach the FIFO and the long command.
	waitForEvents(t, filepath.Join(out, "fifo", "transcript.jsonl"), transcript.TypeToolCall, 2, "the agent never finished")
	time.Sleep(500 * time.Millisecond)
	interruptWithin(t, cmd, 5*time.Second)

	s := readResult(t, filepath.Join(out, "fifo", "result.json"))
	assert.Equal(t, s.Status, result.Errored)
	assert.Equal(t, s.Stop, result.StopInterrupt)
	b, err := os.ReadFile(jsonFile)
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(b), `"interrupted"`))
	x, err := os.ReadFile(junit)
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(x), `errors="1"`))
	validateJUnit(t, junit)
}

// The suite's protected-hidden-test scenario, with its reference solution replaced by the
// reward hack of issue 7: a TestMain that exits 0 before the hidden test runs. Without
// verify.protect it passes; with it the scenario fails, naming the file.
func TestProtectedScenarioResistsNeuteredTests(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "scenarios", "protected-hidden-test.yaml"))
	assert.NilError(t, err)
	body := string(b)
	body = body[:strings.Index(body, "reference:")] + `reference:
  - run_in_terminal:
      command: printf 'package clamp\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n' > zz_main_test.go
  - task_complete: {summary: done}
`
	for _, tc := range []struct {
		name    string
		protect bool
		code    int
	}{{"protected", true, 1}, {"unprotected", false, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			task := body
			if !tc.protect {
				task = strings.Replace(task, `  protect: ["**/*_test.go", Makefile]`+"\n", "", 1)
			}
			path := writeTask(t, "neuter", task)
			out := filepath.Join(t.TempDir(), "out")
			// The developer's warm Go build cache: a cold one takes minutes on a busy machine.
			cache, err := os.UserCacheDir()
			assert.NilError(t, err)
			o := runner(t, run{Args: []string{"run", "--sandbox", "none", "--cache-dir", cache, "--out", out, path}, Timeout: 4 * time.Minute})
			assert.Equal(t, o.Code, tc.code)
			s := readResult(t, filepath.Join(out, "protected-hidden-test", "result.json"))
			assert.Assert(t, s.FilesChanged != nil)
			assert.DeepEqual(t, s.FilesChanged.Created, []string{"zz_main_test.go"})
			if tc.protect {
				assert.Assert(t, strings.HasPrefix(s.Reason, "agent changed a protected file: zz_main_test.go"), s.Reason)
				assert.DeepEqual(t, s.FilesChanged.Protected, []string{"zz_main_test.go"})
			}
		})
	}
}

// stuckTask has the agent call a file tool on a FIFO it made; a tool that opens it
// blocking hangs in a system call no context reaches. Whether it hangs there or moves on
// to the long command, SIGINT must end the run within seconds with every report written.
const stuckTask = `name: stuck
prompt: Edit notes.txt.
tools: [run_in_terminal, replace_string_in_file]
timeout: 5m
assert:
  - completed: true
reference:
  - run_in_terminal: {command: mkfifo notes.txt}
  - replace_string_in_file: {path: notes.txt, old_string: a, new_string: b}
  - run_in_terminal: {command: sleep 60, timeout_seconds: 120}
  - task_complete: {summary: done}
`

func TestInterruptStuckToolCall(t *testing.T) {
	t.Parallel()
	path := writeTask(t, "stuck", stuckTask)
	out := filepath.Join(t.TempDir(), "out")
	reports := t.TempDir()
	junit, jsonFile := filepath.Join(reports, "junit.xml"), filepath.Join(reports, "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(t, ctx, run{Args: []string{"run", "--sandbox", "none", "--out", out, "--junit", junit, "--json", jsonFile, path}})
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	tr := filepath.Join(out, "stuck", "transcript.jsonl")
	waitForEvents(t, tr, transcript.TypeDecision, 2, "the agent never reached the FIFO")
	time.Sleep(300 * time.Millisecond)
	interruptWithin(t, cmd, 8*time.Second)
	s := readResult(t, filepath.Join(out, "stuck", "result.json"))
	assert.Equal(t, s.Stop, result.StopInterrupt)
	_, err := os.Stat(jsonFile)
	assert.NilError(t, err)
	validateJUnit(t, junit)
	events := readTranscript(t, tr)
	assert.Equal(t, events[len(events)-1].Type, "end")
}

// waitForEvents waits up to 20 s for the transcript at tr to hold n events of type typ,
// and fails the test with why otherwise.
func waitForEvents(t *testing.T, tr, typ string, n int, why string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		events, err := transcript.ReadFile(tr)
		if err == nil && len(eventsOf(events, typ)) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// interruptWithin sends SIGINT to the running cmd and requires it to exit with code 130
// (interrupted, 128 + SIGINT as shells report it) within limit.
func interruptWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) {
	t.Helper()
	sent := time.Now()
	assert.NilError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	took := time.Since(sent)
	assert.Assert(t, took < limit, "exited %s after SIGINT", took)
	var exit *exec.ExitError
	assert.Assert(t, errors.As(err, &exit), "exit: %v", err)
	assert.Equal(t, exit.ExitCode(), 130)
}
