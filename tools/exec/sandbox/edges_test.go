//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

// wrapAndRun wraps cmd with w, runs it and releases it.
func wrapAndRun(t *testing.T, w tools.CommandWrapper, ws *tools.Workspace, cmd *osexec.Cmd) (string, error) {
	t.Helper()
	assert.NilError(t, w.Wrap(cmd, ws))
	out, err := cmd.CombinedOutput()
	w.(interface{ Release(*osexec.Cmd) }).Release(cmd)
	return string(out), err
}

func TestWrapWithoutEnvOrDirAndWithExtraFiles(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.sh") // outside the workspace, as run_code's
	assert.NilError(t, os.WriteFile(script, []byte("echo from-script\n"), 0o600))
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			f, err := os.Open(script)
			assert.NilError(t, err)
			defer func() { _ = f.Close() }() // test cleanup: its error does not change what the test checked
			// No Env: the runner's own (the exec tools always set one). No Dir: the workspace.
			cmd := osexec.Command("/bin/sh", "-c", "pwd; sh /dev/fd/3")
			cmd.ExtraFiles = []*os.File{f}
			out, err := wrapAndRun(t, sb.wrapper, ws, cmd)
			assert.NilError(t, err, out)
			assert.Check(t, is.Contains(out, ws.Dir()+"\n"))
			assert.Check(t, is.Contains(out, "from-script"))
			// Releasing twice, or a command never wrapped, is harmless.
			sb.wrapper.(interface{ Release(*osexec.Cmd) }).Release(cmd)
			sb.wrapper.(interface{ Release(*osexec.Cmd) }).Release(osexec.Command("true"))
		})
	}
}

func TestWrapFailuresLeaveNothingBehind(t *testing.T) {
	broken := &launcher{cgroup: &cgroups{base: "/nonexistent/cgroup"}}
	ws := workspace(t, nil)
	for _, w := range []tools.CommandWrapper{&bwrapSandbox{launcher: broken, bwrap: "/usr/bin/bwrap"}, &landlockSandbox{launcher: broken, abi: 1}} {
		err := w.Wrap(osexec.Command("/bin/true"), ws)
		assert.ErrorContains(t, err, "create pids cgroup")
	}
	// No temp dir for Landlock's private one.
	t.Setenv("TMPDIR", "/nonexistent/tmp")
	err := (&landlockSandbox{launcher: &launcher{}, abi: 1}).Wrap(osexec.Command("/bin/true"), ws)
	assert.ErrorContains(t, err, "create private temp dir")
	assert.ErrorContains(t, selfTest(context.Background(), None(), ""), "self-test")
}

func TestSelfTestReportsAWrapFailure(t *testing.T) {
	err := selfTest(context.Background(), failingWrapper{}, "")
	assert.ErrorContains(t, err, "self-test: no sandbox today")
}

type failingWrapper struct{}

func (failingWrapper) Name() string { return "failing" }
func (failingWrapper) Wrap(*osexec.Cmd, *tools.Workspace) error {
	return errors.New("no sandbox today")
}

// A sandbox that cannot be confined is killed, never released unconfined.
func TestAdmissionKillsWhatItCannotConfine(t *testing.T) {
	sleep := osexec.Command("sleep", "30")
	assert.NilError(t, sleep.Start())
	errOut, err := os.CreateTemp(t.TempDir(), "stderr")
	assert.NilError(t, err)
	a := &admission{cgroups: &commandCgroups{dirs: []string{"/nonexistent/cgroup"}}, pidfd: -1, done: make(chan struct{}), errOut: errOut}
	assert.NilError(t, a.open(osexec.Command("true")))
	defer a.close()
	_, err = fmt.Fprintf(a.infoW, `{"child-pid": %d}`, sleep.Process.Pid)
	assert.NilError(t, err)
	a.admit()
	err = sleep.Wait()
	assert.Check(t, err != nil && strings.Contains(err.Error(), "killed"), "%v", err)
	b, _ := os.ReadFile(errOut.Name())
	assert.Check(t, is.Contains(string(b), "runner sandbox: join cgroup"))
}

func TestNetworkCommandsSeeTheResolver(t *testing.T) {
	// A resolv.conf that is a symlink out of /etc, as systemd-resolved's.
	target := filepath.Join(t.TempDir(), "stub-resolv.conf")
	assert.NilError(t, os.WriteFile(target, []byte("nameserver 192.0.2.1\n"), 0o644))
	link := filepath.Join(t.TempDir(), "resolv.conf")
	assert.NilError(t, os.Symlink(target, link))
	old := resolvConfPath
	resolvConfPath = link
	t.Cleanup(func() { resolvConfPath = old })
	assert.Equal(t, resolvConf(), target)
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			ws.Network = true
			res := run(t, ws, "cat "+target, 5)
			assert.Check(t, is.Contains(res.Output, "nameserver 192.0.2.1"))
		})
	}
}

func TestToolchainsOnPathAreVisible(t *testing.T) {
	home := t.TempDir()
	tool := t.TempDir() // a toolchain outside the system dirs and homes
	for dir, name := range map[string]string{tool: "outside-tool", filepath.Join(home, ".ssh/bin"): "ssh-tool"} {
		assert.NilError(t, os.MkdirAll(dir, 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho "+name+"-runs\n"), 0o755))
	}
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			w := withHomes(sb.wrapper, home)
			ws := workspace(t, w)
			ws.Env = map[string]string{"PATH": tool + ":" + filepath.Join(home, ".ssh/bin") + ":/usr/bin:/bin"}
			res := run(t, ws, "outside-tool; ssh-tool", 5)
			assert.Check(t, is.Contains(res.Output, "outside-tool-runs"))
			// A PATH entry inside a credential directory stays hidden.
			assert.Check(t, !strings.Contains(res.Output, "ssh-tool-runs"), res.Output)
		})
	}
}

func TestHomeDirsAndDeniedPaths(t *testing.T) {
	t.Setenv("HOME", "relative/home")
	for _, h := range homeDirs() {
		assert.Check(t, filepath.IsAbs(h), h)
	}
	home := t.TempDir()
	real := t.TempDir()
	assert.NilError(t, os.Symlink(real, filepath.Join(home, ".aws")))
	denied := (&launcher{homes: []string{home}}).deniedPaths()
	assert.DeepEqual(t, denied, []string{filepath.Join(home, ".aws"), real})
}

// A view watches the credential paths it would show and the paths it hides, and is made
// anew when one appears or goes; otherwise it is the same view.
func TestViewIsMadeAnewWhenACredentialComesOrGoes(t *testing.T) {
	home := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(home, ".cargo/bin"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(home, ".cargo/credentials"), nil, 0o600))
	l := &launcher{homes: []string{home}}
	path := filepath.Join(home, ".cargo/bin") + ":/usr/bin"
	v := l.view(path)
	assert.Check(t, is.Contains(v.watch, filepath.Join(home, ".cargo/credentials.toml")))
	assert.Check(t, is.Contains(v.hidden, filepath.Join(home, ".cargo/credentials")))
	assert.Check(t, !strings.Contains(strings.Join(v.watch, " "), ".ssh"), "a credential no command would see is watched: %v", v.watch)
	assert.Check(t, l.view(path) == v, "made anew with nothing changed")

	assert.NilError(t, os.WriteFile(filepath.Join(home, ".cargo/credentials.toml"), nil, 0o600))
	v2 := l.view(path)
	assert.Check(t, v2 != v)
	assert.Check(t, is.Contains(v2.hidden, filepath.Join(home, ".cargo/credentials.toml")))
	assert.Check(t, is.Contains(strings.Join(v2.mask, " "), "/dev/null "+filepath.Join(home, ".cargo/credentials.toml")))

	assert.NilError(t, os.Remove(filepath.Join(home, ".cargo/credentials")))
	v3 := l.view(path)
	assert.Check(t, v3 != v2)
	for _, p := range v3.mask {
		assert.Check(t, p != filepath.Join(home, ".cargo/credentials"), "a file that is gone is still masked")
	}
}

func TestAutoFallsBackToNoneWithAWarning(t *testing.T) {
	probes.Lock()
	saved := probes.done
	probes.done = map[string]probeResult{
		ModeBwrap:    {err: errors.New("sandbox bwrap: broken")},
		ModeLandlock: {err: errors.New("sandbox landlock: broken")},
	}
	probes.Unlock()
	t.Cleanup(func() { probes.Lock(); probes.done = saved; probes.Unlock() })
	w, reason, err := Probe(context.Background(), ModeAuto)
	assert.NilError(t, err)
	assert.Equal(t, w.Name(), ModeNone)
	assert.Check(t, is.Contains(reason, "WARNING: no sandbox works"))
	assert.Check(t, is.Contains(reason, "bwrap: sandbox bwrap: broken"))

	// An explicit mode that does not work is an error, and a cancelled probe is not cached.
	probes.Lock()
	probes.done = map[string]probeResult{}
	probes.Unlock()
	t.Setenv("PATH", t.TempDir())
	_, _, err = Probe(context.Background(), ModeBwrap)
	assert.ErrorContains(t, err, "sandbox bwrap: bwrap is not installed")
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	_, _, _ = Probe(ctx, ModeLandlock)
	probes.Lock()
	_, cached := probes.done[ModeLandlock]
	probes.Unlock()
	assert.Check(t, !cached)
}

func TestReadableWithoutCaps(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine")
	assert.NilError(t, os.WriteFile(mine, nil, 0o600))
	assert.Check(t, readableWithoutCaps(mine))
	assert.NilError(t, os.Chmod(mine, 0o200))
	assert.Check(t, !readableWithoutCaps(mine))
	assert.Check(t, !readableWithoutCaps(filepath.Join(dir, "missing")))
	assert.NilError(t, os.Chmod(mine, 0o040))
	if os.Geteuid() == 0 {
		// Another owner: the group or the others decide.
		assert.NilError(t, os.Chown(mine, 12345, os.Getegid()))
		assert.Check(t, readableWithoutCaps(mine))
		assert.NilError(t, os.Chown(mine, 12345, 54321))
		assert.Check(t, !readableWithoutCaps(mine))
		assert.NilError(t, os.Chmod(mine, 0o004))
		assert.Check(t, readableWithoutCaps(mine))
	}
}

// The home a command sees is its own: writable, empty but for the toolchains, gone after.
func TestHomeIsPrivate(t *testing.T) {
	home, err := os.UserHomeDir()
	assert.NilError(t, err)
	m := marker()
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			cmd := fmt.Sprintf(`touch "$HOME/.probe-%s" && echo HOME-WRITABLE; git init -q . && git status --short && echo GIT-OK`, m)
			res := run(t, ws, cmd, 10)
			assert.Check(t, is.Contains(res.Output, "HOME-WRITABLE"))
			if _, err := osexec.LookPath("git"); err == nil {
				assert.Check(t, is.Contains(res.Output, "GIT-OK"))
			}
			_, err := os.Stat(filepath.Join(home, ".probe-"+m))
			assert.Check(t, os.IsNotExist(err), "the real home was written")
		})
	}
}

// What the launcher is told (the command's environment, the paths it binds) stays out of
// its command line, which every process on the host can read.
func TestLauncherCommandLineRevealsNothing(t *testing.T) {
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			cmd := osexec.Command("/bin/sh", "-c", "echo $TASK_TOKEN")
			cmd.Env = []string{"PATH=/usr/bin:/bin", "TASK_TOKEN=tok-" + marker()}
			token := cmd.Env[1][len("TASK_TOKEN="):]
			assert.NilError(t, sb.wrapper.Wrap(cmd, ws))
			line := strings.Join(cmd.Args, " ")
			assert.Check(t, !strings.Contains(line, token), line)
			assert.Check(t, !strings.Contains(line, ws.Dir()), line)
			out, err := cmd.CombinedOutput()
			sb.wrapper.(interface{ Release(*osexec.Cmd) }).Release(cmd)
			assert.NilError(t, err, string(out))
			assert.Check(t, is.Contains(string(out), token))
		})
	}
}

func TestPrivateHomeEdges(t *testing.T) {
	home := t.TempDir()
	l := &landlockSandbox{launcher: &launcher{homes: []string{home}}}
	ws := workspace(t, l)
	v := l.view("/usr/bin:/bin")
	tmp := t.TempDir()
	env := []string{"HOME=" + home}
	// The private home cannot be made (a file is in the way): the environment stays as it
	// was, and the real home stays unreadable all the same.
	assert.NilError(t, os.WriteFile(filepath.Join(tmp, "home"), nil, 0o600))
	assert.DeepEqual(t, l.privateHome(env, tmp, v, ws), env)
	// The home a previous command left, emptied, is the new one's.
	tmp = t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(tmp, "home"), 0o700))
	assert.DeepEqual(t, l.privateHome(env, tmp, v, ws), append(env, "HOME="+filepath.Join(tmp, "home")))
	// A home inside the workspace is the agent's anyway.
	inside := []string{"HOME=" + ws.Dir()}
	assert.DeepEqual(t, l.privateHome(inside, t.TempDir(), v, ws), inside)
	_, ok := l.configOf(osexec.Command("true"))
	assert.Check(t, !ok)
}

// A wrapped command that cannot start (its directory is gone) is released at once: bwrap's
// admission does not wait out its timeout for a report that never comes, and the cgroups
// made for it are left empty, and removed with the workspace.
func TestCommandThatNeverStartsIsReleased(t *testing.T) {
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			cmd := osexec.Command("/bin/true")
			cmd.Dir = filepath.Join(ws.Dir(), "gone")
			assert.NilError(t, sb.wrapper.Wrap(cmd, ws))
			var cgroups []string
			switch w := sb.wrapper.(type) {
			case *bwrapSandbox:
				a, ok := w.pending.Load(cmd)
				assert.Assert(t, ok)
				if cg := a.(*admission).cgroups; cg != nil {
					cgroups = cg.dirs
				}
			case *landlockSandbox:
				cfg, ok := w.configOf(cmd)
				assert.Assert(t, ok)
				cgroups = cfg.Cgroups
			}
			assert.Assert(t, cmd.Start() != nil, "started in a directory that does not exist")
			start := time.Now()
			sb.wrapper.(interface{ Release(*osexec.Cmd) }).Release(cmd)
			assert.Check(t, time.Since(start) < 5*time.Second, "Release waited %s", time.Since(start))
			for _, dir := range cgroups {
				assert.Check(t, len(cgroupPids(dir)) == 0, "cgroup %s is not empty", dir)
			}
			assert.NilError(t, ws.Close())
			for _, dir := range cgroups {
				_, err := os.Stat(dir)
				assert.Check(t, os.IsNotExist(err), "cgroup %s left behind", dir)
			}
		})
	}
}
