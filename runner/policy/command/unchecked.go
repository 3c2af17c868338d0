package command

import (
	"fmt"

	"mvdan.cc/sh/v3/syntax"
	"path"
	"regexp"
	"strings"
)

// checkUncheckedCode denies code a shell or eval would run that the checker cannot
// read: whatever another command prints into a shell, text built from an unknown
// substitution or variable, a process substitution sourced.
func checkUncheckedCode(_ *checker, cmd *simpleCmd) string {
	name := cmd.Name()
	switch {
	case name == "":
		return ""
	case name == "eval":
		return uncheckedEval(cmd)
	case name == "source" || name == ".":
		return uncheckedSource(cmd)
	case isInterpreter(name):
		return uncheckedInterpreter(name, cmd)
	case name == "su" || name == "runuser" || name == "env" || name == "watch":
		if src, ok := runsString(cmd); ok && src.Unknown {
			return fmt.Sprintf("runs code (%s) that is unknown before it runs", shorten(src.Value))
		}
	}
	return ""
}

// uncheckedEval: eval of a word unknown before it runs.
func uncheckedEval(cmd *simpleCmd) string {
	for _, a := range cmd.Args[1:] {
		if a.Unknown {
			return fmt.Sprintf("evaluates %s, whose text is unknown before it runs", a.Value)
		}
	}
	return ""
}

// uncheckedSource: source of a process substitution, or of stdin fed by another command.
func uncheckedSource(cmd *simpleCmd) string {
	if len(cmd.Args) < 2 {
		return ""
	}
	a := cmd.Args[1]
	if strings.HasPrefix(a.Value, "<(") || strings.HasPrefix(a.Value, ">(") {
		return "runs the output of a process substitution as shell code"
	}
	if (a.Value == "/dev/stdin" || a.Value == "-" || a.Value == "/proc/self/fd/0") && cmd.StdinUnknown && !stdinRedirected(cmd) {
		return "runs what another command prints as shell code"
	}
	return ""
}

// uncheckedInterpreter: a shell or interpreter whose -c code, here-document or stdin
// program is unknown before it runs.
func uncheckedInterpreter(name string, cmd *simpleCmd) string {
	if src, ok := runsString(cmd); ok && src.Unknown {
		return fmt.Sprintf("runs %s with code (%s) that is unknown before it runs", name, shorten(src.Value))
	}
	if !readsStdin(cmd) {
		return ""
	}
	for _, r := range cmd.Redirs {
		if r.Body != nil && r.Body.Unknown {
			return fmt.Sprintf("feeds %s a script built from values unknown before it runs", name)
		}
		if r.Op == syntax.RdrIn && strings.HasPrefix(r.Target.Value, "<(") {
			return fmt.Sprintf("feeds %s the output of a process substitution as its program (%s < <(...))", name, name)
		}
	}
	if cmd.Piped && cmd.StdinUnknown && !stdinRedirected(cmd) {
		return fmt.Sprintf("pipes another command's output into %s, which runs it as code", name)
	}
	return ""
}

// stdinRedirected reports whether a command reads stdin from a redirection (sh < x.sh)
// rather than from the pipe.
func stdinRedirected(cmd *simpleCmd) bool {
	for _, r := range cmd.Redirs {
		if r.Body != nil || r.Op.String() == "<" {
			return true
		}
	}
	return false
}

// checkUnknownProgram denies a command whose program name is an unquoted expansion the
// checker cannot resolve: word splitting can turn $cmd into any command line at all.
func checkUnknownProgram(_ *checker, cmd *simpleCmd) string {
	if len(cmd.Args) == 0 || !cmd.Args[0].UnknownStart || !cmd.Args[0].Split {
		return ""
	}
	return fmt.Sprintf("runs a program named by %s, an unquoted expansion whose value is unknown before it runs", cmd.Args[0].Value)
}

// unknownProgramTargets are the programs a quoted unknown program name ("$X" -rf /) is
// checked as: those whose rules depend on their arguments. Shells are left out: their
// code would be parsed as shell even when the program is python.
var unknownProgramTargets = []string{
	"rm", "unlink", "find", "chmod", "chown", "chgrp", "dd", "shred", "kill", "cp", "mv", "tee",
	"ln", "install", "touch", "truncate", "sed", "systemctl", "env", "xargs", "nohup",
}

// killAllSamples are process names and command lines of which a pkill pattern that
// matches them all matches every process.
var killAllSamples = []string{"init", "sshd", "runner", "bash", "python3", "/usr/sbin/cron -f", "x"}

// pkillValueOpts are pkill's options that take a value.
var pkillValueOpts = map[string]bool{
	"-g": true, "-G": true, "-P": true, "-s": true, "-t": true, "-u": true, "-U": true, "-F": true, "-c": true,
	"--pgroup": true, "--group": true, "--parent": true, "--session": true, "--terminal": true, "--euid": true,
	"--uid": true, "--pidfile": true, "--signal": true, "--ns": true, "--nslist": true,
}

// checkPkill denies pkill aimed at every process: a pattern that matches any name
// (pkill -9 -f .), an unknown pattern, or none (pkill -u root).
func checkPkill(cmd *simpleCmd) string {
	var pattern *arg
	for i := 1; i < len(cmd.Args); i++ {
		a := cmd.Args[i]
		v := a.Value
		switch {
		case a.UnknownStart:
			pattern = &cmd.Args[i]
		case v == "--":
			if i+1 < len(cmd.Args) {
				pattern = &cmd.Args[i+1]
			}
		case pkillValueOpts[v]:
			i++
			continue
		case strings.HasPrefix(v, "-") && len(v) > 1:
			continue // -9, -KILL, -f, -x, --signal=9
		default:
			pattern = &cmd.Args[i]
		}
		if pattern != nil {
			break
		}
	}
	if pattern == nil {
		return "signals every process its other options select (no pattern)"
	}
	if pattern.Unknown {
		return fmt.Sprintf("signals processes matching %s, a pattern unknown before it runs", pattern.Value)
	}
	re, err := regexp.Compile(pattern.Value)
	if err != nil {
		return ""
	}
	for _, s := range killAllSamples {
		if !re.MatchString(s) {
			return ""
		}
	}
	return fmt.Sprintf("signals every process (the pattern %q matches any name)", pattern.Value)
}

// secretSamples are concrete names of the system secrets that systemSecrets matches,
// tried against a glob (cat /etc/shado?, cat /proc/1/env*).
var secretSamples = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d/README",
	"/etc/security/opasswd", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key", "/proc/1/environ", "/proc/self/environ", "/proc/thread-self/environ",
	"/proc/1/task/1/environ",
}

// globsSecret reports whether a glob could name a system secret, or a directory above
// one whose listing would (cat /etc/sh*, cat /proc/*/env*).
func globsSecret(abs string) bool {
	if !hasGlob(abs) {
		return false
	}
	for _, s := range secretSamples {
		if ok, _ := path.Match(abs, s); ok {
			return true
		}
	}
	return false
}
