//go:build linux

package sandbox

// Issue 24 E: nothing a command or a server (an MCP server, a task's tool) started may
// outlive it and change the workspace after the agent, in any mode; and a command's own
// daemon lives as long as its command, whatever other scenarios' commands end meanwhile.

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools/exec"
)

// lifetimeModes are every sandbox here, none, and Landlock without cgroups (as a user
// without delegated cgroups runs it), where only the subreapers find what left the group.
func lifetimeModes(t *testing.T) []confined {
	modes := append(sandboxes(t), confined{name: ModeNone, wrapper: None()})
	for _, sb := range modes {
		if l, ok := sb.wrapper.(*landlockSandbox); ok && l.cgroup != nil {
			bare := *l
			bare.launcher = &launcher{homes: l.homes}
			modes = append(modes, confined{name: "landlock-without-cgroup", wrapper: &bare})
		}
	}
	return modes
}

// awaitFile waits until the workspace file name holds a line, and returns it.
func awaitFile(t *testing.T, dir, name string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertNotRunning fails if the process pid (as the workspace file pid names it, seen from
// the host) still runs: a zombie has ended.
func assertNotRunning(t *testing.T, pid int) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return
	}
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	if f := strings.Fields(rest); len(f) > 0 && f[0] != "Z" {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("process %d outlived what started it: %s", pid, b)
	}
}

// A server starts a child in a session of its own, which waits and then rewrites the
// workspace: under --sandbox none it outlived the server and rewrote the answer after the
// agent, before verification.
func TestServerDescendantsDoNotOutliveIt(t *testing.T) {
	for _, sb := range lifetimeModes(t) {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel()
			ws := workspace(t, sb.wrapper)
			m := marker()
			script := `setsid sh -c 'echo $$ > pid; sleep 0.5; echo tampered > result.txt; sleep 30; : ` + m + `' & echo honest > result.txt; exec cat`
			p, err := exec.Start(context.Background(), ws, ws.Dir(), []string{"sh", "-c", script}, nil)
			assert.NilError(t, err)
			pid, _ := strconv.Atoi(awaitFile(t, ws.Dir(), "pid"))
			p.Stop(time.Second)
			time.Sleep(time.Second)
			b, err := os.ReadFile(filepath.Join(ws.Dir(), "result.txt"))
			assert.NilError(t, err)
			assert.Equal(t, string(b), "honest\n", "a process outlived its server")
			if sb.name != ModeBwrap { // bwrap's pid is the namespace's, and none of it is left
				assertNotRunning(t, pid)
			}
			eventuallyNone(t, m)
		})
	}
}

// The same for a command (run_in_terminal, run_code, a task's tool): a double-forked
// child in a session of its own dies with the command, and no process is left.
func TestCommandDescendantsDoNotOutliveIt(t *testing.T) {
	for _, sb := range lifetimeModes(t) {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel()
			ws := workspace(t, sb.wrapper)
			m := marker()
			res := run(t, ws, `(setsid sh -c 'echo $$ > pid; sleep 0.5; echo tampered > result.txt; sleep 30; : `+m+`' &); sleep 0.2; echo honest > result.txt`, 5)
			assert.Assert(t, res.Success, res.Output)
			time.Sleep(time.Second)
			b, err := os.ReadFile(filepath.Join(ws.Dir(), "result.txt"))
			assert.NilError(t, err)
			assert.Equal(t, string(b), "honest\n", "a process outlived its command")
			if sb.name != ModeBwrap {
				pid, _ := strconv.Atoi(awaitFile(t, ws.Dir(), "pid"))
				assertNotRunning(t, pid)
			}
			eventuallyNone(t, m)
		})
	}
}

// A command that starts a daemon (a double fork into a session of its own, as pg_ctl or
// redis-server --daemonize do) and uses it keeps it while the command runs, though
// commands of other workspaces (other scenarios of the run) end meanwhile: what comes
// back to the runner is killed only when its own command has ended.
func TestOtherCommandsEndingSpareALiveCommandsDaemon(t *testing.T) {
	if _, err := osexec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed")
	}
	for _, sb := range lifetimeModes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			done := make(chan string)
			go func() {
				res := run(t, ws, `(setsid sh -c 'sleep 0.8; echo alive > daemon.txt' &); sleep 1.5; cat daemon.txt`, 10)
				done <- res.Output
			}()
			time.Sleep(300 * time.Millisecond)
			other := workspace(t, sb.wrapper)
			for range 3 {
				run(t, other, "true", 5)
			}
			out := <-done
			assert.Check(t, strings.Contains(out, "alive"), "the daemon of a running command was killed when another command ended: %s", out)
		})
	}
}
