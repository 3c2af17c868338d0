package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"
)

// systemDirs are what every sandboxed command sees of the machine, read-only: the system's
// programs, libraries and configuration. Nothing else is there (no /home, /root, /srv,
// /var, /run, /mnt, /media, the task's directory, the repository, --out or other
// workspaces), except the toolchain directories on PATH (see view).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store"}

// systemSecrets are paths inside systemDirs that stay hidden; globs allowed.
var systemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
	"/etc/ssl/private", "/etc/ssh/ssh_host_*key", "/etc/sudoers", "/etc/sudoers.d",
	"/etc/credstore", "/etc/credstore.encrypted",
}

// view is what a sandboxed command may read outside its workspace for one PATH, computed
// once (a per-command walk of /etc would cost every step) and checked before each command
// for credentials that appeared or went since (see stale). The system's own secrets
// (systemSecrets) are taken as they were when the view was made: packages put them there,
// not a run.
type view struct {
	// system are the systemDirs that exist.
	system []string
	// toolchains are the directories of PATH entries outside systemDirs: the entry itself,
	// or for one in a home directory its top-level directory (~/.cargo, ~/go, ~/.pyenv),
	// plus ~/.rustup, which cargo's proxies need.
	toolchains []string
	// hidden are the secrets inside system and toolchains that exist, as given and with
	// symlinks resolved: credential paths of the homes, systemSecrets.
	hidden []string
	// read and list are the Landlock grants for system and toolchains minus hidden.
	read, list []string
	// mounts are bwrap's options for system and, after the homes' tmpfs, mask: the
	// toolchains bound back and the hidden paths masked (see bwrapSandbox.args).
	mounts, mask []string
	// watch are the homes' credential paths that would be visible if they existed and
	// the hidden paths, and present says which existed when the view was made.
	watch   []string
	present []bool
}

// view returns the view for a command whose PATH is pathEnv, made anew when a credential
// path appeared or went since the last (see stale).
func (l *launcher) view(pathEnv string) *view {
	if v, ok := l.views.Load(pathEnv); ok && !v.(*view).stale() {
		return v.(*view)
	}
	v := l.newView(pathEnv)
	l.views.Store(pathEnv, v)
	return v
}

// stale reports whether a credential path the view would show has appeared, or a path it
// hides has gone (bwrap could not mask it), since it was made: a Lstat per path (eight
// as root with a ~/.cargo on PATH), where making the view anew stats every credential
// path of every home and globs /etc.
func (v *view) stale() bool {
	for i, p := range v.watch {
		if _, err := os.Lstat(p); (err == nil) != v.present[i] {
			return true
		}
	}
	return false
}

func (l *launcher) newView(pathEnv string) *view {
	v := &view{}
	for _, d := range systemDirs {
		if _, err := os.Lstat(d); err == nil {
			v.system = append(v.system, d)
		}
	}
	for _, home := range l.homes {
		v.toolchains = appendNew(v.toolchains, toolchainDirs(home, pathEnv)...)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		dir = filepath.Clean(dir)
		if !filepath.IsAbs(dir) || dir == "/" || inAny(dir, v.system) || inAny(dir, l.homes) {
			continue
		}
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			v.toolchains = appendNew(v.toolchains, dir)
		}
	}
	visible := append(append([]string{}, v.system...), v.toolchains...)
	for _, p := range append(l.deniedPaths(), existing(systemSecrets)...) {
		if inAny(p, visible) {
			v.hidden = appendNew(v.hidden, p)
		}
	}
	// Landlock needs a grant per sibling of a hidden path (a grant per entry of /etc for
	// /etc/shadow: milliseconds per command). A system secret that the command's user
	// could not read anyway, capabilities dropped (/etc/shadow for anyone but root), needs
	// none; bwrap masks them all, which costs nothing.
	var llHidden []string
	for _, p := range v.hidden {
		if !inAny(p, v.system) || readableWithoutCaps(p) {
			llHidden = append(llHidden, p)
		}
	}
	v.read, v.list = confine.Readable(visible, llHidden)
	for _, home := range l.homes {
		for _, rel := range credentialPaths {
			if p := filepath.Join(home, rel); inAny(p, visible) {
				v.watch = appendNew(v.watch, p)
			}
		}
	}
	v.watch = appendNew(v.watch, v.hidden...)
	for _, p := range v.watch {
		_, err := os.Lstat(p)
		v.present = append(v.present, err == nil)
	}
	v.mounts, v.mask = bwrapMounts(v)
	return v
}

// bwrapMounts returns bwrap's options for v's system directories, and for its toolchains
// and hidden paths (which go after the homes' tmpfs, see bwrapSandbox.args).
func bwrapMounts(v *view) (mounts, mask []string) {
	for _, d := range v.system {
		if target, err := os.Readlink(d); err == nil {
			mounts = append(mounts, "--symlink", target, d) // merged /usr: /bin -> usr/bin
		} else {
			mounts = append(mounts, "--ro-bind", d, d)
		}
	}
	for _, d := range v.toolchains {
		mask = append(mask, "--ro-bind", d, d)
	}
	// Credentials inside a directory bound back (~/.cargo/credentials.toml) stay hidden.
	for _, p := range v.hidden {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			mask = append(mask, "--tmpfs", p)
		} else if err == nil {
			mask = append(mask, "--ro-bind", "/dev/null", p)
		}
	}
	return mounts, mask
}

// existing expands the globs and returns the paths that exist, with symlinks resolved too.
func existing(patterns []string) []string {
	var out []string
	for _, pat := range patterns {
		matches, _ := filepath.Glob(pat)
		for _, p := range matches {
			out = appendNew(out, p)
			if real, err := filepath.EvalSymlinks(p); err == nil {
				out = appendNew(out, real)
			}
		}
	}
	return out
}

// inAny reports whether p lies in one of dirs.
func inAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

func appendNew(list []string, ps ...string) []string {
	for _, p := range ps {
		seen := false
		for _, q := range list {
			seen = seen || q == p
		}
		if !seen {
			list = append(list, p)
		}
	}
	return list
}

// resolvConfPath is /etc/resolv.conf (a test's symlink in tests).
var resolvConfPath = "/etc/resolv.conf"

// resolvConf is the file behind /etc/resolv.conf when it lies outside the system
// directories (systemd-resolved's, under /run), which a command with network needs.
func resolvConf() string {
	real, err := filepath.EvalSymlinks(resolvConfPath)
	if err != nil || inAny(real, systemDirs) || strings.HasPrefix(real, "/proc") {
		return ""
	}
	return real
}

// readableWithoutCaps reports whether this process's user could read or list p by its
// mode bits alone, as a sandboxed command (which has no capabilities) would.
func readableWithoutCaps(p string) bool {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return false
	}
	uid := uint32(os.Geteuid())
	switch {
	case st.Uid == uid:
		return st.Mode&0o400 != 0
	case inGroup(st.Gid):
		return st.Mode&0o040 != 0
	}
	return st.Mode&0o004 != 0
}

func inGroup(gid uint32) bool {
	if uint32(os.Getegid()) == gid {
		return true
	}
	groups, _ := os.Getgroups()
	for _, g := range groups {
		if uint32(g) == gid {
			return true
		}
	}
	return false
}
