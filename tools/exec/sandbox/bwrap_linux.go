package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentrunner/runner/tools"
)

// bwrapSandbox runs commands under bubblewrap, launched by the helper.
type bwrapSandbox struct {
	*launcher
	bwrap string
}

func (b *bwrapSandbox) Name() string { return ModeBwrap }

// Wrap runs cmd as: helper (limits, cgroup) -> bwrap -> the program.
func (b *bwrapSandbox) Wrap(cmd *exec.Cmd, ws *tools.Workspace) error {
	if cmd.Env == nil {
		cmd.Env = cmd.Environ()
	}
	args := b.args(cmd, ws)
	target := append([]string{b.bwrap, "bwrap"}, args...)
	return b.wrap(cmd, ws, helperConfig{}, target)
}

// args builds bwrap's command line. Mounts apply in order, so the workspace is bound last,
// on top of the private /tmp or home it may sit in.
func (b *bwrapSandbox) args(cmd *exec.Cmd, ws *tools.Workspace) []string {
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	}
	pathEnv := envValue(cmd.Env, "PATH")
	for _, home := range b.homes {
		if within(home, ws.Dir()) {
			continue // a home inside the workspace is the agent's anyway
		}
		if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
			continue
		}
		args = append(args, "--tmpfs", home)
		for _, keep := range toolchainDirs(home, pathEnv) {
			args = append(args, "--ro-bind", keep, keep)
		}
	}
	// Credentials inside a directory bound back (~/.cargo/credentials.toml) stay hidden.
	for _, p := range b.deniedPaths() {
		if !visibleInBwrap(p, b.homes, pathEnv) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			args = append(args, "--tmpfs", p)
		} else if err == nil {
			args = append(args, "--ro-bind", "/dev/null", p)
		}
	}
	args = append(args, "--bind", ws.Dir(), ws.Dir())
	if !ws.Network {
		args = append(args, "--unshare-net")
	}
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
	dir := cmd.Dir
	if dir == "" {
		dir = ws.Dir()
	}
	args = append(args, "--chdir", dir, "--")
	// bwrap 0.8 has no --argv0: the program's path is its argv[0].
	return append(append(args, cmd.Path), cmd.Args[1:]...)
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

// visibleInBwrap reports whether a credential path would be seen through the mounts: it
// is outside the masked homes, or inside a toolchain directory bound back.
func visibleInBwrap(p string, homes []string, pathEnv string) bool {
	for _, home := range homes {
		if !within(p, home) {
			continue
		}
		for _, keep := range toolchainDirs(home, pathEnv) {
			if within(p, keep) {
				return true
			}
		}
		return false
	}
	return true
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- { // exec.Cmd uses the last duplicate
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

func probeBwrap(ctx context.Context) (tools.CommandWrapper, string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, "", fmt.Errorf("bwrap is not installed (Debian and Ubuntu package: bubblewrap): %w", err)
	}
	b := &bwrapSandbox{launcher: newLauncher(), bwrap: path}
	if err := selfTest(ctx, b); err != nil {
		return nil, "", err
	}
	reason := fmt.Sprintf("sandbox bwrap (%s): read-only system, writable workspace, private /tmp and home, "+
		"credentials hidden, no network unless the task sets network: true, own PID namespace, no capabilities; %s",
		path, b.describeLimits())
	return b, reason, nil
}
