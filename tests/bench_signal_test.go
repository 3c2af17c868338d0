package tests

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/bench"
	"github.com/agentrunner/runner/runner/model/fakellm"
)

// Ctrl-C during a bench still writes every report: the running cell and the ones not
// started are errors or not run, the models not reached are not run, every unmeasured
// cell is counted (the model never reached too), and the exit code is the interrupt's
// (130), the console's line for the model not reached plain words (it printed a raw
// "not_run (not run: interrupted)").
func TestBenchInterruptedWritesReports(t *testing.T) {
	t.Parallel()
	stall := fakellm.ToolCall("task_complete", map[string]any{"summary": "too late"})
	stall.Delay = fakellm.Duration(time.Minute)
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{stall}})
	defer srv.Close()
	tasks := benchTasks(t)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := command(t, ctx, run{
		Args: []string{"bench", "--out", out, "--sandbox", "none", "-j", "1", "--repeat", "2", "--models", "ollama:a,ollama:b", tasks},
		Env:  []string{"OLLAMA_HOST=" + srv.URL()},
	})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	assert.NilError(t, cmd.Start())
	deadline := time.Now().Add(15 * time.Second)
	for srv.Served() < 1 && time.Now().Before(deadline) { // the first cell waits on the model
		time.Sleep(10 * time.Millisecond)
	}
	assert.NilError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	assert.Equal(t, cmd.ProcessState.ExitCode(), 130, "%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	assert.Check(t, strings.Contains(stderr.String(), "runner: bench: interrupted (SIGINT): 8 of 8 cells unmeasured"), stderr.String())
	assert.Check(t, strings.Contains(stdout.String(), "== ollama:b: not run: interrupted\n"), stdout.String())
	assert.Check(t, !strings.Contains(stdout.String(), "not_run"), stdout.String())

	rep, rerr := bench.ReadFile(filepath.Join(out, bench.JSONFile))
	assert.NilError(t, rerr)
	a, b := rep.Models[0], rep.Models[1]
	assert.Equal(t, a.Summary.Planned, 4)
	assert.Equal(t, a.Summary.Errored, 4, "the interrupted cell and the three never started: %+v", a.Summary)
	assert.Equal(t, b.Status, bench.ModelNotRun)
	assert.Equal(t, b.Summary.NotRun, 4)
	_, serr := os.Stat(filepath.Join(out, "ollama-a", "alpha.r1", "transcript.jsonl"))
	assert.NilError(t, serr, "the interrupted cell's transcript is on disk")
}
