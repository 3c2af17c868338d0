package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// inheritedTask is an agent (the oracle playing reference:) that reads descriptor 7 and
// writes through descriptor 8, which a CI wrapper left open on the runner
// (`runner run 7<secret 8>>log`), from the agent's shell and from a task's assertion.
const inheritedTask = `name: inherited
prompt: Look around.
tools: [run_in_terminal]
timeout: 1m
assert:
  - command: {run: "cat <&7; echo verify-wrote >&8; true"}
reference:
  - run_in_terminal: {command: "cat <&7; echo agent-wrote >&8; ls /proc/self/fd | tr '\\n' ' '"}
  - task_complete: {summary: done}
`

// Descriptors the runner inherited without close-on-exec reached every command: the agent
// read a secret through fd 7 and wrote outside the sandbox through fd 8, in every mode.
func TestInheritedDescriptorsDoNotReachCommands(t *testing.T) {
	t.Parallel()
	modes := []string{"none", "landlock"}
	if _, err := exec.LookPath("bwrap"); err == nil {
		modes = append(modes, "bwrap")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			secret := filepath.Join(dir, "secret")
			assert.NilError(t, os.WriteFile(secret, []byte("inherited-secret-value\n"), 0o600))
			logPath := filepath.Join(dir, "ci.log")
			assert.NilError(t, os.WriteFile(logPath, nil, 0o600))
			sf, err := os.Open(secret)
			assert.NilError(t, err)
			defer func() { _ = sf.Close() }() // test cleanup: its error does not change what the test checked
			lf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
			assert.NilError(t, err)
			defer func() { _ = lf.Close() }()
			null, err := os.Open(os.DevNull)
			assert.NilError(t, err)
			defer func() { _ = null.Close() }()

			path := writeTask(t, "inherited", inheritedTask)
			out := filepath.Join(t.TempDir(), "out")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := command(t, ctx, run{Args: []string{"run", "--sandbox", mode, "--out", out, path}})
			// ExtraFiles start at 3: 3 to 6 are /dev/null, 7 the secret, 8 the log.
			cmd.ExtraFiles = []*os.File{null, null, null, null, sf, lf}
			b, err := cmd.CombinedOutput()
			t.Logf("runner --sandbox %s: %v\n%s", mode, err, b)
			if mode == "landlock" && strings.Contains(string(b), "does not support Landlock") {
				t.Skip("no Landlock here")
			}
			logged, rerr := os.ReadFile(logPath)
			assert.NilError(t, rerr)
			assert.Equal(t, string(logged), "", "a command wrote through the runner's fd 8")
			transcript, rerr := os.ReadFile(filepath.Join(out, "inherited", "transcript.jsonl"))
			assert.NilError(t, rerr)
			assert.Assert(t, strings.Contains(string(transcript), "run_in_terminal"), "the agent ran: %s", transcript)
			for _, f := range []string{string(b), string(transcript)} {
				assert.Assert(t, !strings.Contains(f, "inherited-secret-value"), "a command read the runner's fd 7:\n%s", f)
			}
			res, rerr := os.ReadFile(filepath.Join(out, "inherited", "result.json"))
			assert.NilError(t, rerr)
			assert.Assert(t, !strings.Contains(string(res), "inherited-secret-value"), "result.json:\n%s", res)
		})
	}
}
