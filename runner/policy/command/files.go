package command

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// systemDirs may not be written to (unless the workspace itself lies below one, as with
// /usr/src/app in a container).
var systemDirs = []string{"/etc", "/usr", "/boot", "/dev", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys", "/proc"}

func (c *checker) systemPath(abs string) bool {
	if c.inside(abs) || harmlessDevice(abs) {
		return false
	}
	for _, d := range systemDirs {
		if under(abs, d) {
			return true
		}
	}
	return false
}

// writeRedirect reports whether a redirection writes to its target.
func writeRedirect(r redir) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		return true
	case syntax.DplOut:
		// >&2 duplicates a descriptor; >&file (bash) writes to a file.
		v := r.Target.Value
		return v != "-" && strings.Trim(v, "0123456789") != "" && !strings.HasSuffix(v, "-")
	}
	return false
}

// options that take a value, per writing command, so the value is not taken for a path.
var writerValueOpts = map[string]string{
	"cp": "St", "mv": "St", "ln": "St", "install": "gmoSt", "touch": "drt", "truncate": "rs",
	"mkdir": "m", "rsync": "eBfT", "sed": "efl", "tee": "", "curl": "", "wget": "",
}

// positionals splits arguments into positional words and options with their values.
func positionals(args []arg, valueOpts string) (pos []arg, opts map[string]*arg) {
	opts = map[string]*arg{}
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			return append(pos, args[i+1:]...), opts
		case strings.HasPrefix(v, "--") && !args[i].UnknownStart:
			name, val, ok := strings.Cut(v, "=")
			if ok {
				opts[name] = &arg{Value: val}
			} else {
				opts[name] = nil
			}
		case strings.HasPrefix(v, "-") && len(v) > 1 && !args[i].UnknownStart:
			for k := 1; k < len(v); k++ {
				o := "-" + v[k:k+1]
				if strings.IndexByte(valueOpts, v[k]) < 0 {
					opts[o] = nil
					continue
				}
				if k < len(v)-1 {
					opts[o] = &arg{Value: v[k+1:]}
				} else if i+1 < len(args) {
					i++
					opts[o] = &args[i]
				}
				break
			}
		default:
			pos = append(pos, args[i])
		}
	}
	return pos, opts
}

// writeTargets returns the paths a command writes to (not counting redirections).
func writeTargets(cmd *simpleCmd) []arg {
	name := cmd.Name()
	if len(cmd.Args) == 0 {
		return nil
	}
	targets := writeTargetRules[name]
	if targets == nil {
		return nil
	}
	args := cmd.Args[1:]
	pos, opts := positionals(args, writerValueOpts[name])
	return targets(writerArgs{name: name, args: args, pos: pos, opts: opts})
}

// writerArgs is a writing command's arguments, split by positionals.
type writerArgs struct {
	name      string
	args, pos []arg
	opts      map[string]*arg
}

// opt returns the value of the first of names given with one, nil when none is.
func (w writerArgs) opt(names ...string) *arg {
	for _, n := range names {
		if v, ok := w.opts[n]; ok && v != nil {
			return v
		}
	}
	return nil
}

// has reports whether any of the options names is given.
func (w writerArgs) has(names ...string) bool {
	for _, n := range names {
		if _, ok := w.opts[n]; ok {
			return true
		}
	}
	return false
}

// writeTargetRules returns, per writing command, the paths it writes to.
var writeTargetRules = map[string]func(writerArgs) []arg{
	"cp": copyTargets, "mv": copyTargets, "ln": copyTargets, "install": copyTargets,
	"rsync": copyTargets, "scp": copyTargets,
	"tee": operandTargets, "touch": operandTargets, "truncate": operandTargets,
	"mkdir": operandTargets, "rmdir": operandTargets, "rm": operandTargets,
	"unlink": operandTargets, "shred": operandTargets, "mknod": operandTargets,
	"mkfifo": operandTargets,
	"chmod":  attributeTargets, "chown": attributeTargets, "chgrp": attributeTargets,
	"chattr": attributeTargets, "setfacl": attributeTargets,
	"sed": sedTargets, "dd": ddTargets, "curl": curlTargets, "wget": wgetTargets,
}

// copyTargets: the -t directory, every operand of install -d, else the last operand
// (ln's only one too).
func copyTargets(w writerArgs) []arg {
	if t := w.opt("-t", "--target-directory"); t != nil {
		return []arg{*t}
	}
	if w.name == "install" && w.has("-d", "--directory") {
		return w.pos
	}
	if len(w.pos) >= 2 || (w.name == "ln" && len(w.pos) == 1) {
		return w.pos[len(w.pos)-1:]
	}
	return nil
}

// operandTargets: every operand (tee, touch, rm, mkdir...).
func operandTargets(w writerArgs) []arg { return w.pos }

// attributeTargets: the operands after the mode or owner (chmod MODE FILE...), all of
// them with --reference.
func attributeTargets(w writerArgs) []arg {
	if w.has("--reference") || len(w.pos) == 0 {
		return w.pos
	}
	return w.pos[1:]
}

// sedTargets: with -i, the files after the script (all operands when -e or -f gives it).
func sedTargets(w writerArgs) []arg {
	if !w.has("-i", "--in-place") && !hasPrefixOpt(w.args, "-i") {
		return nil
	}
	if w.has("-e", "-f", "--expression", "--file") || len(w.pos) == 0 {
		return w.pos
	}
	return w.pos[1:]
}

// ddTargets: the first of=FILE.
func ddTargets(w writerArgs) []arg {
	for _, a := range w.args {
		if v, ok := strings.CutPrefix(a.Value, "of="); ok {
			return []arg{{Value: v, UnknownStart: a.UnknownStart}}
		}
	}
	return nil
}

// curlTargets: every -o FILE, --output FILE or --output=FILE, -o ending a cluster too
// (curl -fsSLo FILE).
func curlTargets(w writerArgs) []arg {
	var out []arg
	for i, a := range w.args {
		if (a.Value == "-o" || a.Value == "--output" || shortCluster(a.Value, 'o')) && i+1 < len(w.args) {
			out = append(out, w.args[i+1])
		} else if v, ok := strings.CutPrefix(a.Value, "--output="); ok {
			out = append(out, arg{Value: v})
		}
	}
	return out
}

// wgetTargets: every -O/--output-document file and -P/--directory-prefix directory.
func wgetTargets(w writerArgs) []arg {
	var out []arg
	for i, a := range w.args {
		if (a.Value == "-O" || a.Value == "--output-document" || a.Value == "-P" || a.Value == "--directory-prefix") && i+1 < len(w.args) {
			out = append(out, w.args[i+1])
		} else if v, ok := strings.CutPrefix(a.Value, "--output-document="); ok {
			out = append(out, arg{Value: v})
		}
	}
	return out
}

// shortCluster reports whether v is a cluster of short options that ends in the one
// taking a value (curl -fsSLo FILE).
func shortCluster(v string, last byte) bool {
	if len(v) < 3 || v[0] != '-' || v[1] == '-' || v[len(v)-1] != last {
		return false
	}
	for _, r := range v[1:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// hasPrefixOpt reports whether an option such as sed's -i.bak is present.
func hasPrefixOpt(args []arg, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a.Value, prefix) && !strings.HasPrefix(a.Value, "--") {
			return true
		}
	}
	return false
}

func checkSystemWrite(c *checker, cmd *simpleCmd) string {
	for _, r := range cmd.Redirs {
		if !writeRedirect(r) {
			continue
		}
		if abs, ok := c.resolve(r.Target, cmd.Cwd); ok && c.systemPath(abs) {
			return fmt.Sprintf("redirects output into %s", abs)
		}
	}
	for _, t := range writeTargets(cmd) {
		if abs, ok := c.resolve(t, cmd.Cwd); ok && c.systemPath(abs) {
			return fmt.Sprintf("writes to %s", abs)
		}
	}
	return ""
}

// credentialPaths are relative to a home directory.
var credentialPaths = []string{
	".ssh", ".aws", ".gnupg", ".config/gcloud", ".docker/config.json", ".kube", ".netrc",
	".git-credentials", ".npmrc", ".pypirc", ".azure", ".config/gh", ".password-store",
	".vault-token", ".pgpass", ".cargo/credentials", ".cargo/credentials.toml", ".terraform.d",
	".config/hub", ".gem/credentials", ".m2/settings.xml", ".my.cnf", ".boto", ".s3cfg",
}

var (
	otherHome     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:/root|/home/[^/]+|/Users/[^/]+)(?:/(.*))?$`) })
	systemSecrets = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:/etc/(?:shadow|gshadow|sudoers|security/opasswd)(?:[-.].*)?|/etc/sudoers\.d(?:/.*)?|/etc/ssh/ssh_host_[^/]*key|/proc/[^/]+/environ|/proc/[^/]+/task/[^/]+/environ)$`)
	})
	credentialSubs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[=:,]`) })
)

// homeRel returns abs relative to a home directory, when it lies in one.
func (c *checker) homeRel(abs string) (string, bool) {
	if abs == c.home {
		return "", true
	}
	if strings.HasPrefix(abs, c.home+"/") {
		return abs[len(c.home)+1:], true
	}
	if m := otherHome().FindStringSubmatch(abs); m != nil {
		return m[1], true
	}
	return "", false
}

// credential reports whether abs names a credential file or directory (or, as a glob,
// could match one).
func (c *checker) credential(abs string) bool {
	if c.inside(abs) {
		return false
	}
	if systemSecrets().MatchString(abs) || globsSecret(abs) {
		return true
	}
	rel, ok := c.homeRel(abs)
	if !ok || rel == "" {
		return false
	}
	if !hasGlob(rel) {
		for _, p := range credentialPaths {
			if rel == p || strings.HasPrefix(rel, p+"/") {
				return true
			}
		}
		return false
	}
	relc := strings.Split(rel, "/")
	for _, p := range credentialPaths {
		pc := strings.Split(p, "/")
		n := min(len(relc), len(pc))
		hit := true
		for i := 0; i < n && hit; i++ {
			// A shell glob matches a leading dot only when the pattern starts with one.
			if strings.HasPrefix(pc[i], ".") && !strings.HasPrefix(relc[i], ".") {
				hit = false
				break
			}
			m, err := path.Match(relc[i], pc[i])
			hit = err == nil && m
		}
		if hit {
			return true
		}
	}
	return false
}

func checkCredentials(c *checker, cmd *simpleCmd) string {
	words := append([]arg(nil), cmd.Args...)
	for _, r := range cmd.Redirs {
		words = append(words, r.Target)
	}
	for _, w := range words {
		cands := []arg{w}
		if parts := credentialSubs().Split(w.Value, -1); len(parts) > 1 {
			for _, p := range parts[1:] {
				cands = append(cands, arg{Value: p})
			}
		}
		for _, cand := range cands {
			if cand.Value == "" {
				continue
			}
			if abs, ok := c.resolve(cand, cmd.Cwd); ok && c.credential(abs) {
				return fmt.Sprintf("refers to the credentials at %s", abs)
			}
		}
	}
	return ""
}
