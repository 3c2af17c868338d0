package tests

import (
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

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools/exec/container"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// leftovers lists the containers, running or not, of a run id.
func leftovers(t *testing.T, e *container.Engine, runID string) string {
	t.Helper()
	ids, err := e.List(context.Background(), runID)
	assert.NilError(t, err)
	return strings.Join(ids, " ")
}

// doNothing replaces a task file's reference with a lone task_complete.
func doNothing(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	assert.NilError(t, err)
	i := strings.Index(string(b), "\nreference:")
	assert.Assert(t, i > 0, "no reference in %s", b)
	body := string(b[:i+1]) + "reference:\n  - task_complete: {summary: did nothing}\n"
	assert.NilError(t, os.WriteFile(path, []byte(body), 0o644))
}

// TestImportedTasksRunInContainers imports the Terminal-Bench and Harbor fixtures, runs
// them with the oracle (pass, per-test results in the JUnit report, score 1) and with a
// do-nothing reference (fail, score 0), and finds no container left behind.
func TestImportedTasksRunInContainers(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	dir := t.TempDir()
	for _, f := range []struct{ format, src string }{
		{"terminal-bench", "testdata/import/terminal-bench"},
		{"harbor", "testdata/import/harbor/harbor-hello"},
	} {
		o := runner(t, run{Args: []string{"import", f.format, f.src, "--out", filepath.Join(dir, "tasks")}})
		assert.Equal(t, o.Code, 0)
		assert.Assert(t, is.Contains(o.Stdout, "1 converted, 0 skipped"))
	}
	tasks := filepath.Join(dir, "tasks")
	runID := container.NewRunID()
	pass := runner(t, run{Timeout: 3 * time.Minute, Args: []string{"run", tasks, "--engine", e.Path, "--run-id", runID,
		"--out", filepath.Join(dir, "out"), "--junit", filepath.Join(dir, "junit.xml"), "--json", filepath.Join(dir, "run.json")}})
	assert.Equal(t, pass.Code, 0)
	validateJUnit(t, filepath.Join(dir, "junit.xml"))
	junit, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(junit), `name="tests/test_outputs.py::test_hello_file_content" classname="tb-hello"`))
	assert.Assert(t, is.Contains(string(junit), `tests="6"`), "2 scenarios and 4 tests")
	var r result.Run
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &r))
	for _, s := range r.Scenarios {
		assert.Equal(t, len(s.Assertions[0].Tests), 2, s.Name)
		assert.Equal(t, *s.Assertions[0].PassFraction, 1.0, s.Name)
	}
	assert.Equal(t, *r.Scenarios[0].Score, 1.0, "harbor's reward")

	doNothing(t, filepath.Join(tasks, "tb-hello.yaml"))
	doNothing(t, filepath.Join(tasks, "harbor-hello.yaml"))
	fail := runner(t, run{Timeout: 3 * time.Minute, Args: []string{"run", tasks, "--engine", e.Path, "--run-id", runID,
		"--out", filepath.Join(dir, "out2"), "--json", filepath.Join(dir, "run2.json")}})
	assert.Equal(t, fail.Code, 1)
	b, err = os.ReadFile(filepath.Join(dir, "run2.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &r))
	for _, s := range r.Scenarios {
		assert.Equal(t, s.Status, result.Failed, s.Name)
		assert.Equal(t, *s.Assertions[0].PassFraction, 0.0, s.Name)
	}
	assert.Equal(t, *r.Scenarios[0].Score, 0.0)
	assert.Equal(t, leftovers(t, e, runID), "")
}

// TestInterruptRemovesTheContainer: SIGINT while the model thinks ends the run with exit 130
// and removes the scenario's container.
func TestInterruptRemovesTheContainer(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	containertest.Image(t, e)
	task := stallTask + "environment:\n  dockerfile: " + containertest.DockerfilePath(t) + "\n"
	runID := container.NewRunID()
	cmd, _, _, _ := startStalled(t, []string{writeTask(t, "stall", task)}, "--engine", e.Path, "--run-id", runID)
	assert.Assert(t, leftovers(t, e, runID) != "", "the container runs while the agent does")
	assert.NilError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var exit *exec.ExitError
	assert.Assert(t, errors.As(err, &exit) && exit.ExitCode() == 130, "exit: %v", err)
	assert.Equal(t, leftovers(t, e, runID), "")
}
