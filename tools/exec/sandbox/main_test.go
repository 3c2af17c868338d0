//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec"
	"github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"
)

// TestMain lets this test binary serve as the sandbox helper, as the runner's main does.
func TestMain(m *testing.M) {
	RunHelperIfRequested()
	// Under make cover a coverage build of the runner plays the helper, and its counters
	// go where the test binary's do.
	flag.Parse()
	if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
		if exe := os.Getenv("RUNNER_COVER_HELPER"); exe != "" {
			helperExe = exe
			if err := os.Setenv("GOCOVERDIR", f.Value.String()); err != nil {
				panic(err) // the helper's counters would be lost without a word
			}
		}
	}
	os.Exit(m.Run())
}

// confined is a sandbox under test.
type confined struct {
	name    string
	wrapper tools.CommandWrapper
}

// sandboxes returns the sandboxes to test: both real ones. A missing bwrap, a bwrap that
// cannot create namespaces here (Ubuntu 24.04's AppArmor blocks them for unprivileged
// users) or a kernel without Landlock skips that one with the reason; a Landlock probe
// failing on a kernel that has it fails the test.
func sandboxes(t testing.TB) []confined {
	t.Helper()
	var out []confined
	for _, mode := range []string{ModeBwrap, ModeLandlock} {
		if reason := unavailable(mode); reason != "" {
			t.Logf("not testing %s: %s", mode, reason)
			continue
		}
		w, _, err := Probe(context.Background(), mode)
		assert.NilError(t, err)
		out = append(out, confined{name: mode, wrapper: w})
	}
	if len(out) == 0 {
		t.Skip("neither bwrap nor Landlock works on this machine")
	}
	return out
}

// unavailable says why a mode cannot work here at all, or "".
func unavailable(mode string) string {
	switch mode {
	case ModeBwrap:
		if _, err := lookBwrap(); err != nil {
			return "bwrap is not installed"
		}
		// As root bwrap needs no user namespace: there a failing probe is a bug, not the
		// machine, and must fail the tests rather than skip bwrap's.
		if _, _, err := Probe(context.Background(), ModeBwrap); err != nil && os.Geteuid() != 0 {
			return err.Error()
		}
	case ModeLandlock:
		if confine.ABI() < 1 {
			return "the kernel lacks Landlock"
		}
	}
	return ""
}

// workspace opens a workspace confined by w.
func workspace(t testing.TB, w tools.CommandWrapper) *tools.Workspace {
	t.Helper()
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	ws.Sandbox = w
	return ws
}

var registry = func() *tools.Registry {
	reg := tools.NewRegistry()
	reg.MustRegister(exec.Tools()...)
	return reg
}()

// run runs a shell command through run_in_terminal.
func run(t testing.TB, ws *tools.Workspace, command string, timeoutSeconds int) tools.Result {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"command": command, "timeout_seconds": timeoutSeconds})
	assert.NilError(t, err)
	return registry.Run(context.Background(), "run_in_terminal", raw, ws)
}

func exitCode(r tools.Result) int {
	n, _ := r.Metadata["exit_code"].(int)
	return n
}

// marker returns a string unique to this test run, to find its processes by command line.
func marker() string {
	return fmt.Sprintf("0.%d", rand.Uint64N(1<<50))
}

// processesWith lists the pids whose command line contains s.
func processesWith(s string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// eventuallyNone waits briefly for the processes containing s to be gone.
func eventuallyNone(t testing.TB, s string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := processesWith(s)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes still running: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
