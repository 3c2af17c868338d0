package scenario_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools/exec/container"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// envTask is a task in the shared test image: the agent must write /app/hello.txt; the
// hidden test writes JUnit XML and a reward, and fails without hello.txt.
func envTask(t *testing.T, extra string) string {
	t.Helper()
	return fmt.Sprintf(`name: env-hello
prompt: Write hello.txt.
timeout: 2m
environment:
  dockerfile: %s
workspace:
  setup: ["echo seeded > seed.txt"]
verify:
  files:
    test.sh: |
      [ -f /app/hello.txt ] || { echo "no hello.txt"; exit 1; }
      mkdir -p /logs
      if grep -q world /app/hello.txt; then r=passed; n=1; else r=failed; n=0; fi
      cat > "$RESULTS_DIR/junit.xml" <<XML
      <testsuite><testcase classname="tests" name="test_exists"/>
      <testcase classname="tests" name="test_content">$( [ $r = failed ] && echo '<failure message="no world"/>' )</testcase></testsuite>
      XML
      echo $n > /logs/reward.txt
assert:
  - command: {run: sh /tests/test.sh, junit: junit.xml}
score: {file: /logs/reward.txt}
%s`, containertest.DockerfilePath(t), extra)
}

func envOptions(t *testing.T, m model.Model) (scenario.Options, *container.Engine) {
	t.Helper()
	e := containertest.Engine(t)
	containertest.Image(t, e) // build once, outside the scenario's timeout
	opts := runOptions(t, m)
	opts.Engine, opts.RunID = e.Path, container.NewRunID()
	return opts, e
}

func noLeftovers(t *testing.T, e *container.Engine, runID string) {
	t.Helper()
	ids, err := e.List(context.Background(), runID)
	assert.NilError(t, err)
	assert.Equal(t, len(ids), 0, "containers left behind: %v", ids)
}

// toolOutputs are the outputs of the agent's tool calls, in order.
func toolOutputs(t *testing.T, res result.Scenario) []string {
	var out []string
	for _, ev := range eventsOf(events(t, res), "tool_call") {
		r, _ := ev["result"].(map[string]any)
		s, _ := r["output"].(string)
		out = append(out, s)
	}
	return out
}

func TestEnvironmentPassesWithPerTestResults(t *testing.T) {
	t.Parallel()
	m := script(
		toolCall("run_in_terminal", `{"command":"cat /opt/env/marker seed.txt; ls /tests 2>&1; pwd"}`),
		toolCall("write_file", `{"path":"/app/hello.txt","content":"hello world\n"}`),
		complete,
	)
	opts, e := envOptions(t, m)
	res := run(t, parseTask(t, envTask(t, "")), opts)
	assert.Equal(t, res.Status, result.Passed, res.Reason)
	assert.Equal(t, res.Sandbox, e.Name())
	outs := toolOutputs(t, res)
	// The built image, the setup command's file, no verify files yet, the workdir.
	assert.Assert(t, strings.Contains(outs[0], "built\nseeded\n"), outs[0])
	assert.Assert(t, strings.Contains(outs[0], "No such file"), "the agent saw /tests: %s", outs[0])
	assert.Assert(t, strings.Contains(outs[0], "/app\n"), outs[0])
	a := res.Assertions[0]
	assert.Equal(t, len(a.Tests), 2)
	assert.Equal(t, *a.PassFraction, 1.0)
	assert.Equal(t, *res.Score, 1.0)
	ev := eventsOf(events(t, res), transcript.TypeEnvironment)
	assert.Equal(t, len(ev), 1)
	noLeftovers(t, e, opts.RunID)
}

func TestEnvironmentDoNothingFails(t *testing.T) {
	t.Parallel()
	// The agent plants passing results and a reward where the tests will write theirs.
	m := script(
		toolCall("run_in_terminal", `{"command":"mkdir -p /logs && echo '<testsuite><testcase name=\"ok\"/></testsuite>' > /logs/junit.xml && echo 1 > /logs/reward.txt"}`),
		complete,
	)
	opts, e := envOptions(t, m)
	res := run(t, parseTask(t, envTask(t, "")), opts)
	assert.Equal(t, res.Status, result.Failed)
	assert.Assert(t, strings.Contains(res.Assertions[0].Message, "wrote no readable JUnit file"), res.Assertions[0].Message)
	assert.Equal(t, *res.Score, 0.0)
	noLeftovers(t, e, opts.RunID)

	// Half done: hello.txt without "world": one test of two fails.
	m = script(toolCall("write_file", `{"path":"hello.txt","content":"hello\n"}`), complete)
	opts, _ = envOptions(t, m)
	res = run(t, parseTask(t, envTask(t, "")), opts)
	assert.Equal(t, res.Status, result.Failed)
	assert.Equal(t, *res.Assertions[0].PassFraction, 0.5)
	assert.Assert(t, strings.Contains(res.Reason, "1 of 2 tests passed; failed: test_content"), res.Reason)
	noLeftovers(t, e, opts.RunID)
}

func TestEnvironmentRemovedOnInterrupt(t *testing.T) {
	t.Parallel()
	m := &scriptModel{delay: time.Minute, responses: []*model.Response{reply(complete)}}
	opts, e := envOptions(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for m.stepCount() == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		ids, _ := e.List(context.Background(), opts.RunID)
		if len(ids) != 1 {
			t.Errorf("while the agent runs, want its container, found %v", ids)
		}
		cancel()
	}()
	res := scenario.Run(ctx, parseTask(t, envTask(t, "")), 0, opts)
	assert.Equal(t, res.Stop, result.StopInterrupt)
	noLeftovers(t, e, opts.RunID)
}

func TestEnvironmentRemovedOnTimeout(t *testing.T) {
	t.Parallel()
	m := script(toolCall("run_in_terminal", `{"command":"sleep 300","timeout_seconds":300}`), complete)
	opts, e := envOptions(t, m)
	opts.Timeout = 10 * time.Second // room for start and setup on a busy machine; the agent sleeps 300 s
	began := time.Now()
	res := run(t, parseTask(t, envTask(t, "")), opts)
	assert.Equal(t, res.Stop, result.StopTimeout, res.Reason)
	assert.Assert(t, time.Since(began) < 45*time.Second)
	noLeftovers(t, e, opts.RunID)
}

func TestEnvironmentErrors(t *testing.T) {
	t.Parallel()
	opts, _ := envOptions(t, script(complete))
	opts.Engine = "no-such-engine"
	res := run(t, parseTask(t, envTask(t, "")), opts)
	assert.Equal(t, res.Status, result.Errored)
	assert.Assert(t, strings.Contains(res.Reason, `environment: no container engine: "no-such-engine" not found`), res.Reason)

	opts, e := envOptions(t, script(complete))
	tk := parseTask(t, envTask(t, ""))
	tk.Environment.Dockerfile, tk.Environment.Image = "", "localhost/no-such-image:1"
	res = run(t, tk, opts)
	assert.Equal(t, res.Status, result.Errored)
	assert.Assert(t, strings.Contains(res.Reason, "no-such-image"), res.Reason)
	noLeftovers(t, e, opts.RunID)
}

// TestEnvironmentReplacedTestToolFails performs the second review's container attack: the
// agent, root in its container, puts an `exit 0` where the hidden check's tool lives,
// outside the workspace. The engine's diff records it, and an absolute verify.protect
// glob fails the scenario (the check itself would pass).
func TestEnvironmentReplacedTestToolFails(t *testing.T) {
	t.Parallel()
	tk := fmt.Sprintf(`name: env-tool
prompt: Make the checker pass.
timeout: 2m
environment:
  dockerfile: %s
verify:
  protect: [/opt/checker/**]
assert:
  - command: {run: /opt/checker/check}
`, containertest.DockerfilePath(t))
	m := script(
		toolCall("run_in_terminal", `{"command":"mkdir -p /opt/checker && printf '#!/bin/sh\\nexit 0\\n' > /opt/checker/check && chmod +x /opt/checker/check"}`),
		complete,
	)
	opts, e := envOptions(t, m)
	res := run(t, parseTask(t, tk), opts)
	assert.Equal(t, res.Status, result.Failed, res.Reason)
	assert.Assert(t, strings.Contains(res.Reason, "agent changed a protected file: /opt/checker"), res.Reason)
	assert.Assert(t, res.FilesChanged != nil)
	found := false
	for _, o := range res.FilesChanged.Outside {
		found = found || strings.HasSuffix(o, " /opt/checker/check")
	}
	assert.Assert(t, found, "%v", res.FilesChanged.Outside)
	noLeftovers(t, e, opts.RunID)
}
