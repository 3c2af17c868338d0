package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"
)

// bwrapSandbox runs commands under bubblewrap. No helper sits between: bwrap holds the
// sandbox's first process at --block-fd until the runner has set its limits with
// prlimit(2) and moved it into its cgroup, so everything the command starts inherits them,
// at the cost of a few syscalls rather than an exec of the runner.
type bwrapSandbox struct {
	*launcher
	bwrap string
	// filter is the seccomp program bwrap installs before it executes the command
	// (confine.Seccomp.Kernel: io_uring, keyrings, namespaces, ...), nil on an
	// architecture without one; its socket allow-list (confine.Seccomp.Sockets) closes the
	// protocol families no network namespace holds (vsock), while the network itself is
	// unshared.
	filter []byte
	// pending maps each wrapped *exec.Cmd to its admission, for Release.
	pending sync.Map
}

func (b *bwrapSandbox) Name() string { return ModeBwrap }

// ContainsDescendants is true: every process of the command lives in its PID namespace,
// whose processes are re-parented to its first one, never to the runner, and die with it
// (see tools/exec.Contained).
func (b *bwrapSandbox) ContainsDescendants() bool { return true }

// admitTimeout bounds the wait for bwrap to report its sandbox's pid.
const admitTimeout = 30 * time.Second

// admission is the hand-over of one sandbox: bwrap writes its child's pid on info, the
// runner confines that process and releases it by writing to block.
type admission struct {
	infoR, infoW   *os.File
	blockR, blockW *os.File
	errOut         *os.File // a copy of the command's stderr, for confinement failures
	argsFile       *os.File // bwrap's arguments (--args)
	seccompFile    *os.File // the seccomp filter (--seccomp), nil without one
	limits         tools.Limits
	cgroups        *commandCgroups // nil without cgroups
	// pidfd is the sandbox's first process (its PID 1), set once admitted: a pidfd, so a
	// late kill cannot hit a process that reused the pid.
	pidfd int
	// bornInside says bwrap was forked inside cgroups (see Start): so is its sandbox.
	bornInside atomic.Bool
	done       chan struct{}
}

// Wrap rewrites cmd to run under bwrap and starts the goroutine that admits the sandbox
// once cmd has started. The caller must call Release after the command has finished.
func (b *bwrapSandbox) Wrap(cmd *exec.Cmd, ws *tools.Workspace) error {
	if cmd.Env == nil {
		cmd.Env = cmd.Environ()
	}
	a := &admission{limits: EffectiveLimits(ws.Limits), pidfd: -1, done: make(chan struct{})}
	var err error
	if err = a.open(cmd); err == nil {
		a.cgroups, err = b.cgroupsFor(ws, a.limits)
	}
	if err != nil {
		a.close()
		_ = a.errOut.Close()
		return err
	}
	infoFD := 3 + len(cmd.ExtraFiles)
	args := append([]string{"--info-fd", strconv.Itoa(infoFD), "--block-fd", strconv.Itoa(infoFD + 1)}, b.args(cmd, ws)...)
	if b.filter != nil {
		// Read by bwrap to the end, so one of its own per command.
		if a.seccompFile, err = memfd("runner-bwrap-seccomp", b.filter); err != nil {
			a.close()
			_ = a.errOut.Close()
			a.cgroups.release()
			return err
		}
		args = append(args, "--seccomp", strconv.Itoa(infoFD+3))
	}
	// The arguments, the command's environment among them, go through a memfd: bwrap's
	// command line is readable by every process on the host, its environment is not.
	if a.argsFile, err = memfd("runner-bwrap-args", []byte(strings.Join(args, "\x00")+"\x00")); err != nil {
		a.close()
		_ = a.errOut.Close()
		a.cgroups.release()
		return err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, a.infoW, a.blockR, a.argsFile)
	if a.seccompFile != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, a.seccompFile)
	}
	// bwrap 0.8 takes only options from --args, and has no --argv0: the program's path is
	// its argv[0].
	command := append([]string{"bwrap", "--args", strconv.Itoa(infoFD + 2), "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args, cmd.Env = b.bwrap, command, []string{}
	b.pending.Store(cmd, a)
	go a.admit()
	return nil
}

// open makes the admission's pipes.
func (a *admission) open(cmd *exec.Cmd) error {
	var err error
	if a.infoR, a.infoW, err = os.Pipe(); err != nil {
		return fmt.Errorf("bwrap info pipe: %w", err)
	}
	if a.blockR, a.blockW, err = os.Pipe(); err != nil {
		return fmt.Errorf("bwrap block pipe: %w", err)
	}
	if f, ok := cmd.Stderr.(*os.File); ok {
		if fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0); err == nil {
			a.errOut = os.NewFile(uintptr(fd), "stderr")
		}
	}
	return nil
}

// admit waits for bwrap's report, confines the sandbox's first process and lets it go on.
// If that fails the process is killed, never released: closing block without writing
// would let it run unconfined, so block stays open until Release.
func (a *admission) admit() {
	defer close(a.done)
	defer func() { _ = a.errOut.Close() }() // a pipe end: Close loses no data
	_ = a.infoR.SetReadDeadline(time.Now().Add(admitTimeout))
	child, err := childPid(a.infoR)
	if err != nil {
		return // never started (Release closed the pipe), or bwrap failed and said why
	}
	// The child waits on block, alive and unreaped: its pid is still its own.
	pidfd, err := unix.PidfdOpen(child, 0)
	if err == nil {
		a.pidfd = pidfd
		err = a.confine(child)
	}
	if err != nil {
		_ = syscall.Kill(child, syscall.SIGKILL)
		if a.errOut != nil {
			_, _ = fmt.Fprintf(a.errOut, "runner sandbox: %v\n", err) // console output: a failed write has nowhere to be reported
		}
		return
	}
	_, _ = a.blockW.Write([]byte{1})
}

// confine moves the sandbox's first process into the command's cgroups, unless it was born
// there (see Start), and sets its limits.
func (a *admission) confine(pid int) error {
	if a.cgroups != nil && !a.bornInside.Load() {
		if err := join(a.cgroups.dirs, pid); err != nil {
			return err
		}
	}
	return applyLimits(pid, a.limits)
}

// Start starts a command Wrap rewrote (tools/exec calls it in place of cmd.Start). On
// cgroup v1 bwrap is forked from inside the command's cgroups (see cgroups.forkInside), so
// that the sandbox it creates is born in them, with bwrap itself counted among the
// command's processes, and the admission has no process to move in; else, or below
// minProcessesInside and minMemoryMBInside, the admission moves the sandbox in.
func (b *bwrapSandbox) Start(cmd *exec.Cmd) error {
	v, ok := b.pending.Load(cmd)
	if !ok || b.cgroup == nil || !b.cgroup.threads {
		return cmd.Start()
	}
	a := v.(*admission)
	if a.cgroups == nil || a.limits.Processes < minProcessesInside || b.cgroup.memory != "" && a.limits.MemoryMB < minMemoryMBInside {
		return cmd.Start()
	}
	return b.cgroup.forkInside(a.cgroups.dirs, func(inside bool) error {
		a.bornInside.Store(inside) // before the fork: bwrap reports a child only after
		return cmd.Start()
	})
}

// childPid reads bwrap's --info-fd report as far as the sandbox's pid. bwrap writes
// `{"child-pid": N` first and its namespaces after, each in a write of its own: decoding
// the whole object would wake the reader for every one.
func childPid(r io.Reader) (int, error) {
	buf := make([]byte, 0, 256)
	for len(buf) < cap(buf) {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if pid, ok := parseChildPid(buf); ok {
			return pid, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("no child-pid in bwrap's report: %q", buf)
}

// parseChildPid finds the child-pid in the start of bwrap's report. A number that ends the
// text may go on in the next write, so it counts only once something follows it.
func parseChildPid(b []byte) (int, bool) {
	const key = `"child-pid":`
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(b[i+len(key):], " \t\n")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n == len(rest) {
		return 0, false
	}
	pid, err := strconv.Atoi(string(rest[:n]))
	return pid, err == nil && pid > 0
}

// close releases the admission's descriptors (closing one twice is harmless).
func (a *admission) close() {
	for _, f := range []*os.File{a.infoR, a.infoW, a.blockR, a.blockW, a.argsFile, a.seccompFile} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// Release ends the admission of a finished command: it kills the sandbox's PID 1, which
// takes the whole PID namespace with it (bwrap's --die-with-parent does the same, except
// in the instant before it is armed), waits until that process is gone, and so everything
// in its namespace (the kernel kills them as it dies and waits for them), and reaps it
// (bwrap exits before it, so it comes to the runner, a subreaper). Then the cgroups are
// emptied, which they should be already, and go back to the workspace or are removed.
//
// A sandbox still held at block is never let go unconfined: until admit has run, its first
// process sits in the runner's process group, which the exec tools kill before Release.
func (b *bwrapSandbox) Release(cmd *exec.Cmd) {
	v, ok := b.pending.LoadAndDelete(cmd)
	if !ok {
		return
	}
	a := v.(*admission)
	_ = a.infoR.Close() // wakes admit if the command never started
	<-a.done
	if a.pidfd >= 0 {
		_ = unix.PidfdSendSignal(a.pidfd, unix.SIGKILL, nil, 0)
		awaitGone(a.pidfd, time.Second)
		_ = unix.Close(a.pidfd)
	}
	a.close()
	a.cgroups.release()
}

// awaitGone waits, at most timeout, until the process behind pidfd has exited, and reaps
// it if it is the runner's child. A pidfd becomes readable once its process has exited
// entirely: that wakes the runner the moment it happens, where polling the cgroup for it
// sleeps in steps.
func awaitGone(pidfd int, timeout time.Duration) {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, int(timeout.Milliseconds())); !errors.Is(err, unix.EINTR) {
			break
		}
	}
	var info unix.Siginfo
	_ = unix.Waitid(unix.P_PIDFD, pidfd, &info, unix.WEXITED|unix.WNOHANG, nil)
}

// args builds bwrap's options (Wrap adds the command). Mounts apply in order, so the workspace is bound last,
// on top of the private /tmp or home it may sit in. Only the view's directories are there:
// the host's /tmp, /run, /var, homes, the task's directory and --out are not.
//
// The command's environment goes in as --setenv: bwrap itself runs with an empty one, so
// that nothing the agent chose (LD_PRELOAD) acts on it before it has confined anything.
func (b *bwrapSandbox) args(cmd *exec.Cmd, ws *tools.Workspace) []string {
	args := make([]string, 0, 64+2*len(cmd.Env))
	args = append(args, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	v := b.view(envValue(cmd.Env, "PATH"))
	args = append(args, v.mounts...)
	for _, home := range b.homes {
		if !within(home, ws.Dir()) { // a home inside the workspace is the agent's anyway
			args = append(args, "--tmpfs", home)
		}
	}
	args = append(args, v.mask...) // toolchains bound back, credentials in them masked
	if ws.Network {
		if rc := resolvConf(); rc != "" {
			args = append(args, "--ro-bind", rc, rc)
		}
	} else {
		args = append(args, "--unshare-net")
	}
	if ws.CacheDir != "" && !within(ws.CacheDir, ws.Dir()) {
		// The shared cache read-only (a setup command's aside), the workspace's layer
		// over it writable: see tools.Workspace.CacheHome.
		if ws.CacheWritable {
			args = append(args, "--bind", ws.CacheDir, ws.CacheDir)
		} else {
			args = append(args, "--ro-bind", ws.CacheDir, ws.CacheDir)
			if home, err := ws.CacheHome(); err == nil && home != "" {
				args = append(args, "--bind", home, home)
			}
		}
	}
	for _, dir := range ws.ReadOnly {
		args = append(args, "--ro-bind", dir, dir)
	}
	for _, dir := range ws.Writable {
		args = append(args, "--bind", dir, dir)
	}
	args = append(args, "--bind", ws.Dir(), ws.Dir())
	args = append(args,
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		// Killing bwrap (the call's timeout kills its process group) kills the namespace.
		"--die-with-parent",
		// No controlling terminal to push input into (TIOCSTI), should the runner have one.
		"--new-session",
	)
	if os.Geteuid() == 0 {
		// As root bwrap keeps every capability unless told otherwise; without them the
		// read-only mounts cannot be remounted.
		args = append(args, "--cap-drop", "ALL")
	}
	for _, kv := range cmd.Env {
		if k, val, ok := strings.Cut(kv, "="); ok {
			args = append(args, "--setenv", k, val)
		}
	}
	dir := cmd.Dir
	if dir == "" {
		dir = ws.Dir()
	}
	return append(args, "--chdir", dir)
}

// toolchainDirs are the directories of a masked home that stay visible, read-only: the
// top-level entries holding a PATH directory (~/.cargo, ~/.pyenv, ~/go), and ~/.rustup,
// which cargo's proxies need. Without them the tools installed in the home would vanish.
func toolchainDirs(home, pathEnv string) []string {
	var out []string
	add := func(p string) {
		for _, seen := range out {
			if seen == p {
				return
			}
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		dir = filepath.Clean(dir)
		if !filepath.IsAbs(dir) || dir == home || !within(dir, home) {
			continue
		}
		top, _, _ := strings.Cut(strings.TrimPrefix(dir, home+"/"), "/")
		if isCredential(filepath.Join(home, top), home) {
			continue
		}
		add(filepath.Join(home, top))
	}
	add(filepath.Join(home, ".rustup"))
	return out
}

// isCredential reports whether p is one of home's credential paths or lies inside one.
// (Credentials inside a toolchain directory are masked one by one.)
func isCredential(p, home string) bool {
	for _, rel := range credentialPaths {
		if within(p, filepath.Join(home, rel)) {
			return true
		}
	}
	return false
}

func lookBwrap() (string, error) { return exec.LookPath("bwrap") }

func probeBwrap(ctx context.Context) (tools.CommandWrapper, string, error) {
	path, err := lookBwrap()
	if err != nil {
		return nil, "", fmt.Errorf("bwrap is not installed (Debian and Ubuntu package: bubblewrap): %w", err)
	}
	b := &bwrapSandbox{launcher: newLauncher(), bwrap: path, filter: confine.FilterProgram(confine.Seccomp{Kernel: true, Sockets: true})}
	if err := selfTest(ctx, b, " (user namespaces may be blocked here, as on Ubuntu 24.04 with AppArmor)"); err != nil {
		return nil, "", err
	}
	reason := fmt.Sprintf("sandbox bwrap (%s): sees only system and toolchain dirs (read-only) and its workspace, "+
		"private /tmp and home, no network or host sockets unless network: true, own PID namespace, no capabilities; %s; %s",
		path, b.describeLimits(), describeGaps(b.gaps(false)))
	return b, reason, nil
}

// gaps: what bwrap leaves open here (see Gaps).
func (b *bwrapSandbox) gaps(network bool) []string {
	g := b.limitGaps()
	if network {
		g = append(g, "network: true shares the host's network namespace: loopback services and abstract unix sockets are reachable")
	}
	return g
}
