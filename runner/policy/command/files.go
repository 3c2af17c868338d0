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
	args := cmd.Args[1:]
	pos, opts := positionals(args, writerValueOpts[name])
	opt := func(names ...string) *arg {
		for _, n := range names {
			if v, ok := opts[n]; ok && v != nil {
				return v
			}
		}
		return nil
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := opts[n]; ok {
				return true
			}
		}
		return false
	}
	switch name {
	case "cp", "mv", "ln", "install", "rsync", "scp":
		if t := opt("-t", "--target-directory"); t != nil {
			return []arg{*t}
		}
		if name == "install" && has("-d", "--directory") {
			return pos
		}
		if len(pos) >= 2 || (name == "ln" && len(pos) == 1) {
			return pos[len(pos)-1:]
		}
	case "tee", "touch", "truncate", "mkdir", "rmdir", "rm", "unlink", "shred", "mknod", "mkfifo":
		return pos
	case "chmod", "chown", "chgrp", "chattr", "setfacl":
		if has("--reference") || len(pos) == 0 {
			return pos
		}
		return pos[1:]
	case "sed":
		if !has("-i", "--in-place") && !hasPrefixOpt(args, "-i") {
			return nil
		}
		if has("-e", "-f", "--expression", "--file") || len(pos) == 0 {
			return pos
		}
		return pos[1:]
	case "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.Value, "of="); ok {
				return []arg{{Value: v, UnknownStart: a.UnknownStart}}
			}
		}
	case "curl":
		var out []arg
		for i, a := range args {
			if (a.Value == "-o" || a.Value == "--output" || shortCluster(a.Value, 'o')) && i+1 < len(args) {
				out = append(out, args[i+1])
			} else if v, ok := strings.CutPrefix(a.Value, "--output="); ok {
				out = append(out, arg{Value: v})
			}
		}
		return out
	case "wget":
		var out []arg
		for i, a := range args {
			if (a.Value == "-O" || a.Value == "--output-document" || a.Value == "-P" || a.Value == "--directory-prefix") && i+1 < len(args) {
				out = append(out, args[i+1])
			} else if v, ok := strings.CutPrefix(a.Value, "--output-document="); ok {
				out = append(out, arg{Value: v})
			}
		}
		return out
	}
	return nil
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
