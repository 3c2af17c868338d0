package exec

import (
	"errors"
	osexec "os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

// fakeSandbox records what it is asked to wrap and prefixes the command with env(1)
// setting a marker, the way a real sandbox swaps the program for its launcher.
type fakeSandbox struct {
	wrapped  []string // cmd.Dir of each wrapped command
	released int
	fail     bool
}

func (f *fakeSandbox) Name() string { return "fake" }

func (f *fakeSandbox) Wrap(cmd *osexec.Cmd, _ *tools.Workspace) error {
	if f.fail {
		return errors.New("cannot confine")
	}
	f.wrapped = append(f.wrapped, cmd.Dir)
	cmd.Args = append([]string{"env", "WRAPPED=yes", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/usr/bin/env"
	return nil
}

func (f *fakeSandbox) Release(*osexec.Cmd) { f.released++ }

func TestSandboxWrapsEveryCommand(t *testing.T) {
	ws := pythonWorkspace(t)
	sb := &fakeSandbox{}
	ws.Sandbox = sb

	res := call(t, ws, "run_in_terminal", map[string]any{"command": "echo $WRAPPED"})
	assert.Equal(t, res.Output, "yes\n[exit code 0]")
	assert.Equal(t, res.Metadata["sandbox"], "fake")

	res = call(t, ws, "run_code", map[string]any{"language": "python", "code": "import os; print(os.environ['WRAPPED'])"})
	assert.Equal(t, res.Output, "yes\n[exit code 0]")

	assert.DeepEqual(t, sb.wrapped, []string{ws.Dir(), ws.Dir()})
	assert.Equal(t, sb.released, 2)

	sb.fail = true
	res = call(t, ws, "run_in_terminal", map[string]any{"command": "echo unconfined"})
	assert.Equal(t, errCode(res), tools.CodeExecutionError)
	assert.Check(t, is.Contains(res.Output, "cannot confine"))
	assert.Check(t, !strings.Contains(res.Output, "unconfined\n"))
}
