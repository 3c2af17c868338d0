package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"
)

// landlockSandbox runs commands through the helper (the runner re-executed, see
// internal/confine), which applies Landlock rules.
type landlockSandbox struct {
	*launcher
	abi int
	// seccomp is whether the helper has a seccomp filter for this architecture.
	seccomp bool
}

func (l *landlockSandbox) Name() string { return ModeLandlock }

// Wrap gives the command a private temp directory (TMPDIR, XDG_CACHE_HOME unless the run
// shares one, and HOME below it), empty, and has the helper confine it: read access to the
// view, the shared cache and the regular files the runner hands over (cmd.ExtraFiles, such
// as run_code's script), writes in the workspace, the temp directory and the workspace's
// layer over the shared cache.
func (l *landlockSandbox) Wrap(cmd *exec.Cmd, ws *tools.Workspace) error {
	tmp, temps, err := l.privateTemp(ws)
	if err != nil {
		return fmt.Errorf("create private temp dir: %w", err)
	}
	if cmd.Env == nil {
		cmd.Env = cmd.Environ()
	}
	if cmd.Dir == "" {
		cmd.Dir = ws.Dir() // as bwrap's --chdir: never the runner's own directory
	}
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	if envValue(cmd.Env, "XDG_CACHE_HOME") == "" {
		cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+filepath.Join(tmp, ".cache"))
	}
	v := l.view(envValue(cmd.Env, "PATH"))
	cmd.Env = l.privateHome(cmd.Env, tmp, v, ws)
	read := append(make([]string, 0, len(v.read)+len(cmd.ExtraFiles)+2), v.read...)
	read = append(read, landlockExtras...)
	for _, f := range cmd.ExtraFiles {
		if fi, err := os.Stat(f.Name()); err == nil && fi.Mode().IsRegular() && filepath.IsAbs(f.Name()) {
			read = append(read, f.Name())
		}
	}
	read = append(read, ws.ReadOnly...) // e.g. an MCP server's own directory
	if ws.CacheDir != "" {
		read = append(read, ws.CacheDir) // what the layer's links lead to
	}
	if ws.Network {
		if rc := resolvConf(); rc != "" {
			read = append(read, rc)
		}
	}
	cfg := confine.Config{
		Tmp: tmp,
		Landlock: &confine.Rules{
			Read:    read,
			List:    v.list,
			Write:   writable(ws, tmp),
			Network: ws.Network,
		},
		Seccomp: confine.Seccomp{Sockets: l.seccomp, NoNetwork: !ws.Network, Metadata: l.seccomp, Kernel: l.seccomp},
	}
	if ws.EndpointPort > 0 && !ws.Network {
		cfg.Landlock.ConnectPorts = []int{ws.EndpointPort}
	}
	target := append([]string{cmd.Path}, cmd.Args...)
	if err := l.wrapHelper(cmd, ws, cfg, target, temps); err != nil {
		releaseTemp(temps, tmp, true) // nothing ran
		return err
	}
	return nil
}

// homeVariables point a toolchain at its directory in the real home once HOME is private.
var homeVariables = map[string]string{".cargo": "CARGO_HOME", ".rustup": "RUSTUP_HOME", ".pyenv": "PYENV_ROOT", "go": "GOPATH"}

// privateHome gives the command a home of its own below tmp, as bwrap's tmpfs does: the
// real one cannot be read (a git that finds ~/.gitconfig unreadable gives up), and must
// not be. Toolchains found through HOME are pointed at their real directories, read-only.
func (l *landlockSandbox) privateHome(env []string, tmp string, v *view, ws *tools.Workspace) []string {
	home := envValue(env, "HOME")
	if home == "" || within(home, ws.Dir()) || !inAny(home, l.homes) {
		return env
	}
	private := filepath.Join(tmp, "home")
	if err := os.Mkdir(private, 0o700); err != nil {
		// The previous command's, emptied (see tempPool), or something in the way.
		if fi, lerr := os.Lstat(private); lerr != nil || !fi.IsDir() {
			return env
		}
	}
	env = append(env, "HOME="+private)
	for _, dir := range v.toolchains {
		if name := homeVariables[filepath.Base(dir)]; name != "" && filepath.Dir(dir) == home && envValue(env, name) == "" {
			env = append(env, name+"="+dir)
		}
	}
	return env
}

// landlockExtras are readable under Landlock beyond the view: /proc, which programs need
// for their own process (/proc/self, /dev/fd), and the CPU list (nproc, os.cpu_count).
// Other processes' environ, fds and memory stay out of reach (Landlock denies ptrace
// across domains), but their command lines, the runner's included, can be read.
var landlockExtras = []string{"/proc", "/sys/devices/system/cpu"}

// Release kills what is left of the command in its cgroups and empties its temp directory
// for the workspace's next command, or removes it.
func (l *landlockSandbox) Release(cmd *exec.Cmd) { l.releaseHelper(cmd) }

func probeLandlock(ctx context.Context) (tools.CommandWrapper, string, error) {
	abi := confine.ABI()
	if abi < 1 {
		return nil, "", fmt.Errorf("the kernel does not support Landlock (Linux 5.13+ with landlock in the lsm= boot list)")
	}
	l := &landlockSandbox{launcher: newLauncher(), abi: abi, seccomp: confine.SeccompSupported()}
	if err := selfTest(ctx, l, ""); err != nil {
		return nil, "", err
	}
	reason := fmt.Sprintf("sandbox landlock (ABI %d): reads only system and toolchain dirs, writes only its workspace and a private temp dir, "+
		"no network or host sockets unless network: true, no capabilities; %s; %s",
		abi, l.describeLimits(), describeGaps(l.gaps(false)))
	return l, reason, nil
}

// gaps: what Landlock leaves open here (see Gaps).
func (l *landlockSandbox) gaps(network bool) []string {
	g := l.limitGaps()
	g = append(g, "other processes' command lines, the runner's included, readable in /proc")
	owner := "the user's own files"
	if os.Geteuid() == 0 {
		owner = "any file (running as root)"
	}
	g = append(g, "timestamps and mode bits of "+owner+" outside the workspace can change (Landlock has no right for them; auto prefers bwrap)")
	if l.abi < 4 && !network {
		g = append(g, fmt.Sprintf("TCP not blocked (Landlock ABI %d, needs 4)", l.abi))
	}
	if l.abi < 6 {
		g = append(g, fmt.Sprintf("signals to processes outside not blocked (Landlock ABI %d, needs 6)", l.abi))
	}
	switch {
	case !l.seccomp:
		g = append(g, "no seccomp filter for this architecture: unix sockets, UDP, TCP Fast Open, extended attributes and set-user-ID bits open")
	case network:
		g = append(g, "network: true opens UDP and host unix sockets too")
	}
	return g
}

// writable lists what a Landlock-confined command may write: its workspace, its private
// temp dir, its layer over the run's shared cache (the cache itself only for a setup
// command: see tools.Workspace.CacheHome), and the workspace's Writable (a verification
// command's results directory).
func writable(ws *tools.Workspace, tmp string) []string {
	dirs := []string{ws.Dir(), tmp}
	if ws.CacheDir != "" {
		if ws.CacheWritable {
			dirs = append(dirs, ws.CacheDir)
		} else if home, err := ws.CacheHome(); err == nil && home != "" {
			dirs = append(dirs, home)
		}
	}
	return append(dirs, ws.Writable...)
}
