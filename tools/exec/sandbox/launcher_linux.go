package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentrunner/runner/tools"
)

// selfExe names the running binary in the child between fork and exec, even if the file
// was replaced or deleted since the runner started.
const selfExe = "/proc/self/exe"

// launcher is what bwrap and landlock share: re-executing the runner as the helper, and
// releasing what a command held.
type launcher struct {
	// cgroup contains fork bombs when running as root; nil when not root or unavailable.
	cgroup *pidsCgroup
	// homes are the home directories whose credentials are hidden.
	homes []string
}

func newLauncher() *launcher {
	l := &launcher{homes: homeDirs()}
	if os.Geteuid() == 0 {
		l.cgroup, _ = findPidsCgroup() // nil: RLIMIT_NPROC, PID namespace and timeout only
	}
	return l
}

// wrap rewrites cmd to run the helper with cfg, which then executes target
// (program path, argv...).
func (l *launcher) wrap(cmd *exec.Cmd, ws *tools.Workspace, cfg helperConfig, target []string) error {
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

// Release kills what is left of a command in its cgroup and removes the cgroup and the
// private temp directory. The exec tools call it once the command is done.
func (l *launcher) Release(cmd *exec.Cmd) {
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

// describeLimits says which limits apply, for Probe's reason.
func (l *launcher) describeLimits() string {
	d := DefaultLimits
	s := fmt.Sprintf("default limits per process: %d s CPU, %d MiB memory, %d MiB file size, %d processes",
		d.CPUSeconds, d.MemoryMB, d.FileSizeMB, d.Processes)
	switch {
	case l.cgroup != nil:
		s += " (pids cgroup under " + l.cgroup.base + ")"
	case os.Geteuid() == 0:
		s += " (WARNING: running as root without a writable pids cgroup, so the process limit is not enforced; the timeout still kills everything)"
	}
	return s
}

// runHelper is the helper's work: join the cgroup, apply Landlock, set the limits, exec.
// The order matters: Landlock would forbid writing cgroup.procs, and the limits must not
// constrain the helper's own work.
func runHelper(args []string) error {
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
		if err := restrict(cfg.Landlock); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if err := setLimits(EffectiveLimits(cfg.Limits)); err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}

// setLimits lowers the process's resource limits (see DefaultLimits). A limit already
// lower stays: an unprivileged process may not raise its hard limits.
func setLimits(l tools.Limits) error {
	const mib = 1 << 20
	limits := []struct {
		name       string
		resource   int
		soft, hard uint64
	}{
		// SIGXCPU at the soft limit lets the shell report "CPU time limit exceeded"; the
		// hard limit a second later kills a process that ignores it.
		{"cpu", unix.RLIMIT_CPU, uint64(l.CPUSeconds), uint64(l.CPUSeconds) + 1},
		{"memory", unix.RLIMIT_DATA, uint64(l.MemoryMB) * mib, uint64(l.MemoryMB) * mib},
		{"file size", unix.RLIMIT_FSIZE, uint64(l.FileSizeMB) * mib, uint64(l.FileSizeMB) * mib},
		{"processes", unix.RLIMIT_NPROC, uint64(l.Processes), uint64(l.Processes)},
		{"core", unix.RLIMIT_CORE, 0, 0},
	}
	for _, lim := range limits {
		var cur unix.Rlimit
		if err := unix.Getrlimit(lim.resource, &cur); err != nil {
			return fmt.Errorf("get %s limit: %w", lim.name, err)
		}
		want := unix.Rlimit{Cur: min(lim.soft, cur.Max), Max: min(lim.hard, cur.Max)}
		if err := unix.Setrlimit(lim.resource, &want); err != nil {
			return fmt.Errorf("set %s limit: %w", lim.name, err)
		}
	}
	return nil
}

// credentialPaths are the places, relative to a home directory, where tools keep secrets.
// Sandboxed commands cannot read them.
var credentialPaths = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".docker", ".kube",
	".config/gh", ".config/hub", ".git-credentials", ".config/git/credentials", ".netrc",
	".npmrc", ".yarnrc.yml", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
	".m2/settings.xml", ".gradle/gradle.properties", ".terraform.d", ".vault-token",
	".password-store", ".local/share/keyrings", ".config/op", ".claude", ".codex",
}

// homeDirs returns the runner's home directories: $HOME and the user database's entry.
func homeDirs() []string {
	var homes []string
	add := func(h string) {
		if h == "" || h == "/" || !filepath.IsAbs(h) {
			return
		}
		h = filepath.Clean(h)
		for _, seen := range homes {
			if seen == h {
				return
			}
		}
		homes = append(homes, h)
	}
	add(os.Getenv("HOME"))
	if u, err := user.Current(); err == nil {
		add(u.HomeDir)
	}
	return homes
}

// deniedPaths lists the credential paths that exist, as given and with symlinks resolved.
func (l *launcher) deniedPaths() []string {
	var out []string
	for _, h := range l.homes {
		for _, rel := range credentialPaths {
			p := filepath.Join(h, rel)
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			out = append(out, p)
			if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
				out = append(out, real)
			}
		}
	}
	return out
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if dir == "/" {
		return filepath.IsAbs(p)
	}
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}
