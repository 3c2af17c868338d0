package command

import (
	"regexp"
	"strings"
	"sync"
)

// Programs that run another program given as their arguments, and the options of each
// that take a value (so the value is not mistaken for the program).
var wrappers = map[string]struct {
	valueOpts string // short options that take a value, e.g. "nu" for nice -n, env -u
	longValue []string
	// positional is how many positional arguments come before the program (timeout's
	// DURATION).
	positional int
}{
	"nohup":   {},
	"setsid":  {},
	"command": {},
	"builtin": {},
	"exec":    {valueOpts: "a"},
	"nice":    {valueOpts: "n", longValue: []string{"--adjustment"}},
	"ionice":  {valueOpts: "cnp", longValue: []string{"--class", "--classdata", "--pid"}},
	"timeout": {valueOpts: "ks", longValue: []string{"--kill-after", "--signal"}, positional: 1},
	"stdbuf":  {valueOpts: "ioe", longValue: []string{"--input", "--output", "--error"}},
	"env":     {valueOpts: "uCS", longValue: []string{"--unset", "--chdir", "--split-string"}},
	// xargs's -e, -i and -l take their value attached only.
	"xargs": {valueOpts: "adEILnPs", longValue: []string{"--arg-file", "--delimiter", "--eof",
		"--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}},
	"sudo": {valueOpts: "CDghpRrTUu", longValue: []string{"--close-from", "--chdir", "--group",
		"--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"}},
	"doas":     {valueOpts: "Cu"},
	"pkexec":   {longValue: []string{"--user"}},
	"chronic":  {},
	"unbuffer": {},
	"busybox":  {},
	"time":     {valueOpts: "fo", longValue: []string{"--format", "--output"}},
	"strace":   {valueOpts: "eopsEuabI", longValue: []string{"--output"}},
	"flock":    {valueOpts: "wEc", positional: 1},
	"chroot":   {longValue: []string{"--userspec", "--groups"}, positional: 1},
	"watch":    {valueOpts: "nq", longValue: []string{"--interval", "--differences", "--equexit"}},
	"parallel": {valueOpts: "jSPIXnNLsdaECe", longValue: []string{"--jobs", "--sshlogin", "--arg-file", "--delimiter",
		"--colsep", "--results", "--joblog", "--tmpdir", "--workdir", "--wd", "--timeout", "--retries", "--delay",
		"--memfree", "--load", "--halt", "--max-args", "--max-replace-args", "--max-lines", "--max-chars", "--eof",
		"--replace", "--max-procs", "--basefile", "--env", "--tag-string", "--tagstring"}},
}

// unwrap returns the commands a command runs on behalf of its arguments: nohup rm ...,
// xargs rm ..., find . -exec rm {} \;.
func unwrap(c *simpleCmd) []*simpleCmd {
	name := c.Name()
	if name == "find" {
		return findExec(c)
	}
	spec, ok := wrappers[name]
	if !ok {
		return nil
	}
	args := c.Args[1:]
	if name == "command" && len(args) > 0 && (args[0].Value == "-v" || args[0].Value == "-V") {
		return nil // command -v NAME looks NAME up; it runs nothing
	}
	i := 0
	positional := spec.positional
	for i < len(args) {
		a := args[i].Value
		if a == "--" {
			i++
			break
		}
		if name == "env" && strings.Contains(a, "=") && !strings.HasPrefix(a, "-") {
			i++ // NAME=value
			continue
		}
		if strings.HasPrefix(a, "--") {
			takes := false
			for _, l := range spec.longValue {
				if a == l {
					takes = true
				}
			}
			i++
			if takes {
				i++
			}
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 && !args[i].UnknownStart {
			i++
			// In a group such as -un NAME, a value option takes the rest of the group or
			// the next word.
			for k := 1; k < len(a); k++ {
				if strings.IndexByte(spec.valueOpts, a[k]) >= 0 {
					if k == len(a)-1 {
						i++
					}
					break
				}
			}
			continue
		}
		if positional > 0 {
			positional--
			i++
			continue
		}
		break
	}
	if i >= len(args) {
		return nil
	}
	if name == "watch" {
		// watch joins its arguments and runs them with sh -c.
		return nil
	}
	return []*simpleCmd{c.child(args[i:])}
}

// findExec returns the commands of find's -exec, -execdir, -ok and -okdir actions.
func findExec(c *simpleCmd) []*simpleCmd {
	var out []*simpleCmd
	args := c.Args
	for i := 1; i < len(args); i++ {
		switch args[i].Value {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].Value != ";" && args[j].Value != "+" {
				j++
			}
			if j > i+1 {
				out = append(out, c.child(args[i+1:j]))
			}
			i = j
		}
	}
	return out
}

var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "fish": true, "csh": true, "tcsh": true, "yash": true, "rbash": true,
}

// interpreters run a program read from stdin or given with a code option.
var interpreters = map[string]string{ // name -> options that take inline code
	"perl": "eE", "ruby": "e", "node": "ep", "nodejs": "ep", "php": "rR", "lua": "e", "deno": "",
}

var pythonName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^python[0-9.]*$`) })

func isShell(name string) bool { return shells[name] }

// isInterpreter is true for shells and for languages that run code from stdin.
func isInterpreter(name string) bool {
	if shells[name] || pythonName().MatchString(name) {
		return true
	}
	_, ok := interpreters[name]
	return ok
}

// interpreterArgs splits a shell's or interpreter's arguments into whether inline code
// was given (sh -c, python -c, perl -e), whether it reads the program from stdin, and the
// first positional argument.
func interpreterArgs(c *simpleCmd) (code bool, stdin bool, first *arg) {
	name := c.Name()
	codeOpts, valueOpts := "c", "oO"
	switch {
	case pythonName().MatchString(name):
		codeOpts, valueOpts = "cm", "WXQ"
	case !shells[name]:
		codeOpts, valueOpts = interpreters[name], "IrMmx"
	}
	args := c.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i].Value
		switch {
		case a == "--":
			return afterDashDash(args[i+1:], code, stdin)
		case a == "-":
			return code, !code, &args[i]
		case args[i].UnknownStart:
			first = &args[i]
			return code, false, first
		case strings.HasPrefix(a, "--"):
			if a == "--rcfile" || a == "--init-file" || a == "--command" {
				code = code || a == "--command"
				i++ // the option's value
			}
		case (strings.HasPrefix(a, "-") || (shells[name] && strings.HasPrefix(a, "+"))) && len(a) > 1:
			c, in, skip := shortOpts(a, shells[name], codeOpts, valueOpts)
			code, stdin, i = code || c, stdin || in, i+skip
		default:
			first = &args[i]
			if code && shells[name] {
				return code, false, first
			}
			return code, !code && (first.Value == "/dev/stdin" || stdin), first
		}
	}
	return code, !code, nil
}

// afterDashDash is interpreterArgs's answer once "--" ends the options: rest is what
// follows it, whose first word is the program (stdin when there is none, or it is "-"
// or /dev/stdin, unless inline code was given).
func afterDashDash(rest []arg, code, stdin bool) (bool, bool, *arg) {
	var first *arg
	if len(rest) > 0 {
		first = &rest[0]
	}
	return code, !code && (stdin || first == nil || first.Value == "-" || first.Value == "/dev/stdin"), first
}

// shortOpts reads one cluster of short options (-xc, +e, -c'print(1)') of a shell
// (shell) or an interpreter: whether it gives inline code (one of codeOpts), whether it
// reads the program from stdin (a shell's -s), and how many of the following words it
// takes as its value (0 or 1: the code or module after an interpreter's -c or -m, the
// value of one of valueOpts at the cluster's end).
func shortOpts(a string, shell bool, codeOpts, valueOpts string) (code, stdin bool, skip int) {
	for k := 1; k < len(a); k++ {
		if strings.IndexByte(codeOpts, a[k]) >= 0 {
			if !shell && k == len(a)-1 {
				return true, stdin, 1 // the code or module is the next word
			}
			return true, stdin, 0 // a shell's -c, or python -c'print(1)': the code is attached
		}
		if strings.IndexByte(valueOpts, a[k]) >= 0 {
			if k == len(a)-1 {
				return false, stdin, 1
			}
			return false, stdin, 0
		}
		if a[k] == 's' && shell {
			stdin = true
		}
	}
	return false, stdin, 0
}

// readsStdin reports whether a shell or interpreter takes its program from stdin.
func readsStdin(c *simpleCmd) bool {
	if !isInterpreter(c.Name()) {
		return false
	}
	_, stdin, _ := interpreterArgs(c)
	return stdin
}

// runsString returns a string that a command hands to a shell: sh -c STRING,
// su -c STRING, watch ARGS..., env -S STRING.
func runsString(c *simpleCmd) (arg, bool) {
	name := c.Name()
	switch {
	case shells[name]:
		code, _, first := interpreterArgs(c)
		if code && first != nil {
			return *first, true
		}
	case name == "su" || name == "runuser":
		for i := 1; i+1 < len(c.Args); i++ {
			if v := c.Args[i].Value; v == "-c" || v == "--command" {
				return c.Args[i+1], true
			}
		}
	case name == "watch":
		inner := unwrapWatch(c)
		if len(inner) > 0 {
			return joinArgs(inner), true
		}
	case name == "env":
		for i := 1; i+1 < len(c.Args); i++ {
			if v := c.Args[i].Value; v == "-S" || v == "--split-string" {
				return joinArgs(c.Args[i+1:]), true
			}
		}
	}
	return arg{}, false
}

// unwrapWatch returns watch's command words, skipping its options.
func unwrapWatch(c *simpleCmd) []arg {
	args := c.Args[1:]
	for len(args) > 0 {
		a := args[0].Value
		switch {
		case a == "--":
			return args[1:]
		case a == "-n" || a == "--interval" || a == "-q" || a == "--equexit":
			if len(args) < 2 {
				return nil
			}
			args = args[2:]
		case strings.HasPrefix(a, "-"):
			args = args[1:]
		default:
			return args
		}
	}
	return nil
}

// globTargets are the programs the built-in rules look for, tried against a globbed
// program name.
var globTargets = []string{
	"rm", "unlink", "find", "sudo", "su", "doas", "pkexec", "mkfs", "mke2fs", "mkswap", "wipefs",
	"fdisk", "sfdisk", "parted", "dd", "shred", "chmod", "chown", "chgrp", "kill", "killall5",
	"shutdown", "reboot", "halt", "poweroff", "init", "telinit", "systemctl", "cp", "mv", "tee",
	"ln", "install", "touch", "truncate", "sed", "curl", "wget", "sh", "bash", "zsh", "dash",
	"python", "python3", "perl", "ruby", "node", "eval", "source", "env", "xargs", "nohup",
}

var fetchers = map[string]bool{
	"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true, "https": true,
	"xh": true, "lwp-request": true, "GET": true,
}

// fetches reports whether any of the commands downloads something.
func fetches(cmds []*simpleCmd) bool {
	for _, c := range cmds {
		if fetchers[c.Name()] {
			return true
		}
	}
	return false
}
