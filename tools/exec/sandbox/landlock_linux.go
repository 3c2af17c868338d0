package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

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
	if err := l.wrap(cmd, ws, cfg, target); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	return nil
}

// devices are the device files every program may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// restrict applies r to the helper, and so to the program it executes next. Landlock only
// grants, so "everything but the credentials" is spelled as grants on every sibling along
// the way down to each denied path.
func restrict(r *landlockRules) error {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("the kernel does not support Landlock (ABI %d): %v", abi, err)
	}
	cfg := landlock.V11
	cfg.HandledAccessNet = 0
	if !r.Network {
		// connect, not bind: a test may listen, but nothing can reach out. UDP needs ABI 10.
		cfg.HandledAccessNet = landlock.AccessNetSet(llsys.AccessNetConnectTCP | llsys.AccessNetConnectSendUDP)
	}
	// BestEffort drops what the kernel's ABI lacks; a Refer grant on ABI 1 would make it
	// drop everything, hence WithRefer only from ABI 2.
	cfg = cfg.BestEffort()

	rules := readRules(r.Deny)
	write := landlock.RWDirs(r.Write...)
	if abi >= 2 {
		write = write.WithRefer() // rename and link across directories (git, mv)
	}
	rules = append(rules, write, landlock.RWFiles(devices...).IgnoreIfMissing())
	return cfg.Restrict(rules...)
}

// readRules grants reading and executing everything except the denied paths. Directories
// on the way to a denied path only get ReadDir (listing), which Landlock inherits
// downwards: a denied directory can be listed, not read.
func readRules(deny []string) []landlock.Rule {
	var dirs, files, listOnly []string
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
				// A rule on a link applies to its target: one leading to or into a denied
				// path, or to a directory holding one, is left out.
				target, err := filepath.EvalSymlinks(p)
				if err != nil || isDenied(target, deny) || holdsAny(target, deny) {
					continue
				}
			}
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			if fi.IsDir() {
				walk(p)
			} else if !isDenied(p, deny) {
				files = append(files, p)
			}
		}
	}
	walk("/")
	var rules []landlock.Rule
	if len(listOnly) > 0 {
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(llsys.AccessFSReadDir), listOnly...))
	}
	if len(dirs) > 0 {
		rules = append(rules, landlock.RODirs(dirs...))
	}
	if len(files) > 0 {
		rules = append(rules, landlock.ROFiles(files...))
	}
	return rules
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
	if err := selfTest(ctx, l); err != nil {
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
