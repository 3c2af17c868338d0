//go:build linux

package sandbox

import (
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools/exec"
)

// TestTimeoutInTheSandboxSaysWhatItWasDoing: in each sandbox, a command killed by its
// timeout is still described by its innermost processes (bwrap's have their own PID
// namespace; they are found by their host pids).
func TestTimeoutInTheSandboxSaysWhatItWasDoing(t *testing.T) {
	for _, c := range sandboxes(t) {
		t.Run(c.name, func(t *testing.T) {
			ws := workspace(t, c.wrapper)
			res, err := exec.RunShell(context.Background(), ws, `sh -c 'sleep 37' & wait`, time.Second)
			assert.NilError(t, err)
			assert.Assert(t, res.TimedOut, res.Output)
			assert.Check(t, is.Contains(res.Stuck.Doing, "running sleep 37"), "%+v", res.Stuck)
		})
	}
}
