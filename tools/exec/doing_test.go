package exec

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/local/go/pkg/tool/linux_amd64/compile", "-o", "/tmp/b001/_pkg_.a", "-trimpath", "x", "-p", "fmt", "-lang=go1.26"}, "compiling Go package fmt"},
		{[]string{"/usr/lib/go/pkg/tool/linux_amd64/asm", "-p=runtime/debug"}, "assembling Go package runtime/debug"},
		{[]string{"/x/link", "-o", "a.out"}, "linking a Go binary"},
		{[]string{"/tmp/go-build1/b001/mathx.test", "-test.paniconexit0"}, "running the tests of mathx (mathx.test)"},
		{[]string{"python3", "-m", "pytest", "-q"}, "running python3 -m pytest -q"},
	} {
		assert.Equal(t, describe(tc.argv), tc.want, "%v", tc.argv)
	}
	// The same one counted once; at most three named; what the agent started cannot
	// carry escapes into a report.
	assert.Equal(t, describeAll([][]string{{"compile", "-p", "a"}, {"compile", "-p", "a"}, {"compile", "-p", "b"}}),
		"compiling Go package a; compiling Go package b")
	assert.Equal(t, describeAll([][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}), "running a; running b; running c; and 2 more")
	assert.Equal(t, describeAll([][]string{{"evil\x1b[31m\u202e", "x"}}), "running evil[31m x")
}

// TestTimeoutSaysWhatItWasDoing: a command killed by its timeout reports the processes
// it was running then, innermost first, and the machine's load, in its result and in
// what the model reads.
func TestTimeoutSaysWhatItWasDoing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process tree is read from /proc")
	}
	ws := newWorkspace(t)
	res, err := RunShell(context.Background(), ws, `sh -c 'sleep 31' & sleep 30; wait`, 500*time.Millisecond)
	assert.NilError(t, err)
	assert.Assert(t, res.TimedOut)
	assert.Check(t, is.Contains(res.Stuck.Doing, "running sleep 31"), "%+v", res.Stuck)
	assert.Check(t, is.Contains(res.Stuck.Doing, "running sleep 30"), "%+v", res.Stuck)
	assert.Check(t, res.Stuck.CPUs > 0)
	assert.Check(t, is.Contains(res.Stuck.String(), "load average "))

	out := call(t, ws, "run_in_terminal", map[string]any{"command": "sleep 30", "timeout_seconds": 1})
	assert.Check(t, is.Contains(out.Output, "[timed out after 1s while running sleep 30; load average"), out.Output)

	// A command that ends by itself, or is cancelled, was not stuck.
	res, err = RunShell(context.Background(), ws, `true`, 5*time.Second)
	assert.NilError(t, err)
	assert.Equal(t, res.Stuck, Stuck{})
}

// TestTimeoutNamesTheGoPackage: `go build` of the standard library from an empty cache,
// killed by its timeout, says which package the compiler had in hand.
func TestTimeoutNamesTheGoPackage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process tree is read from /proc")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	ws := newWorkspace(t)
	ws.Env = map[string]string{"GOCACHE": filepath.Join(t.TempDir(), "cold"), "PATH": filepath.Dir(goBin) + ":" + os.Getenv("PATH"), "HOME": t.TempDir()}
	// Compiles start within a second or two even on a loaded machine; std takes far longer.
	var res ShellResult
	for _, d := range []time.Duration{3 * time.Second, 10 * time.Second} {
		res, err = RunShell(context.Background(), ws, `go build std`, d)
		assert.NilError(t, err)
		assert.Assert(t, res.TimedOut, "go build std from a cold cache within %s: %s", d, res.Output)
		if res.Stuck.Doing != "" && res.Stuck.Doing != "running go build std" {
			break
		}
	}
	t.Logf("stuck: %s", res.Stuck)
	assert.Check(t, is.Contains(res.Stuck.Doing, "compiling Go package "), "%+v", res.Stuck)
}
