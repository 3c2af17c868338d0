package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentrunner/runner/tools"
)

// selfExe names the running binary in the child between fork and exec, even if the file
// was replaced or deleted since the runner started.
const selfExe = "/proc/self/exe"

// wrapHelper rewrites cmd to run the helper with cfg, which then executes target (program
// path, argv...). cfg.Limits and cfg.Cgroup are filled in here.
func (l *launcher) wrapHelper(cmd *exec.Cmd, ws *tools.Workspace, cfg helperConfig, target []string) error {
	cfg.Limits = EffectiveLimits(ws.Limits)
	if l.cgroup != nil {
		dir, err := l.cgroup.create(cfg.Limits.Processes)
		if err != nil {
			return err
		}
		cfg.Cgroup = dir
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode helper config: %w", err)
	}
	cmd.Path = selfExe
	cmd.Args = append([]string{"runner-sandbox", HelperArg, string(b)}, target...)
	return nil
}

// releaseHelper kills what is left of a helper-launched command in its cgroup and removes
// the cgroup and the private temp directory.
func releaseHelper(cmd *exec.Cmd) {
	cfg, ok := configOf(cmd)
	if !ok {
		return
	}
	if cfg.Cgroup != "" {
		removeCgroup(cfg.Cgroup)
	}
	if cfg.Tmp != "" {
		_ = os.RemoveAll(cfg.Tmp)
	}
}

// configOf reads back the helper config of a wrapped command.
func configOf(cmd *exec.Cmd) (helperConfig, bool) {
	var cfg helperConfig
	if len(cmd.Args) < 3 || cmd.Args[1] != HelperArg {
		return cfg, false
	}
	return cfg, json.Unmarshal([]byte(cmd.Args[2]), &cfg) == nil
}

// runHelper is the helper's work: join the cgroup, apply Landlock, set the limits, drop
// capabilities, exec.
// The order matters: Landlock would forbid writing cgroup.procs, and the limits must not
// constrain the helper's own work.
//
// Landlock is applied to this thread only, which then executes the command: execve keeps
// the calling thread's credentials, so the other threads of the Go runtime need not be
// restricted (doing that costs milliseconds of signalling on kernels before ABI 8).
func runHelper(args []string) error {
	runtime.LockOSThread() // never unlocked: the process becomes the command
	if len(args) < 3 {
		return errors.New("helper needs a config, a program and its argv")
	}
	var cfg helperConfig
	if err := json.Unmarshal([]byte(args[0]), &cfg); err != nil {
		return fmt.Errorf("decode helper config: %w", err)
	}
	path, argv := args[1], args[2:]
	if cfg.Cgroup != "" {
		procs := filepath.Join(cfg.Cgroup, "cgroup.procs")
		if err := os.WriteFile(procs, []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return fmt.Errorf("join pids cgroup: %w", err)
		}
	}
	if cfg.Landlock != nil {
		if err := restrictThread(cfg.Landlock); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if err := applyLimits(0, EffectiveLimits(cfg.Limits)); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
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
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the kernel's last capability
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}
