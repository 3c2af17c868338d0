package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools/exec/container"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// tamperedTask is a task in an image whose test tool, /usr/local/bin/check, lives outside
// the workspace. Its reference is the attack, as root in the agent's container: a wrong
// answer, the test tool replaced by `exit 0`, and /bin/sh replaced by a wrapper that
// rewrites the answer once the hidden tests have arrived, at once and from a background
// process that outlives the exec that started it. (A script: command rules do not read
// one.)
const tamperedTask = `name: tampered
prompt: Put the answer in answer.txt.
timeout: 3m
environment:
  dockerfile: Dockerfile
verify:
  fresh_container: true
  files:
    hidden.sh: grep -qx 42 /app/answer.txt
assert:
  - command: {run: check}
  - command: {run: sh /tests/hidden.sh}
reference:
  - write_file:
      path: fix.sh
      content: |
        echo 41 > answer.txt
        printf '#!/bin/sh\nexit 0\n' > /usr/local/bin/check
        rm /bin/sh
        printf '%s\n' '#!/bin/busybox sh' \
          '[ -d /tests ] && ! grep -qx 42 /app/answer.txt && echo 42 > /app/answer.txt' \
          '( while :; do [ -d /tests ] && ! grep -qx 42 /app/answer.txt && echo 42 > /app/answer.txt; /bin/busybox usleep 20000; done ) </dev/null >/dev/null 2>&1 &' \
          'exec /bin/busybox sh "$@"' > /bin/sh
        chmod 755 /bin/sh
  - run_in_terminal: {command: sh fix.sh}
  - task_complete: {summary: The answer is 42.}
`

const checkerImage = "FROM " + containertest.BaseImage + "\n" +
	"ENV PATH=/usr/local/bin:/usr/bin:/bin\n" +
	`RUN mkdir -p /app /usr/local/bin && printf '#!/bin/sh\ngrep -qx 42 /app/answer.txt\n' > /usr/local/bin/check && chmod 755 /usr/local/bin/check` + "\n"

// TestReplacedTestToolAndLeftoverRewriterFailInFreshContainer performs the attack on
// verification in a container through the binary, the oracle playing it: with
// verify.fresh_container the checks run in a new container of the image, on a copy of
// the final workspace, after the agent's container stopped, and the scenario fails. The
// run without fresh_container (where the attack passes: SECURITY.md's known gap) is in
// runner/scenario's TestFreshContainerDefeatsReplacedTestToolAndLeftoverProcess.
func TestReplacedTestToolAndLeftoverRewriterFailInFreshContainer(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	path := writeTask(t, "tampered", tamperedTask)
	assert.NilError(t, os.WriteFile(filepath.Join(filepath.Dir(path), "Dockerfile"), []byte(checkerImage), 0o644))
	runID := container.NewRunID()
	out := filepath.Join(t.TempDir(), "out")
	o := runner(t, run{Timeout: 4 * time.Minute, Args: []string{"run", path, "--engine", e.Path, "--run-id", runID, "--out", out}})
	assert.Equal(t, o.Code, 1, o.Stdout+o.Stderr)
	s := readResult(t, filepath.Join(out, "tampered", "result.json"))
	assert.Equal(t, s.Status, result.Failed, s.Reason)
	assert.Check(t, is.Contains(s.Reason, "`check` ended with exit code 1"))
	for _, a := range s.Assertions {
		assert.Check(t, !a.Passed, "%s passed: %s", a.Kind, a.Message)
	}
	assert.Assert(t, s.FilesChanged != nil)
	assert.Check(t, is.Contains(strings.Join(s.FilesChanged.Outside, ","), "C /usr/local/bin/check"))
	assert.Equal(t, leftovers(t, e, runID), "")
}

// TestImportedTasksVerifyInFreshContainers imports the Terminal-Bench and Harbor fixtures
// with --fresh-container and runs them with the oracle: the tests, their per-test results
// and Harbor's reward file (an absolute path inside the container) come from the
// verification's own container, and the tasks pass with score 1.
func TestImportedTasksVerifyInFreshContainers(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	dir := t.TempDir()
	for _, f := range []struct{ format, src string }{
		{"terminal-bench", "testdata/import/terminal-bench"},
		{"harbor", "testdata/import/harbor/harbor-hello"},
	} {
		o := runner(t, run{Args: []string{"import", f.format, f.src, "--fresh-container", "--out", filepath.Join(dir, "tasks")}})
		assert.Equal(t, o.Code, 0, o.Stdout+o.Stderr)
		assert.Assert(t, !strings.Contains(o.Stdout, "fresh_container is not set"), o.Stdout)
	}
	runID := container.NewRunID()
	o := runner(t, run{Timeout: 4 * time.Minute, Args: []string{"run", filepath.Join(dir, "tasks"), "--engine", e.Path, "--run-id", runID,
		"--out", filepath.Join(dir, "out"), "--json", filepath.Join(dir, "run.json")}})
	assert.Equal(t, o.Code, 0, o.Stdout+o.Stderr)
	var r result.Run
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &r))
	assert.Equal(t, len(r.Scenarios), 2)
	for _, s := range r.Scenarios {
		assert.Equal(t, s.Status, result.Passed, s.Name)
		assert.Equal(t, *s.Assertions[0].PassFraction, 1.0, s.Name)
	}
	assert.Equal(t, *r.Scenarios[0].Score, 1.0, "harbor's reward, read in the verification's container")
	assert.Equal(t, leftovers(t, e, runID), "")
}
