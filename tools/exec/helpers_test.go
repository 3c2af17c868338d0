package exec

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
)

// newWorkspace opens a fresh workspace in a temp directory.
func newWorkspace(t *testing.T) *tools.Workspace {
	t.Helper()
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	return ws
}

func newRegistry(t *testing.T) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	reg.MustRegister(Tools()...)
	return reg
}

// call runs a tool through a Registry, as the agent does: schema, defaults, Validate, Execute.
func call(t *testing.T, ws *tools.Workspace, name string, args any) tools.Result {
	t.Helper()
	return callCtx(t, context.Background(), ws, name, args)
}

func callCtx(t *testing.T, ctx context.Context, ws *tools.Workspace, name string, args any) tools.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	assert.NilError(t, err)
	return newRegistry(t).Run(ctx, name, raw, ws)
}

func errCode(r tools.Result) tools.ErrorCode {
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}

// readPID reads a pid a command wrote into the workspace.
func readPID(t *testing.T, ws *tools.Workspace, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Dir(), name))
	assert.NilError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	assert.NilError(t, err)
	return pid
}

// assertGone waits briefly for pid to disappear (killed processes are reaped by init).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if zombieOrGone(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// zombieOrGone reports whether pid is dead but not yet reaped by its new parent.
func zombieOrGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] == 'Z'
	}
	return false
}

func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
