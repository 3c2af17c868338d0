//go:build linux

package sandbox

// Attacks from issue 7, each run in every sandbox that works here, with --sandbox none as
// the control that shows the attack works unconfined (so the assertions can fail).

import (
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// evilSO is a shared object whose constructor, run in every process that loads it, writes
// outside the workspace and prints its parent's environment (the runner's, if the launcher
// loaded it before confining anything).
const evilSO = `#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
	const char *targets[] = {OUTSIDE, "/usr/local/runner-evil-" MARKER};
	for (int i = 0; i < 2; i++) {
		int fd = open(targets[i], O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) { dprintf(fd, "pwned by %d\n", getpid()); close(fd); }
	}
	char p[64], buf[1 << 16];
	snprintf(p, sizeof p, "/proc/%d/environ", getppid());
	int fd = open(p, O_RDONLY);
	if (fd < 0) return;
	ssize_t n = read(fd, buf, sizeof buf);
	for (ssize_t i = 0; i < n; i++) if (!buf[i]) buf[i] = '\n';
	if (n > 0) { write(2, "PARENT-ENV:", 11); write(2, buf, n); }
	close(fd);
}
`

func TestLoaderVariablesNeverReachTheLauncher(t *testing.T) {
	gcc, err := osexec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed: cannot build the LD_PRELOAD object")
	}
	const secret = "sk-launcher-secret"
	t.Setenv("OPENAI_API_KEY", secret) // the runner's environment, as in CI
	m := marker()
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "pwned")
			usrLocal := "/usr/local/runner-evil-" + m
			t.Cleanup(func() { _ = os.Remove(usrLocal) }) // test cleanup: its error does not change what the test checked
			ws := workspace(t, sb.wrapper)
			src := filepath.Join(ws.Dir(), "evil.c")
			assert.NilError(t, os.WriteFile(src, []byte(evilSO), 0o644))
			so := filepath.Join(ws.Dir(), "evil.so")
			out, err := osexec.Command(gcc, "-shared", "-fPIC", "-o", so, src,
				fmt.Sprintf(`-DOUTSIDE="%s"`, outside), fmt.Sprintf(`-DMARKER="%s"`, m)).CombinedOutput()
			assert.NilError(t, err, string(out))
			// Set as a task's env: the tools refuse it from the agent, but the sandbox must
			// not depend on that.
			ws.Env = map[string]string{"LD_PRELOAD": so}
			res := run(t, ws, "echo ran", 5)
			assert.Check(t, is.Contains(res.Output, "ran"))
			_, outErr := os.Stat(outside)
			if sb.name == ModeNone {
				assert.NilError(t, outErr, "the control: unconfined, evil.so writes outside: %s", res.Output)
				return
			}
			assert.Check(t, os.IsNotExist(outErr), "evil.so wrote outside the workspace: %s", res.Output)
			_, err = os.Stat(usrLocal)
			assert.Check(t, os.IsNotExist(err), "evil.so wrote to /usr/local: %s", res.Output)
			assert.Check(t, !strings.Contains(res.Output, secret), res.Output)
		})
	}
}

func TestOnlyTheWorkspaceAndTheSystemAreVisible(t *testing.T) {
	home, err := os.UserHomeDir()
	assert.NilError(t, err)
	m := marker()
	taskDir := t.TempDir() // the task file's directory, with the solution in it
	taskFile := filepath.Join(taskDir, "task.yaml")
	assert.NilError(t, os.WriteFile(taskFile, []byte("reference: secret-solution-"+m), 0o644))
	homeFile := filepath.Join(home, ".runner-test-pgpass-"+m)
	assert.NilError(t, os.WriteFile(homeFile, []byte("secret-home-"+m), 0o600))
	t.Cleanup(func() { _ = os.Remove(homeFile) })
	cwd, err := os.Getwd() // the repository
	assert.NilError(t, err)
	repoFile := filepath.Join(cwd, "attack_test.go")
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			sibling := workspace(t, sb.wrapper) // another scenario, or a --repeat sibling
			siblingFile := filepath.Join(sibling.Dir(), "answer.txt")
			assert.NilError(t, os.WriteFile(siblingFile, []byte("secret-sibling-"+m), 0o644))
			ws := workspace(t, sb.wrapper)
			var cmd strings.Builder
			for _, p := range []string{taskFile, homeFile, repoFile, siblingFile, "/etc/shadow"} {
				fmt.Fprintf(&cmd, "cat %s 2>/dev/null && echo 'READ %s'; ", p, p)
			}
			fmt.Fprintf(&cmd, "ls %s %s %s 2>/dev/null; ", taskDir, filepath.Dir(sibling.Dir()), cwd)
			cmd.WriteString("head -c 4 /usr/bin/env | tail -c 3; echo; . /etc/os-release && echo os=$ID")
			res := run(t, ws, cmd.String(), 5)
			// The system is there: programs, and /etc's ordinary files.
			assert.Check(t, is.Contains(res.Output, "ELF"))
			assert.Check(t, is.Regexp(`os=\w+`, res.Output))
			if sb.name == ModeNone {
				assert.Check(t, is.Contains(res.Output, "secret-sibling-"), "the control: %s", res.Output)
				return
			}
			assert.Check(t, !strings.Contains(res.Output, "READ "), res.Output)
			assert.Check(t, !strings.Contains(res.Output, "secret-"), res.Output)
			assert.Check(t, !strings.Contains(res.Output, "task.yaml"), res.Output)
			assert.Check(t, !strings.Contains(res.Output, "attack_test.go"), res.Output)
		})
	}
}

func TestHostSocketsAreUnreachableWithoutNetwork(t *testing.T) {
	if _, err := osexec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	m := marker()
	var reached atomic.Int32
	serve := func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			_, _ = c.Write([]byte("hello from a host service\n"))
			_ = c.Close()
		}
	}
	// docker.sock, D-Bus, a database: a filesystem socket outside the workspace...
	path := filepath.Join(t.TempDir(), "service.sock")
	ln, err := net.Listen("unix", path)
	assert.NilError(t, err)
	defer func() { _ = ln.Close() }()
	go serve(ln)
	// ...an abstract one (X11, some D-Bus buses)...
	abstract, err := net.Listen("unix", "@runner-test-"+m)
	assert.NilError(t, err)
	defer func() { _ = abstract.Close() }()
	go serve(abstract)
	// ...and a UDP service on the loopback (DNS, statsd, a game server).
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	assert.NilError(t, err)
	defer func() { _ = udp.Close() }()
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			reached.Add(1)
		}
	}()
	script := fmt.Sprintf(`import socket
for name, fam, addr in [("unix", socket.AF_UNIX, %q), ("abstract", socket.AF_UNIX, "\0runner-test-%s")]:
    try:
        s = socket.socket(fam, socket.SOCK_STREAM); s.connect(addr); print(name, "connected:", s.recv(64))
    except OSError as e:
        print(name, "refused:", e)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", %d)); print("udp sent")
except OSError as e:
    print("udp refused:", e)
a, b = socket.socketpair(); a.send(b"pair"); print("socketpair", b.recv(4))
`, path, m, udp.LocalAddr().(*net.UDPAddr).Port)
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			reached.Store(0)
			ws := workspace(t, sb.wrapper)
			assert.NilError(t, os.WriteFile(filepath.Join(ws.Dir(), "attack.py"), []byte(script), 0o644))
			res := run(t, ws, "python3 attack.py", 10)
			assert.Assert(t, res.Success, res.Output)
			time.Sleep(100 * time.Millisecond) // a datagram in flight
			// socketpair (multiprocessing, asyncio) keeps working.
			assert.Check(t, is.Contains(res.Output, "socketpair b'pair'"))
			if sb.name == ModeNone {
				assert.Check(t, is.Contains(res.Output, "unix connected"), "the control: %s", res.Output)
				assert.Check(t, reached.Load() == 3, "the control: %d reached: %s", reached.Load(), res.Output)
				return
			}
			assert.Check(t, !strings.Contains(res.Output, "hello from a host service"), res.Output)
			assert.Check(t, is.Contains(res.Output, "unix refused"))
			assert.Check(t, is.Contains(res.Output, "abstract refused"))
			assert.Check(t, reached.Load() == 0, "%d host services reached: %s", reached.Load(), res.Output)
		})
	}
}

func TestMetadataOutsideTheWorkspaceCannotChange(t *testing.T) {
	if _, err := osexec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel()
			target := filepath.Join(t.TempDir(), "victim")
			assert.NilError(t, os.WriteFile(target, []byte("x"), 0o644))
			before, err := os.Stat(target)
			assert.NilError(t, err)
			ws := workspace(t, sb.wrapper)
			attack := fmt.Sprintf(`chmod 4777 %[1]s && echo CHMOD-SETUID; `+
				`python3 -c 'import os; os.setxattr("%[1]s", "user.pwned", b"1"); print("SETXATTR")'; `+
				`touch -d 2001-01-01 %[1]s && echo TOUCH; `+
				// Inside the workspace, ordinary metadata changes keep working.
				`touch mine && chmod +x mine && touch -d 2001-01-01 mine && test -x mine && echo INSIDE-OK`, target)
			res := run(t, ws, attack, 10)
			after, err := os.Stat(target)
			assert.NilError(t, err)
			xattr, _ := osexec.Command("python3", "-c", fmt.Sprintf(`import os; print(os.listxattr(%q))`, target)).Output()
			assert.Check(t, is.Contains(res.Output, "INSIDE-OK"))
			if sb.name == ModeNone {
				assert.Check(t, is.Contains(res.Output, "CHMOD-SETUID"), "the control: %s", res.Output)
				assert.Check(t, after.Mode()&os.ModeSetuid != 0)
				return
			}
			assert.Check(t, after.Mode() == before.Mode(), "mode changed to %v: %s", after.Mode(), res.Output)
			assert.Check(t, !strings.Contains(string(xattr), "pwned"), "xattr set: %s", res.Output)
			assert.Check(t, !strings.Contains(res.Output, "CHMOD-SETUID"), res.Output)
			assert.Check(t, !strings.Contains(res.Output, "SETXATTR"), res.Output)
			if sb.name == ModeLandlock && os.Geteuid() == 0 {
				// Landlock has no right for timestamps or plain mode bits, and seccomp cannot
				// see paths: as root (the owner of every file) they stay open; Gaps says so.
				t.Logf("known gap under Landlock as root: %s", res.Output)
				return
			}
			assert.Check(t, after.ModTime().Equal(before.ModTime()), "mtime changed: %s", res.Output)
		})
	}
}

func TestMemoryIsLimitedForTheCommandAsAWhole(t *testing.T) {
	if _, err := osexec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	// Four processes of 400 MiB each under memory_mb 512: each is within RLIMIT_DATA.
	const hog = `python3 -c 'import time; b = bytearray(400 << 20); b[::4096] = b"x" * len(range(0, len(b), 4096)); print("allocated", flush=True); time.sleep(1)' &`
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel() // each OOM takes seconds on a busy machine
			l := launcherOf(sb.wrapper)
			if l.memoryScope() != MemoryPerCommand {
				t.Skip("no usable memory cgroup here: memory_mb applies per process")
			}
			ws := workspace(t, sb.wrapper)
			ws.Limits.MemoryMB = 512
			// In the cgroup of the workspace's previous command, as most commands run.
			assert.Assert(t, run(t, ws, "true", 5).Success)
			assert.Assert(t, is.Len(idleCgroups(ws, sb.wrapper), 1))
			res := run(t, ws, strings.Repeat(hog, 4)+" wait", 30)
			_, started := res.Metadata["exit_code"]
			assert.Assert(t, started, res.Output)
			n := strings.Count(res.Output, "allocated")
			assert.Check(t, n < 4, "all four processes got their 400 MiB under a 512 MiB limit: %s", res.Output)
			t.Logf("%d of 4 allocated: %.300s", n, res.Output)
		})
	}
}

// launcherOf returns the launcher of a probed sandbox.
func launcherOf(w any) *launcher {
	switch s := w.(type) {
	case *bwrapSandbox:
		return s.launcher
	case *landlockSandbox:
		return s.launcher
	}
	panic(fmt.Sprintf("unexpected wrapper %T", w))
}

// A double-forked setsid child that would rewrite a file after its command returned (after
// task_complete) dies with the command in every mode: bwrap's PID namespace, Landlock's
// cgroup or, without one, the runner's sweep of orphans, and the sweep under none.
func TestDoubleForkedChildDoesNotSurvive(t *testing.T) {
	if _, err := osexec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed")
	}
	modes := append(sandboxes(t), confined{name: ModeNone, wrapper: None()})
	if l, ok := modes[len(modes)-2].wrapper.(*landlockSandbox); ok && l.cgroup != nil {
		// The same without a cgroup: only the sweep finds the orphan.
		bare := *l
		bare.launcher = &launcher{homes: l.homes}
		modes = append(modes, confined{name: "landlock-without-cgroup", wrapper: &bare})
	}
	for _, sb := range modes {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel()
			ws := workspace(t, sb.wrapper)
			m := marker()
			res := run(t, ws, `setsid sh -c '(sleep 0.5; echo tampered > result.txt) & : `+m+`' & sleep 0.1; echo honest > result.txt`, 5)
			assert.Assert(t, res.Success, res.Output)
			time.Sleep(time.Second)
			b, err := os.ReadFile(filepath.Join(ws.Dir(), "result.txt"))
			assert.NilError(t, err)
			assert.Equal(t, string(b), "honest\n", "a process outlived its command")
		})
	}
}
