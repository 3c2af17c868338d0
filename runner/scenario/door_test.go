package scenario_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/runner/workspace/door"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
	confinement "github.com/agentrunner/runner/tools/exec/sandbox"
)

// TestMain lets this test binary serve as the Landlock sandbox's helper, as the runner's
// main does.
func TestMain(m *testing.M) {
	confinement.RunHelperIfRequested()
	os.Exit(m.Run())
}

// doorModes are where the agent's commands and the checks run: each sandbox this machine
// has, and a fresh container (skipped without an engine).
var doorModes = []string{confinement.ModeNone, confinement.ModeBwrap, confinement.ModeLandlock, "fresh_container"}

// doorOptions are the options that run a scenario in mode, and the task lines it needs.
func doorOptions(t *testing.T, mode string, calls ...string) (scenario.Options, string) {
	t.Helper()
	m := &scriptModel{}
	for _, c := range calls {
		m.responses = append(m.responses, reply(toolCall("run_in_terminal", fmt.Sprintf(`{"command":%q}`, c))))
	}
	m.responses = append(m.responses, reply(complete))
	if mode == "fresh_container" {
		opts, _ := envOptions(t, m)
		return opts, fmt.Sprintf("environment: {dockerfile: %s}\nverify: {fresh_container: true}\n", containertest.DockerfilePath(t))
	}
	opts := runOptions(t, m)
	w, _, err := confinement.Probe(context.Background(), mode)
	if err != nil {
		t.Skipf("no %s sandbox here: %v", mode, err)
	}
	opts.Sandbox = func(string) (tools.CommandWrapper, error) { return w, nil }
	return opts, ""
}

// TestWorkspaceTooLargeOrTooDeepFails performs the flooding attack on verification's
// walks, with their limits lowered (a million entries and 256 levels take long to make):
// more files than a walk visits, or directories nested deeper than it goes, fail the
// scenario at once, saying so, in every mode; before, a flood made the comparison and the
// copy run into the deadline (an error) and a deep tree failed the copy with "file name
// too long" (an error).
func TestWorkspaceTooLargeOrTooDeepFails(t *testing.T) {
	old := workspace.WalkLimits
	workspace.WalkLimits = door.Limits{MaxEntries: 300, MaxDepth: 12}
	t.Cleanup(func() { workspace.WalkLimits = old })
	for _, tc := range []struct{ name, command, want string }{
		{"too many files", "mkdir flood && cd flood && i=0; while [ $i -lt 400 ]; do : > f$i; i=$((i+1)); done",
			"the agent broke the workspace: it holds more than 300 files and directories"},
		{"too deep", "i=0; while [ $i -lt 15 ]; do mkdir d && cd -P d || exit 1; i=$((i+1)); done",
			"the agent broke the workspace: d/d/d/d/d/d/d/d/d/d/d/d: directories nested more than 12 deep"},
	} {
		for _, mode := range doorModes {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				opts, env := doorOptions(t, mode, tc.command)
				tk := parseTask(t, fmt.Sprintf("prompt: p\ntools: [run_in_terminal]\ntimeout: 2m\n%sassert:\n  - file_exists: flood\n", env))
				began := time.Now()
				res := runWithin(t, 90*time.Second, tk, opts)
				assert.Equal(t, res.Status, result.Failed, res.Reason)
				assert.Check(t, is.Contains(res.Reason, tc.want))
				assert.Assert(t, time.Since(began) < time.Minute, "took %s", time.Since(began))
			})
		}
	}
}

// TestFileGrowingWhileReadFails: a process the agent left (with --sandbox none it can
// outlive the agent's command) keeps appending to the file an assertion reads. The read
// never waits for it and never errors the scenario: it fails, because the file grew while
// read or because what it holds is wrong. (Which one depends on timing; the door's own
// test, TestFileThatGrowsWhileReadIsRefused, makes the growth certain.)
func TestFileGrowingWhileReadFails(t *testing.T) {
	t.Parallel()
	opts, _ := doorOptions(t, confinement.ModeNone,
		"setsid sh -c 'timeout 20 sh -c \"while :; do echo 41; done\" >> answer.txt' </dev/null >/dev/null 2>&1 & sleep 0.5")
	tk := parseTask(t, "prompt: p\ntools: [run_in_terminal]\ntimeout: 1m\nassert:\n  - file_contains: {path: answer.txt, text: \"42\"}\n")
	res := runWithin(t, 45*time.Second, tk, opts)
	assert.Equal(t, res.Status, result.Failed, res.Reason)
	assert.Assert(t, strings.Contains(res.Reason, "the agent broke the workspace: answer.txt grew while runner read it") ||
		strings.Contains(res.Reason, `answer.txt does not contain "42"`), res.Reason)
}
