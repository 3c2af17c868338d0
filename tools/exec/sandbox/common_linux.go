package sandbox

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"
)

// launcher is what bwrap and landlock share: the homes whose credentials are hidden and
// the pids cgroup that contains fork bombs when running as root.
type launcher struct {
	// cgroup is nil when no pids cgroup is writable.
	cgroup *cgroups
	// homes are the home directories whose credentials are hidden.
	homes []string
	// helpers maps each helper-launched *exec.Cmd to its helperRun, for Release.
	helpers sync.Map
	// views caches a *view per PATH.
	views sync.Map
	// poolMu guards the making of a workspace's cgroup pool (see poolOf).
	poolMu sync.Mutex
}

func newLauncher() *launcher {
	l := &launcher{homes: homeDirs()}
	if cg, err := findCgroups(); err == nil {
		l.cgroup = cg // else RLIMIT_NPROC, PID namespace and timeout only
	}
	return l
}

// ProtectsCache is true: both sandboxes show the shared build cache read-only and the
// workspace's layer over it writable (see tools.Workspace.CacheHome).
func (l *launcher) ProtectsCache() bool { return true }

// describeLimits says which limits apply, for Probe's reason.
func (l *launcher) describeLimits() string {
	d := DefaultLimits
	per := "per process"
	if l.memoryScope() == MemoryPerCommand {
		per = "per command"
	}
	return fmt.Sprintf("default limits %d s CPU, %d MiB memory %s, %d MiB files, %d processes",
		d.CPUSeconds, d.MemoryMB, per, d.FileSizeMB, d.Processes)
}

// limitGaps are the launcher's: memory per process without a memory cgroup, no process
// cap as root without a pids cgroup.
func (l *launcher) limitGaps() []string {
	var g []string
	if l.memoryScope() != MemoryPerCommand {
		g = append(g, "memory_mb per process, not per command (no memory cgroup)")
	}
	if l.cgroup == nil && os.Geteuid() == 0 {
		g = append(g, "no process limit (root without a pids cgroup)")
	}
	return g
}

// describeGaps ends Probe's reason: what the mode lacks here, for commands without network.
func describeGaps(g []string) string {
	if len(g) == 0 {
		return "no known gaps"
	}
	return "GAPS: " + strings.Join(g, "; ")
}

// memoryScope says whether memory_mb caps each process or the command as a whole.
func (l *launcher) memoryScope() string {
	if l.cgroup != nil && l.cgroup.memory != "" {
		return MemoryPerCommand
	}
	return MemoryPerProcess
}

// applyLimits lowers the resource limits of process pid (0: this process), see
// DefaultLimits.
func applyLimits(pid int, l tools.Limits) error {
	return confine.ApplyLimits(pid, confine.Limits(EffectiveLimits(l)))
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
func within(p, dir string) bool { return confine.Within(p, dir) }

// envValue returns the value of name in env, the last one winning as in exec.Cmd.
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}
