package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// run is the helper's work: read the config, join the cgroup, become a subreaper, apply Landlock, set the
// limits, drop capabilities, close inherited descriptors, join an empty session keyring,
// install the seccomp filter, exec. The order matters: Landlock would forbid writing cgroup.procs, and
// neither the limits nor the lost capabilities may hinder the steps before.
//
// Landlock is applied to this thread only, which then executes the command: execve keeps
// the calling thread's credentials, so the Go runtime's other threads need not be
// restricted (go-landlock does that through psx, milliseconds of signalling before ABI 8).
func run(args []string) error {
	runtime.LockOSThread() // never unlocked: the process becomes the command
	if len(args) < 3 {
		return errors.New("helper needs a config, a program and its argv")
	}
	var cfg Config
	if pending != nil {
		cfg = *pending
	} else {
		var err error
		if cfg, err = readConfig(args[0]); err != nil {
			return err
		}
	}
	if inInit && cfg.CoverDir != "" {
		pending = &cfg
		return errDeferred
	}
	coverDir = cfg.CoverDir
	path, argv := args[1], args[2:]
	for _, dir := range cfg.Cgroups {
		if err := joinCgroup(dir); err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
	}
	// The command's first process collects the orphans of its own descendants (a double
	// fork, setsid) while it runs (the flag outlives execve): a daemon the command started
	// and still uses comes back to it, not to the runner, whose sweep kills what comes
	// back once another command has ended (see tools/exec's reaper). When it ends, they go
	// on to the runner and die. Without the flag they would only be told apart by the mark
	// in their environment, which a daemon may drop.
	if err := prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become a subreaper: %w", err)
	}
	if cfg.Landlock != nil {
		if err := restrictThread(cfg.Landlock); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	// Coverage builds write their counters before the limits apply: under a tight
	// memory_mb the write's allocations failed, a fatal runtime error that killed the
	// command. What runs after is covered by this package's own tests.
	flushCoverage()
	prog := filter(cfg.Seccomp) // allocates: before the memory limit
	if err := ApplyLimits(0, cfg.Limits); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	// The config's descriptor comes last, after the ones handed on on purpose (ExtraFiles):
	// whatever lies above was inherited by the runner and must not reach the command.
	if fd, err := strconv.Atoi(args[0]); err == nil {
		if err := SealDescriptors(fd + 1); err != nil {
			return fmt.Errorf("seal inherited descriptors: %w", err)
		}
	}
	joinEmptyKeyring()
	if err := installFilter(cfg.Seccomp, prog); err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, cfg.Env); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}

// joinCgroup moves the helper into the cgroup dir. On cgroup v1 it moves only its own
// thread, the one that executes the command, by writing 0 to the cgroup's tasks: moving a
// whole process (cgroup.procs) takes a lock that first waits for an RCU grace period, 1 to
// 10 ms per command on a busy 2-core machine, where moving oneself alone takes none. The
// helper's other threads stay behind and end at execve, which leaves only this one. On
// v2 (no tasks file) a domain cgroup takes whole processes only.
func joinCgroup(dir string) error {
	err := writeFile(filepath.Join(dir, "tasks"), "0")
	if errors.Is(err, unix.ENOENT) {
		err = writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(os.Getpid()))
	}
	return err
}

// writeFile writes s to an existing file with three system calls (os.WriteFile would also
// set up Go's poller).
func writeFile(path, s string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		_, err = unix.Write(fd, []byte(s))
		_ = unix.Close(fd)
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// readConfig reads the config from the descriptor named by fdArg and closes it, so that
// the program does not inherit it.
func readConfig(fdArg string) (Config, error) {
	var cfg Config
	fd, err := strconv.Atoi(fdArg)
	if err != nil || fd < 3 {
		return cfg, fmt.Errorf("decode helper config: %q is not a config descriptor", fdArg)
	}
	f := os.NewFile(uintptr(fd), "config")
	defer func() { _ = f.Close() }() // a descriptor only read through: Close loses no data
	b, err := io.ReadAll(f)
	if err != nil {
		return cfg, fmt.Errorf("read helper config: %w", err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("decode helper config: %w", err)
	}
	return cfg, nil
}

// ApplyLimits lowers the resource limits of process pid (0: this process) to l; zero
// fields are left alone. A limit already lower stays: an unprivileged process may not
// raise its hard limits. Core dumps are always disabled, so that a crash writes nothing
// into the workspace.
func ApplyLimits(pid int, l Limits) error {
	const mib = 1 << 20
	limits := []struct {
		name       string
		resource   int
		set        bool
		soft, hard uint64
	}{
		// SIGXCPU at the soft limit lets the shell report "CPU time limit exceeded"; the
		// hard limit a second later kills a process that ignores it.
		{"cpu", unix.RLIMIT_CPU, l.CPUSeconds > 0, uint64(l.CPUSeconds), uint64(l.CPUSeconds) + 1},
		// Not RLIMIT_AS: Go, V8 and the JVM reserve far more address space than they use.
		{"memory", unix.RLIMIT_DATA, l.MemoryMB > 0, uint64(l.MemoryMB) * mib, uint64(l.MemoryMB) * mib},
		{"file size", unix.RLIMIT_FSIZE, l.FileSizeMB > 0, uint64(l.FileSizeMB) * mib, uint64(l.FileSizeMB) * mib},
		{"processes", unix.RLIMIT_NPROC, l.Processes > 0, uint64(l.Processes), uint64(l.Processes)},
		{"core", unix.RLIMIT_CORE, true, 0, 0},
	}
	for _, lim := range limits {
		if !lim.set {
			continue
		}
		var cur unix.Rlimit
		if err := prlimit(pid, lim.resource, nil, &cur); err != nil {
			return fmt.Errorf("get %s limit: %w", lim.name, err)
		}
		want := unix.Rlimit{Cur: min(lim.soft, cur.Max), Max: min(lim.hard, cur.Max)}
		if err := prlimit(pid, lim.resource, &want, nil); err != nil {
			return fmt.Errorf("set %s limit: %w", lim.name, err)
		}
	}
	return nil
}

// dropCapabilities leaves the calling thread, and the program it executes, without any
// capability, as bwrap's --cap-drop ALL does. It matters only as root, where a command
// would otherwise keep CAP_SYS_MODULE, CAP_NET_ADMIN and the rest, which Landlock does not
// cover, and CAP_SYS_PTRACE: with it, a command under Landlock could still read the
// runner's /proc/<pid>/environ, API keys included (measured on Linux 6.18). Emptying the
// bounding set is what keeps execve from granting root its capabilities again.
func dropCapabilities() error {
	if os.Geteuid() != 0 {
		return nil
	}
	for c := 0; c <= 63; c++ {
		if err := prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the kernel's last capability
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	if err := prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}
