package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/agentrunner/runner/tools"
)

// landlockSandbox runs commands through the helper, which applies Landlock rules.
type landlockSandbox struct {
	*launcher
	abi int
}

func (l *landlockSandbox) Name() string { return ModeLandlock }

// Wrap gives the command a private temp directory (TMPDIR, and XDG_CACHE_HOME below it,
// since the home directory is read-only) and has the helper confine it.
func (l *landlockSandbox) Wrap(cmd *exec.Cmd, ws *tools.Workspace) error {
	tmp, err := os.MkdirTemp("", "runner-sandbox-")
	if err != nil {
		return fmt.Errorf("create private temp dir: %w", err)
	}
	if cmd.Env == nil {
		cmd.Env = cmd.Environ()
	}
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	if envValue(cmd.Env, "XDG_CACHE_HOME") == "" {
		cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+filepath.Join(tmp, ".cache"))
	}
	cfg := helperConfig{
		Tmp: tmp,
		Landlock: &landlockRules{
			Write:   []string{ws.Dir(), tmp},
			Deny:    l.deniedPaths(),
			Network: ws.Network,
		},
	}
	target := append([]string{cmd.Path}, cmd.Args...)
	if err := l.wrapHelper(cmd, ws, cfg, target); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	return nil
}

// Release kills what is left of the command in its cgroup and removes its temp directory.
func (l *landlockSandbox) Release(cmd *exec.Cmd) { releaseHelper(cmd) }

// Access rights, as the kernel numbers them.
const (
	readRights  = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	writeRights = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile |
		llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock |
		llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSTruncate |
		llsys.AccessFSRefer // rename and link across directories (git, mv)
	// fileRights are those that apply to a file; a rule on a file may grant no others.
	fileRights = llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile |
		llsys.AccessFSTruncate | llsys.AccessFSIoctlDev
	deviceRights = llsys.AccessFSReadFile | llsys.AccessFSWriteFile | llsys.AccessFSTruncate
	// netDenied are the network rights restricted when the task has no network: connect,
	// not bind (a test may listen, but nothing can reach out).
	netDenied = llsys.AccessNetConnectTCP | llsys.AccessNetConnectSendUDP
)

// handledFor returns the rights a kernel with Landlock ABI abi can restrict: everything it
// knows, so that what is not granted is denied.
func handledFor(abi int) (fs, net, scoped uint64) {
	switch {
	case abi >= 9:
		fs = 1<<17 - 1 // + resolve unix sockets
	case abi >= 5:
		fs = 1<<16 - 1 // + ioctl on devices
	case abi >= 3:
		fs = 1<<15 - 1 // + truncate
	case abi >= 2:
		fs = 1<<14 - 1 // + refer
	default:
		fs = 1<<13 - 1
	}
	switch {
	case abi >= 10:
		net = 1<<4 - 1 // + UDP
	case abi >= 4:
		net = 1<<2 - 1 // TCP
	}
	if abi >= 6 {
		scoped = llsys.ScopeAbstractUnixSocket | llsys.ScopeSignal
	}
	return fs, net, scoped
}

// devices are the device files every program may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// restrictThread applies r to the calling thread, and so to the program it executes next.
// Landlock only grants, so "everything but the credentials" is spelled as grants on every
// sibling along the way down to each denied path.
func restrictThread(r *landlockRules) error {
	abi := landlockABI()
	if abi < 1 {
		return errors.New("the kernel does not support Landlock")
	}
	fsHandled, netHandled, scoped := handledFor(abi)
	if r.Network {
		netHandled = 0
	} else {
		netHandled &= netDenied
	}
	attr := llsys.RulesetAttr{HandledAccessFS: fsHandled, HandledAccessNet: netHandled, Scoped: scoped}
	ruleset, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("create ruleset: %w", err)
	}
	defer syscall.Close(ruleset)

	grant := func(path string, access uint64) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // vanished since it was listed: nothing to grant
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= fileRights
		}
		if access &= fsHandled; access == 0 {
			return nil
		}
		rule := llsys.PathBeneathAttr{ParentFd: fd, AllowedAccess: access}
		if err := llsys.LandlockAddPathBeneathRule(ruleset, &rule, 0); err != nil {
			return fmt.Errorf("grant %s: %w", path, err)
		}
		return nil
	}
	dirs, files, listOnly := readable(r.Deny)
	type grantSet struct {
		paths  []string
		access uint64
	}
	for _, g := range []grantSet{
		{listOnly, llsys.AccessFSReadDir},
		{append(dirs, files...), readRights},
		{r.Write, readRights | writeRights},
		{devices, deviceRights},
	} {
		for _, p := range g.paths {
			if err := grant(p, g.access); err != nil {
				return err
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := llsys.LandlockRestrictSelf(ruleset, 0); err != nil {
		return fmt.Errorf("restrict: %w", err)
	}
	return nil
}

// readable lists what to grant so that everything except the denied paths can be read:
// whole trees that hold no denied path (dirs), single files beside a denied path (files),
// and the directories on the way down to one (listOnly). Landlock inherits a grant
// downwards, so those only get ReadDir: a denied directory can be listed, not read.
func readable(deny []string) (dirs, files, listOnly []string) {
	var walk func(dir string)
	walk = func(dir string) {
		if !holdsAny(dir, deny) {
			dirs = append(dirs, dir)
			return
		}
		if isDenied(dir, deny) {
			return
		}
		listOnly = append(listOnly, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.Type()&os.ModeSymlink != 0 {
				// A grant on a link applies to its target: one leading to or into a denied
				// path, or to a directory holding one, is left out.
				target, err := filepath.EvalSymlinks(p)
				if err != nil || isDenied(target, deny) || holdsAny(target, deny) {
					continue
				}
			}
			fi, err := os.Stat(p)
			switch {
			case err != nil:
			case fi.IsDir():
				walk(p)
			case !isDenied(p, deny):
				files = append(files, p)
			}
		}
	}
	walk("/")
	return dirs, files, listOnly
}

// holdsAny reports whether a denied path is dir or lies below it.
func holdsAny(dir string, deny []string) bool {
	for _, d := range deny {
		if within(d, dir) {
			return true
		}
	}
	return false
}

// isDenied reports whether p is a denied path or lies below one.
func isDenied(p string, deny []string) bool {
	for _, d := range deny {
		if within(p, d) {
			return true
		}
	}
	return false
}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return abi
}

func probeLandlock(ctx context.Context) (tools.CommandWrapper, string, error) {
	abi := landlockABI()
	if abi < 1 {
		return nil, "", fmt.Errorf("the kernel does not support Landlock (Linux 5.13+ with landlock in the lsm= boot list)")
	}
	l := &landlockSandbox{launcher: newLauncher(), abi: abi}
	if err := selfTest(ctx, l, " (the binary's main must call sandbox.RunHelperIfRequested first)"); err != nil {
		return nil, "", err
	}
	network := "TCP connections blocked unless the task sets network: true"
	if abi < 4 {
		network = fmt.Sprintf("WARNING: Landlock ABI %d cannot block the network (needs 4, Linux 6.7)", abi)
	}
	reason := fmt.Sprintf("sandbox landlock (ABI %d): writes only in the workspace and a private temp dir, "+
		"credential directories unreadable, %s; %s", abi, network, l.describeLimits())
	return l, reason, nil
}
