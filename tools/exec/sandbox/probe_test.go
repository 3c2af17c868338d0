//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"
)

func TestProbeModes(t *testing.T) {
	ctx := context.Background()
	w, reason, err := Probe(ctx, ModeNone)
	assert.NilError(t, err)
	assert.Equal(t, w.Name(), ModeNone)
	assert.Check(t, is.Contains(reason, "unconfined"))

	_, _, err = Probe(ctx, "chroot")
	assert.ErrorContains(t, err, `unknown sandbox mode "chroot"`)

	for _, mode := range []string{"", ModeAuto} {
		w, reason, err := Probe(ctx, mode)
		assert.NilError(t, err)
		switch {
		case unavailable(ModeBwrap) == "":
			assert.Equal(t, w.Name(), ModeBwrap, reason)
		case unavailable(ModeLandlock) == "":
			assert.Equal(t, w.Name(), ModeLandlock, reason)
		default:
			assert.Equal(t, w.Name(), ModeNone)
			assert.Check(t, is.Contains(reason, "WARNING"))
		}
	}
}

func TestProbeIsCached(t *testing.T) {
	for _, sb := range sandboxes(t) {
		w, reason, err := Probe(context.Background(), sb.name)
		assert.NilError(t, err)
		assert.Equal(t, w, sb.wrapper) // the same wrapper, not a new probe
		assert.Check(t, is.Contains(reason, "sandbox "+sb.name))
		assert.Check(t, is.Contains(reason, "default limits "))
	}
}

func TestProbeBwrapWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := probeBwrap(context.Background())
	assert.ErrorContains(t, err, "bwrap is not installed")
}

func TestSelfTestRejectsACommandThatDidNotRun(t *testing.T) {
	// A wrapper that swaps the command for one that prints nothing: the probe must see
	// that the marker never came back.
	err := selfTest(context.Background(), fakeHelper{}, " (a hint)")
	assert.ErrorContains(t, err, "self-test command failed")
	assert.ErrorContains(t, err, "(a hint)")
}

type fakeHelper struct{}

func (fakeHelper) Name() string { return "fake" }
func (fakeHelper) Wrap(cmd *osexec.Cmd, _ *tools.Workspace) error {
	cmd.Path, cmd.Args = "/bin/true", []string{"true", HelperArg}
	return nil
}

// helperCommand runs the helper with config as its config descriptor (fd 3).
func helperCommand(t *testing.T, config string, target ...string) *osexec.Cmd {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "config")
	assert.NilError(t, err)
	_, err = f.WriteString(config)
	assert.NilError(t, err)
	_, err = f.Seek(0, 0)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = f.Close() }) // test cleanup: its error does not change what the test checked
	cmd := osexec.Command(helperExe, append([]string{HelperArg, "3"}, target...)...)
	cmd.ExtraFiles = []*os.File{f}
	return cmd
}

func TestHelperRejectsABadConfig(t *testing.T) {
	out, err := helperCommand(t, "{not json", "/bin/true", "true").CombinedOutput()
	var exit *osexec.ExitError
	assert.Assert(t, errors.As(err, &exit), "%v", err)
	assert.Equal(t, exit.ExitCode(), confine.Failed)
	assert.Check(t, is.Contains(string(out), "runner sandbox: decode helper config"))

	out, err = helperCommand(t, "{}", "/no/such/program", "x").CombinedOutput()
	assert.Assert(t, err != nil)
	assert.Check(t, is.Contains(string(out), "exec /no/such/program"))

	// The config comes only through a descriptor: an inline one (as argv once carried it,
	// readable by anyone in /proc/<pid>/cmdline) is refused.
	out, err = osexec.Command(helperExe, HelperArg, "{}", "/bin/true", "true").CombinedOutput()
	assert.Assert(t, err != nil)
	assert.Check(t, is.Contains(string(out), "is not a config descriptor"))
	out, err = osexec.Command(helperExe, HelperArg, "9", "/bin/true", "true").CombinedOutput()
	assert.Assert(t, err != nil)
	assert.Check(t, is.Contains(string(out), "read helper config"))
}

func TestReleaseRemovesTheTempDirAndCgroup(t *testing.T) {
	if unavailable(ModeLandlock) != "" {
		t.Skip(unavailable(ModeLandlock))
	}
	w, _, err := Probe(context.Background(), ModeLandlock)
	assert.NilError(t, err)
	ws := workspace(t, w)
	cmd := osexec.Command("/bin/sh", "-c", "echo $TMPDIR")
	cmd.Dir = ws.Dir()
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	assert.NilError(t, w.Wrap(cmd, ws))
	out, err := cmd.Output()
	assert.NilError(t, err)
	tmp := strings.TrimSpace(string(out))
	cfg, ok := w.(*landlockSandbox).configOf(cmd)
	assert.Assert(t, ok)
	assert.Equal(t, cfg.Tmp, tmp)
	assert.Assert(t, strings.HasPrefix(filepath.Base(tmp), "runner-sandbox-"))

	w.(*landlockSandbox).Release(cmd)
	// The temp dir and the cgroups wait, empty, for the workspace's next command, and go
	// with the workspace.
	entries, err := os.ReadDir(tmp)
	assert.NilError(t, err)
	assert.Check(t, is.Len(entries, 0))
	assert.NilError(t, ws.Close())
	_, err = os.Stat(tmp)
	assert.Check(t, os.IsNotExist(err))
	for _, dir := range cfg.Cgroups {
		_, err = os.Stat(dir)
		assert.Check(t, os.IsNotExist(err))
	}
}

func TestHelperRunsBeforeTheRunnersPackagesInitialise(t *testing.T) {
	// This test binary links the tools package and so jsonschema, whose init compiles
	// metaschemas for milliseconds; the helper must be gone (exec'd) before that.
	cmd := helperCommand(t, "{}", "/bin/true", "true")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, string(out))
	assert.Check(t, is.Contains(string(out), "init golang.org/x/sys/unix"))
	for _, heavy := range []string{"jsonschema", "agentrunner/runner/tools "} {
		assert.Check(t, !strings.Contains(string(out), heavy), "%s initialised before the helper ran:\n%s", heavy, out)
	}
}

func TestGapsSayWhatIsOpen(t *testing.T) {
	assert.Check(t, is.Contains(strings.Join(Gaps(None(), false), ";"), "no confinement"))
	assert.Check(t, Gaps(fakeHelper{}, false) == nil)

	// Without cgroups memory_mb is per process, and as root nothing caps processes.
	bare := &launcher{}
	b := &bwrapSandbox{launcher: bare}
	g := strings.Join(Gaps(b, false), ";")
	assert.Check(t, is.Contains(g, "memory_mb per process"))
	if os.Geteuid() == 0 {
		assert.Check(t, is.Contains(g, "no process limit"))
	}
	assert.Check(t, is.Contains(strings.Join(Gaps(b, true), ";"), "shares the host's network"))

	l := &landlockSandbox{launcher: bare, abi: 3}
	g = strings.Join(Gaps(l, false), ";")
	for _, want := range []string{"command lines", "timestamps and mode bits", "TCP not blocked", "signals", "no seccomp filter"} {
		assert.Check(t, is.Contains(g, want))
	}
	l = &landlockSandbox{launcher: bare, abi: 7, seccomp: true}
	g = strings.Join(Gaps(l, true), ";")
	assert.Check(t, !strings.Contains(g, "TCP not blocked"), g)
	assert.Check(t, is.Contains(g, "network: true opens UDP"))
	assert.Equal(t, describeGaps(nil), "no known gaps")
}
