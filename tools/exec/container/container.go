package container

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentrunner/runner/tools"
)

// Config describes the container of one scenario.
type Config struct {
	// Image is the image to run (built by Engine.Build or named by the task).
	Image string
	// Workspace is the host directory mounted at Workdir.
	Workspace string
	// Workdir is where the workspace appears inside the container (default /app).
	Workdir string
	// Network gives the container the engine's default network; false is --network none.
	Network bool
	// CPUs and MemoryMB limit the container (0: no limit); User runs its processes.
	CPUs     float64
	MemoryMB int
	User     string
	// Pids caps the container's processes (--pids-limit; 0: DefaultPids), so a fork bomb
	// cannot exhaust the host's.
	Pids int
	// RunID labels the container (LabelRun); Scenario labels it runner.scenario.
	RunID    string
	Scenario string
	// Mounts are host files or directories bound read-only into the container besides the
	// workspace (an external agent's way to runner's endpoint); they are decided at start.
	Mounts []Mount
}

// Mount binds the host path Host read-only at Path inside the container.
type Mount struct {
	Host, Path string
}

// mountArg is m as -v's value: read-only, and on podman nosuid,nodev as the workspace's.
// A path holding a colon or comma cannot be said in -v's syntax.
func (e *Engine) mountArg(m Mount) (string, error) {
	if strings.ContainsAny(m.Host, ":,") || strings.ContainsAny(m.Path, ":,") || !path.IsAbs(m.Path) {
		return "", fmt.Errorf("cannot bind %s at %s into the container: a colon or comma in the path, or a relative target", m.Host, m.Path)
	}
	opts := ":ro"
	if e.Flavor == "podman" {
		opts += ",nosuid,nodev"
	}
	return m.Host + ":" + m.Path + opts, nil
}

// DefaultWorkdir is where the workspace is mounted when a task names no workdir.
const DefaultWorkdir = "/app"

// DefaultPids is the container's process limit when the task sets none: room for parallel
// builds, not for a fork bomb.
const DefaultPids = 4096

// Container is one running container: a tools.CommandWrapper whose commands run inside it.
type Container struct {
	e   *Engine
	id  string
	cfg Config
}

// idle is PID 1: a loop that never exits on its own and survives each command's sweep
// (which spares PID 1 and its sleep) and KillAll's `kill -9 -1` (which spares PID 1; the
// sleep it restarts is expendable).
const idle = "while :; do " + idleSleep + "; done"

// idleSleep is idle's child, the one process PID 1 starts itself: sweep spares it by its
// command line, which it compares with this.
const idleSleep = "sleep 86400"

// NewRunID returns a fresh random run id for LabelRun.
func NewRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Start creates and starts the container, detached, with the workspace mounted at Workdir.
// Its PID 1 is an idle shell loop (the image's entrypoint and command are replaced), so
// the container lives until Remove, and commands come in through Wrap.
func (e *Engine) Start(ctx context.Context, cfg Config) (*Container, error) {
	if cfg.Workdir == "" {
		cfg.Workdir = DefaultWorkdir
	}
	// A name of our own finds the container again when the start is cut short (a
	// cancelled client may leave it created).
	name := "runner-" + NewRunID()
	args := []string{"run", "-d", "--name", name, "--label", LabelRun + "=" + cfg.RunID, "--label", "runner.scenario=" + cfg.Scenario}
	if !cfg.Network {
		args = append(args, "--network", "none")
	}
	if cfg.CPUs > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(cfg.CPUs, 'f', -1, 64))
	}
	if cfg.MemoryMB > 0 {
		args = append(args, "--memory", fmt.Sprintf("%dm", cfg.MemoryMB))
	}
	if cfg.User != "" {
		args = append(args, "--user", cfg.User)
	}
	if cfg.Pids <= 0 {
		cfg.Pids = DefaultPids
	}
	args = append(args, "--pids-limit", strconv.Itoa(cfg.Pids))
	mount := cfg.Workspace + ":" + cfg.Workdir
	if e.Flavor == "podman" {
		// The agent is root in most images: no setuid-root file or device node it makes
		// in the workspace works on the host. (Docker's -v has no such options.)
		mount += ":nosuid,nodev"
	}
	args = append(args, "-v", mount)
	for _, m := range cfg.Mounts {
		arg, err := e.mountArg(m)
		if err != nil {
			return nil, err
		}
		args = append(args, "-v", arg)
	}
	args = append(args, "-w", cfg.Workdir,
		"--entrypoint", "/bin/sh", cfg.Image, "-c", idle)
	out, err := e.command(ctx, nil, args...)
	id := strings.TrimSpace(out)
	if err != nil {
		// Created but not started, or cut short: do not leave it behind.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_, _ = e.command(rctx, nil, append(e.rmArgs(), name)...)
		return nil, fmt.Errorf("start %s: %w", cfg.Image, err)
	}
	if i := strings.LastIndexByte(id, '\n'); i >= 0 {
		id = id[i+1:] // a pull may print progress before the id
	}
	c := &Container{e: e, id: id, cfg: cfg}
	if cfg.User != "" && cfg.User != "root" && cfg.User != "0" {
		// The workspace was made by the runner; the task's user must be able to write it.
		if _, err := e.command(ctx, nil, "exec", "-u", "0", id, "chown", "-R", cfg.User, cfg.Workdir); err != nil {
			_ = c.Remove(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("give %s to user %s: %w", cfg.Workdir, cfg.User, err)
		}
	}
	return c, nil
}

// ID is the engine's container id.
func (c *Container) ID() string { return c.id }

// RunID is the run id the container is labelled with (LabelRun).
func (c *Container) RunID() string { return c.cfg.RunID }

// Workdir is where the workspace is mounted inside the container.
func (c *Container) Workdir() string { return c.cfg.Workdir }

// Name identifies the mechanism, as a sandbox's name does ("podman").
func (c *Container) Name() string { return c.e.Name() }

// Remote tells tools/exec that programs are looked up inside the container, not on the host.
func (c *Container) Remote() bool { return true }

// stdinFD is how run_code hands its script over (an inherited descriptor, /dev/fd/3); an
// exec'd process inherits no descriptors, so the script goes through stdin instead.
const stdinFD = "/dev/fd/3"

// sweep is a shell function that ends every process the container's PID 1 adopted: what
// a command left behind (background jobs, a process in a session of its own) is
// reparented to PID 1 when its parent exits. A process whose ancestors lead to an exec's
// own root instead (its parent outside the container: an MCP server, an external agent,
// another command still running) is not a leftover and lives on, with its children.
// Passes repeat until one finds nothing (a leftover forking meanwhile), at most 50. PID
// 1's own child (idleSleep) is spared; a leftover that runs as `sleep 86400`
// lives until the agent stage ends, when KillAll ends everything. Builtins only: it runs
// in any image with a POSIX sh and /proc.
const sweep = `sweep() {
	n=0
	while [ $n -lt 50 ]; do
		found=
		for d in /proc/[0-9]*; do
			p=${d#/proc/}; q=$p; up=0; parent=
			[ "$p" = 1 ] && continue
			while [ "$q" != 0 ] && [ "$q" != 1 ] && [ $up -lt 100 ]; do
				s=; read -r s < /proc/$q/stat 2>/dev/null
				[ -n "$s" ] || { q=0; break; }
				s=${s##*") "}; set -- $s; q=$2; up=$((up+1))
				[ -n "$parent" ] || parent=$q
			done
			[ "$q" = 1 ] || continue
			if [ "$parent" = 1 ] && [ "$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)" = "` + idleSleep + ` " ]; then
				continue
			fi
			kill -9 "$p" 2>/dev/null && found=1
		done
		[ -n "$found" ] || return 0
		n=$((n+1))
	done
}
`

// reaper runs the command, then ends what it left in the container (sweep): background
// jobs end with the command, as the host sandbox's process-group kill ends them, and no
// exec'd process outlives its call; other execs' processes live on. Its $0 marks the exec
// (execMark), so that Release can find it.
const reaper = sweep + `"$@"; rc=$?; sweep; exit $rc`

// endExec ends the exec whose $0 is $1 (a client runner killed left it running in the
// container): its root, then, once that is gone, what it leaves (sweep).
const endExec = sweep + `for d in /proc/[0-9]*; do
	[ "${d#/proc/}" != $$ ] || continue
	tr '\0' '\n' < $d/cmdline 2>/dev/null | grep -qxF -- "$1" || continue
	kill -9 ${d#/proc/} 2>/dev/null
	i=0; while [ -d $d ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
done
sweep`

// execMark prefixes the $0 of each exec's reaper: execMark + a random id.
const execMark = "runner-exec-"

// Wrap rewrites cmd into `<engine> exec` of the same program, arguments, working directory
// (translated to Workdir) and environment inside the container. PATH, HOME and
// XDG_CACHE_HOME of the host are dropped unless the task sets them: the image's own apply.
// The engine client itself gets the runner's environment (CONTAINERS_CONF, DOCKER_HOST);
// none of it enters the container.
func (c *Container) Wrap(cmd *exec.Cmd, ws *tools.Workspace) error {
	dir := c.inside(ws, cmd.Dir)
	args := []string{"exec", "-w", dir}
	clientEnv := os.Environ()
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		if _, set := ws.Env[k]; !set && (k == "PATH" || k == "HOME" || k == "XDG_CACHE_HOME") {
			continue
		}
		v = c.insideValue(ws, v)
		if v == "" || clientReads(k) {
			args = append(args, "-e", k+"="+v)
			continue
		}
		// `-e NAME` takes the value from the client's environment: a command line is
		// readable by every process on the host (/proc/PID/cmdline), an environment only by
		// the processes that may trace the client, so task secrets and the endpoint's token
		// stay off the host's process list.
		args = append(args, "-e", k)
		clientEnv = append(clientEnv, k+"="+v)
	}
	argv := append([]string(nil), cmd.Args...)
	if len(cmd.ExtraFiles) > 0 {
		for i, a := range argv {
			if a == stdinFD {
				argv[i] = "/dev/stdin"
			}
		}
		cmd.Stdin = cmd.ExtraFiles[0]
		cmd.ExtraFiles = nil
	}
	if cmd.Stdin != nil {
		args = append(args, "-i") // else the engine hands the program no stdin at all
	}
	args = append(args, c.id, "/bin/sh", "-c", reaper, execMark+NewRunID())
	args = append(args, argv...)
	cmd.Path = c.e.Path
	cmd.Args = append([]string{c.e.Path}, args...)
	cmd.Env = clientEnv // a later NAME=VALUE wins (os/exec keeps the last)
	return nil
}

// clientReads reports whether the engine client itself reads the variable name (the
// engine's settings and the ones a Go program or the C library heed): its value stays on
// the command line rather than change how the client runs. Such names are settings, not
// secrets.
func clientReads(name string) bool {
	switch strings.ToUpper(name) {
	case "PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "DBUS_SESSION_BUS_ADDRESS",
		"NOTIFY_SOCKET", "REGISTRY_AUTH_FILE", "GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK":
		return true
	}
	for _, prefix := range []string{"XDG_", "CONTAINERS_", "CONTAINER_", "_CONTAINERS_", "DOCKER_", "PODMAN_", "BUILDAH_", "STORAGE_", "LD_", "LC_", "SSL_", "SYSTEMD_"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// inside translates a host path under the workspace to the container's view of it.
func (c *Container) inside(ws *tools.Workspace, hostPath string) string {
	if hostPath == "" {
		return c.cfg.Workdir
	}
	rel, err := filepath.Rel(ws.Dir(), hostPath)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return c.cfg.Workdir
	}
	return path.Join(c.cfg.Workdir, filepath.ToSlash(rel))
}

// insideValue rewrites the workspace's host path inside an environment value (run_code's
// PYTHONPATH).
func (c *Container) insideValue(ws *tools.Workspace, v string) string {
	return strings.ReplaceAll(v, ws.Dir(), c.cfg.Workdir)
}

// Release runs after a wrapped command's client has exited. When the client was killed
// (timeout, cancellation, a server stopped) the exec'd process lives on inside the
// container, so it is ended there with what it started (endExec); other execs' processes
// (the task's MCP servers) live on. Without its mark, every process but PID 1 is ended.
func (c *Container) Release(cmd *exec.Cmd) {
	if st := cmd.ProcessState; st != nil && st.Exited() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range cmd.Args {
		if strings.HasPrefix(a, execMark) {
			_, _ = c.e.command(ctx, nil, "exec", "-u", "0", c.id, "/bin/sh", "-c", endExec, "runner-end", a)
			return
		}
	}
	_ = c.KillAll(ctx)
}

// KillAll kills every process in the container except PID 1.
func (c *Container) KillAll(ctx context.Context) error {
	_, err := c.e.command(ctx, nil, "exec", "-u", "0", c.id, "/bin/sh", "-c", "kill -9 -1 2>/dev/null; exit 0")
	return err
}

// CopyIn replaces the container's directory dst with a copy of the host directory src,
// as root. What was at dst is removed first: the agent may have planted files there (a
// conftest.py the tests would load) or a symlink. The engine resolves dst inside the
// container's root, so a link cannot send the copy to the host.
func (c *Container) CopyIn(ctx context.Context, src, dst string) error {
	if _, err := c.e.command(ctx, nil, "exec", "-u", "0", c.id, "/bin/sh", "-c", `rm -rf "$1" && mkdir -p "$1"`, "sh", dst); err != nil {
		return fmt.Errorf("prepare %s: %w", dst, err)
	}
	if _, err := c.e.command(ctx, nil, "cp", src+"/.", c.id+":"+dst); err != nil {
		return fmt.Errorf("copy into %s: %w", dst, err)
	}
	return nil
}

// What NotRegularError.Found names.
const (
	FoundFIFO      = "fifo"
	FoundSocket    = "socket"
	FoundDevice    = "device"
	FoundSymlink   = "symlink"
	FoundDirectory = "directory"
	FoundSpecial   = "special"
	FoundTooLarge  = "too large"
)

// NotRegularError is a file ReadFile refused: what is at Path inside the container is not
// a regular file (Found says what it is), or holds more than Limit bytes.
type NotRegularError struct {
	Path, Found string
	Limit       int64
}

func (e *NotRegularError) Error() string {
	if e.Found == FoundTooLarge {
		return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
	}
	return fmt.Sprintf("%s is a %s, not a regular file", e.Path, e.Found)
}

// readScript reads a regular file, never a link, FIFO, socket or device: a FIFO the
// tests (the agent's code) left would make head wait for a writer until the scenario's
// deadline. It names what it found on stdout with exit code notRegular.
const readScript = `f=$1
if [ -h "$f" ]; then echo ` + FoundSymlink + `
elif [ -p "$f" ]; then echo ` + FoundFIFO + `
elif [ -S "$f" ]; then echo ` + FoundSocket + `
elif [ -b "$f" ] || [ -c "$f" ]; then echo ` + FoundDevice + `
elif [ -d "$f" ]; then echo ` + FoundDirectory + `
elif [ -e "$f" ] && [ ! -f "$f" ]; then echo ` + FoundSpecial + `
else exec head -c "$2" -- "$f"
fi
exit 86`

// notRegular is readScript's exit code for a file it would not read.
const notRegular = 86

// ReadFile reads a regular file inside the container, as root: at most max bytes, a
// larger file or anything but a regular file is a *NotRegularError.
func (c *Container) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	out, err := c.e.command(ctx, nil, "exec", "-u", "0", c.id, "/bin/sh", "-c", readScript, "sh", name, strconv.FormatInt(max+1, 10))
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == notRegular {
		if found := strings.TrimSpace(out); found != "" && !strings.ContainsAny(found, "\n/") {
			return nil, &NotRegularError{Path: name, Found: found}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(out)) > max {
		return nil, &NotRegularError{Path: name, Found: FoundTooLarge, Limit: max}
	}
	return []byte(out), nil
}

// TempDir makes a new directory under /tmp inside the container, as root, with a name
// mktemp draws now, which any user may write (the task's user runs the tests).
func (c *Container) TempDir(ctx context.Context) (string, error) {
	out, err := c.e.command(ctx, nil, "exec", "-u", "0", c.id, "/bin/sh", "-c", `d=$(mktemp -d /tmp/runner-results.XXXXXXXXXX) && chmod 0777 "$d" && echo "$d"`)
	if err != nil {
		return "", fmt.Errorf("make a results directory: %w", err)
	}
	dir := strings.TrimSpace(out)
	if i := strings.LastIndexByte(dir, '\n'); i >= 0 {
		dir = dir[i+1:]
	}
	if !strings.HasPrefix(dir, "/tmp/runner-results.") {
		return "", fmt.Errorf("make a results directory: mktemp printed %q", dir)
	}
	return dir, nil
}

// Change is one path the container's filesystem gained, lost or changed since it
// started from its image, as `docker diff` / `podman diff` list them.
type Change struct {
	// Kind is A (added), C (changed) or D (deleted).
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// Diff lists what changed in the container's filesystem against its image: outside the
// mounted workspace, what the agent changed as root (a test runner replaced by exit 0).
func (c *Container) Diff(ctx context.Context) ([]Change, error) {
	out, err := c.e.command(ctx, nil, "diff", c.id)
	if err != nil {
		return nil, fmt.Errorf("diff %s: %w", c.id, err)
	}
	return c.withoutMounts(ParseDiff(out)), nil
}

// withoutMounts drops from changes the mount points the engine added for Config.Mounts
// (and the directories it made to hold them): not the agent's doing. Anything else under
// them, or a mount point changed or deleted, stays.
func (c *Container) withoutMounts(changes []Change) []Change {
	if len(c.cfg.Mounts) == 0 {
		return changes
	}
	made := func(p string) bool {
		for _, m := range c.cfg.Mounts {
			if m.Path == p || strings.HasPrefix(m.Path, p+"/") {
				return true
			}
		}
		return false
	}
	out := changes[:0:0]
	for _, ch := range changes {
		if ch.Kind == "A" && made(ch.Path) {
			continue
		}
		out = append(out, ch)
	}
	return out
}

// ParseDiff reads the engine's diff output: one "K /path" per line.
func ParseDiff(out string) []Change {
	var changes []Change
	for _, line := range strings.Split(out, "\n") {
		kind, p, ok := strings.Cut(strings.TrimRight(line, "\r"), " ")
		if !ok || len(kind) != 1 || !strings.HasPrefix(p, "/") {
			continue
		}
		changes = append(changes, Change{Kind: kind, Path: p})
	}
	return changes
}

// ImageID is the id of the image the container was created from, as the engine recorded
// it then: a tag may have moved since (a rebuild, another run's build), the id has not.
func (c *Container) ImageID(ctx context.Context) (string, error) {
	out, err := c.e.command(ctx, nil, "container", "inspect", "--format", "{{.Image}}", c.id)
	if err != nil {
		return "", fmt.Errorf("image of %s: %w", c.id, err)
	}
	id := strings.TrimSpace(out)
	if id == "" || strings.ContainsAny(id, " \n") {
		return "", fmt.Errorf("image of %s: the engine printed %q", c.id, out)
	}
	return id, nil
}

// Stop kills every process in the container, PID 1 with it, and leaves it stopped: no
// process started in it runs any more (one the agent left behind cannot touch the
// workspace), while its filesystem stays for Diff until Remove.
func (c *Container) Stop(ctx context.Context) error {
	// -t 0: PID 1 ignores SIGTERM (see rmArgs); SIGKILL follows at once.
	if _, err := c.e.command(ctx, nil, "stop", "-t", "0", c.id); err != nil {
		return fmt.Errorf("stop container %s: %w", c.id, err)
	}
	return nil
}

// Remove force-removes the container and everything in it. The workspace on the host
// stays (it is the runner's to delete).
func (c *Container) Remove(ctx context.Context) error {
	if _, err := c.e.command(ctx, nil, append(c.e.rmArgs(), c.id)...); err != nil {
		return fmt.Errorf("remove container %s: %w", c.id, err)
	}
	return nil
}

// RemoveFile deletes a file or directory inside the container, as root; one that is not
// there is fine.
func (c *Container) RemoveFile(ctx context.Context, name string) error {
	if _, err := c.e.command(ctx, nil, "exec", "-u", "0", c.id, "rm", "-rf", "--", name); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}
