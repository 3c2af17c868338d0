package command

import (
	"fmt"
	"path"
	"strings"
)

// BuiltinRule describes one rule of the built-in deny list.
type BuiltinRule struct {
	// Name is a short kebab-case identifier, shown in decisions and transcripts.
	Name string
	// Description says what the rule denies, in one sentence.
	Description string
	// Suggestion is what a denied agent is told to do instead.
	Suggestion string
}

type builtin struct {
	BuiltinRule
	// check returns "" when cmd is fine, or what is wrong with it ("deletes the
	// filesystem root").
	check func(c *checker, cmd *simpleCmd) string
}

// ParseErrorRule is the rule name used when a line cannot be parsed: it is denied.
const ParseErrorRule = "parse-error"

var parseErrorRule = BuiltinRule{
	Name:        ParseErrorRule,
	Description: "A command line (or a string run by `bash -c`, `eval`, a here-document fed to a shell) that the shell parser cannot read is denied, with the parser's message.",
	Suggestion:  "Fix the shell syntax (quotes, brackets, here-documents) and run the command again.",
}

// builtins is the deny list in the order it is checked. Keep RULES.md in step: a test
// compares it with MarkdownTable.
var builtins = []builtin{
	{BuiltinRule{"privilege-escalation",
		"`sudo`, `su`, `doas`, `pkexec`, `run0`, `sudoedit`, `runuser`: no command runs as another user.",
		"Run the command without sudo; the workspace is writable by you. If a system package is missing, say so in your summary."},
		checkPrivilege},
	{BuiltinRule{"rm-root",
		"`rm -r` of `/`, `/*` or with `--no-preserve-root`.",
		"Delete only paths inside the workspace, e.g. rm -rf build/."},
		checkRmRoot},
	{BuiltinRule{"rm-home",
		"`rm -r` of the home directory: `~`, `~/`, `~/*`, `$HOME`, `/root`, `/home/NAME`.",
		"Delete only paths inside the workspace, e.g. rm -rf build/."},
		checkRmHome},
	{BuiltinRule{"rm-outside-workspace",
		"`rm -r` of a path outside the workspace (relative paths are resolved against the working directory, following `cd`), or of a path starting with a variable or substitution whose value is unknown (`rm -rf \"$DIR/\"`); `rm`/`unlink` of single files outside the workspace except under /tmp and /var/tmp.",
		"Delete only paths inside the workspace, written as relative paths, e.g. rm -rf build/."},
		checkRmOutside},
	{BuiltinRule{"find-delete-outside",
		"`find` with `-delete` or an `-exec rm`/`shred`/`unlink` action whose starting points are outside the workspace.",
		"Run find on paths inside the workspace, e.g. find . -name '*.tmp' -delete."},
		checkFindDelete},
	{BuiltinRule{"chmod-chown-recursive-outside",
		"`chmod`, `chown`, `chgrp` with `-R` on `/` or any path outside the workspace.",
		"Change permissions only on files inside the workspace."},
		checkChmodRecursive},
	{BuiltinRule{"disk-format",
		"Formatting and partitioning disks: `mkfs*`, `mke2fs`, `mkswap`, `wipefs`, `fdisk`, `sfdisk`, `cfdisk`, `gdisk`, `sgdisk`, `parted`.",
		"Do not touch disks; work with files inside the workspace."},
		checkDiskFormat},
	{BuiltinRule{"dd-to-device",
		"`dd of=/dev/...` other than /dev/null, /dev/zero, /dev/stdout, /dev/stderr.",
		"Write dd output to a file inside the workspace, or to /dev/null."},
		checkDD},
	{BuiltinRule{"shred-device",
		"`shred` of a device under /dev.",
		"Do not touch devices; work with files inside the workspace."},
		checkShred},
	{BuiltinRule{"fork-bomb",
		"A function that calls itself in a pipeline or in the background (`:(){ :|:& };:`, `bomb(){ bomb|bomb& }; bomb`), and a command started in the background in a loop that never ends (`while true; do sh -c 'sleep 100' & done`, `until false`, `for ((;;))`).",
		"Do not start processes that multiply; run each command once."},
		checkForkBomb},
	{BuiltinRule{"pipe-to-shell",
		"Downloaded code run by a shell or interpreter (sh, bash, zsh, python, perl, ruby, node, ...): `curl URL | sh`, `wget -O- URL | bash`, `bash <(curl URL)`, `sh -c \"$(curl URL)\"`, `eval \"$(curl URL)\"`, `source <(curl URL)`, and a file a download wrote earlier in the line, then run as a program or handed to one as its script (`curl URL -o a.sh && sh a.sh`, `curl -s URL > /dev/shm/a; sh /dev/shm/a`, `wget URL/x.sh; ./x.sh`).",
		"Do not run code straight from the network; use the project's own build and test commands."},
		checkPipeToShell},
	{BuiltinRule{"system-write",
		"Writes under /etc, /usr, /boot, /dev, /bin, /sbin, /lib, /lib32, /lib64, /sys, /proc (outside the workspace): redirections (`>`, `>>`, `&>`, `>|`), and the targets of `cp`, `mv`, `install`, `ln`, `rsync`, `tee`, `touch`, `truncate`, `mkdir`, `rm`, `chmod`, `chown`, `sed -i`, `dd of=`, `curl -o`, `wget -O`. /dev/null, /dev/zero, /dev/stdout, /dev/stderr, /dev/stdin, /dev/tty, /dev/fd/* and /dev/shm/* stay writable.",
		"Write only inside the workspace; system directories are not yours to change."},
		checkSystemWrite},
	{BuiltinRule{"credential-read",
		"Any word referring to credential files: `~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.config/gcloud`, `~/.docker/config.json`, `~/.kube`, `~/.netrc`, `~/.git-credentials`, `~/.npmrc`, `~/.pypirc`, `~/.azure`, `~/.config/gh`, `~/.password-store`, `~/.vault-token`, `~/.pgpass`, `~/.cargo/credentials*`, `~/.terraform.d` (in any home: `~`, `$HOME`, `/root`, `/home/NAME`, globs such as `~/.*`), `/etc/shadow`, `/etc/gshadow`, `/etc/sudoers*`, `/etc/ssh/*_key`, `/proc/*/environ`, and globs that could match one of these (`cat /etc/shado?`, `cat /proc/1/env*`, `cat /etc/*`).",
		"Credentials are off limits; the task must be done without them."},
		checkCredentials},
	{BuiltinRule{"shutdown-reboot",
		"`shutdown`, `reboot`, `halt`, `poweroff`, `init 0`/`init 6`, `telinit 0`/`6`, `systemctl poweroff|reboot|halt|kexec`.",
		"Do not stop the machine; finish the task and call task_complete."},
		checkShutdown},
	{BuiltinRule{"kill-all-processes",
		"`kill` aimed at every process (`kill -9 -1`, `kill -KILL -1`, `kill -s KILL -1`, `kill -- -1`) or at its whole process group (`kill -9 0`), `killall5`, `killall` (it kills by name, whoever started the process), and `pkill` whose pattern matches any name (`pkill -9 -f .`, `pkill ''`), is unknown, or is missing (`pkill -u root`).",
		"Kill only the processes you started, by their PID."},
		checkKillAll},
	{BuiltinRule{"unchecked-code",
		"Code run by a shell or `eval` that the checker cannot read: another command's output piped into a shell or interpreter that reads its program from stdin (`echo ... | base64 -d | sh`, `cat x | python3`; a literal `echo`/`printf` piped into a shell is checked instead), `eval`, `sh -c`, `bash -c`, `su -c`, `env -S` of text built from a substitution, variable or `xargs -I` input whose value is unknown (`eval \"$(printf ...)\"`, `cat names | xargs -I{} sh -c 'echo {}'`), a here-document built from unknown values fed to a shell, `source <(...)`, and a process substitution fed to a shell as its stdin (`bash < <(echo ...)`).",
		"Write the commands out literally so they can be checked; do not generate shell code and run it."},
		checkUncheckedCode},
	{BuiltinRule{"unknown-program",
		"A program name that is an unquoted variable or substitution whose value is unknown (`$cmd`, `$(printf rm) -rf /`), or an expansion to all of an array's elements (`a=(rm -rf /); \"${a[@]}\"`, `\"$@\"`): word splitting can make it any command line. Variables the line sets to literal values are followed, split on `IFS` as the shell would (`IFS=,; cmd=rm,-rf,/; $cmd` is checked as `rm -rf /`); an IFS the checker cannot know makes every unquoted expansion unknown. A quoted unknown name (`\"$X\" -rf /`) is checked as each program whose rules depend on its arguments (`rm`, `find`, `chmod`, `dd`, `kill`, `cp`, `env`, ...).",
		"Write the program name literally, e.g. python3 script.py."},
		checkUnknownProgram},
}

// Builtins lists the built-in deny rules in the order they are checked, the parse-error
// rule last.
func Builtins() []BuiltinRule {
	out := make([]BuiltinRule, 0, len(builtins)+1)
	for _, b := range builtins {
		out = append(out, b.BuiltinRule)
	}
	return append(out, parseErrorRule)
}

// MarkdownTable renders the built-in rules as a markdown table (RULES.md, the README).
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| rule | denies |\n|---|---|\n")
	for _, r := range Builtins() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", r.Name, strings.ReplaceAll(r.Description, "|", `\|`))
	}
	return b.String()
}

func checkPrivilege(_ *checker, cmd *simpleCmd) string {
	switch cmd.Name() {
	case "sudo", "su", "doas", "pkexec", "run0", "sudoedit", "runuser":
		return "runs a command as another user"
	}
	return ""
}

// rmArgs splits rm's (or unlink's) arguments.
func rmArgs(cmd *simpleCmd) (recursive, noPreserve bool, targets []arg) {
	opts := true
	for _, a := range cmd.Args[1:] {
		v := a.Value
		switch {
		case opts && v == "--":
			opts = false
		case opts && strings.HasPrefix(v, "--") && !a.UnknownStart:
			recursive = recursive || v == "--recursive"
			noPreserve = noPreserve || v == "--no-preserve-root"
		case opts && strings.HasPrefix(v, "-") && len(v) > 1 && !a.UnknownStart:
			recursive = recursive || strings.ContainsAny(v, "rR")
		default:
			targets = append(targets, a)
		}
	}
	return recursive, noPreserve, targets
}

// hasGlob reports whether s contains shell pattern characters.
func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

func checkRmRoot(c *checker, cmd *simpleCmd) string {
	if cmd.Name() != "rm" {
		return ""
	}
	recursive, noPreserve, targets := rmArgs(cmd)
	if noPreserve {
		return "uses --no-preserve-root"
	}
	if !recursive {
		return ""
	}
	for _, t := range targets {
		abs, ok := c.resolve(t, cmd.Cwd)
		if !ok || c.inside(abs) {
			continue
		}
		if abs == "/" || (path.Dir(abs) == "/" && hasGlob(path.Base(abs)) && strings.Trim(path.Base(abs), "*?") == "") {
			return "deletes the filesystem root"
		}
	}
	return ""
}

// isHome reports whether abs is a home directory (or every entry of one, ~/*).
func (c *checker) isHome(abs string) bool {
	if hasGlob(path.Base(abs)) {
		abs = path.Dir(abs)
	}
	if abs == c.home || abs == "/root" || abs == "/home" || abs == "/Users" {
		return true
	}
	d := path.Dir(abs)
	return d == "/home" || d == "/Users"
}

func checkRmHome(c *checker, cmd *simpleCmd) string {
	if cmd.Name() != "rm" {
		return ""
	}
	recursive, _, targets := rmArgs(cmd)
	if !recursive {
		return ""
	}
	for _, t := range targets {
		if abs, ok := c.resolve(t, cmd.Cwd); ok && !c.inside(abs) && c.isHome(abs) {
			return "deletes the home directory " + t.Value
		}
	}
	return ""
}

func checkRmOutside(c *checker, cmd *simpleCmd) string {
	name := cmd.Name()
	if name != "rm" && name != "unlink" {
		return ""
	}
	recursive, _, targets := rmArgs(cmd)
	if name == "unlink" {
		recursive = false
	}
	for _, t := range targets {
		abs, ok := c.resolve(t, cmd.Cwd)
		switch {
		case !ok && recursive && t.UnknownStart:
			return fmt.Sprintf("deletes %s, whose location is unknown before the command runs", t.Value)
		case !ok && recursive:
			return fmt.Sprintf("deletes %s relative to a directory that is unknown after cd", t.Value)
		case !ok || c.inside(abs):
		case recursive:
			return fmt.Sprintf("deletes %s, which is outside the workspace", abs)
		case !under(abs, "/tmp") && !under(abs, "/var/tmp"):
			return fmt.Sprintf("deletes %s, which is outside the workspace", abs)
		}
	}
	return ""
}

func checkFindDelete(c *checker, cmd *simpleCmd) string {
	if cmd.Name() != "find" {
		return ""
	}
	var starts []arg
	deletes := false
	args := cmd.Args[1:]
	i := 0
	for i < len(args) && (args[i].Value == "-H" || args[i].Value == "-L" || args[i].Value == "-P") {
		i++
	}
	for ; i < len(args); i++ {
		v := args[i].Value
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" {
			break
		}
		starts = append(starts, args[i])
	}
	for ; i < len(args); i++ {
		switch args[i].Value {
		case "-delete":
			deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) {
				switch path.Base(args[i+1].Value) {
				case "rm", "shred", "unlink", "rmdir":
					deletes = true
				}
			}
		}
	}
	if !deletes {
		return ""
	}
	if len(starts) == 0 {
		starts = []arg{{Value: "."}}
	}
	return c.firstOutside(starts, cmd.Cwd, "deletes files under %s")
}

func checkChmodRecursive(c *checker, cmd *simpleCmd) string {
	switch cmd.Name() {
	case "chmod", "chown", "chgrp":
	default:
		return ""
	}
	recursive, reference := false, false
	var pos []arg
	opts := true
	for _, a := range cmd.Args[1:] {
		v := a.Value
		switch {
		case opts && v == "--":
			opts = false
		case opts && strings.HasPrefix(v, "--"):
			recursive = recursive || v == "--recursive"
			reference = reference || strings.HasPrefix(v, "--reference")
		case opts && strings.HasPrefix(v, "-") && len(v) > 1 && cmd.Name() != "chmod":
			recursive = recursive || strings.Contains(v, "R")
		case opts && strings.HasPrefix(v, "-") && len(v) > 1 && strings.Trim(v[1:], "RfvcH") == "":
			// chmod -R, but not a mode such as -x or -w.
			recursive = recursive || strings.Contains(v, "R")
		default:
			pos = append(pos, a)
		}
	}
	if !recursive || len(pos) == 0 {
		return ""
	}
	if !reference {
		pos = pos[1:]
	}
	return c.firstOutside(pos, cmd.Cwd, "changes %s recursively")
}

// firstOutside describes the first of targets (relative to cwd) that a recursive change
// could reach outside the workspace with: one outside it, or one whose location is
// unknown before the command runs (counted as outside). what says what the command does
// to it ("changes %s recursively"); "" when every target is inside.
func (c *checker) firstOutside(targets []arg, cwd, what string) string {
	for _, t := range targets {
		abs, ok := c.resolve(t, cwd)
		if !ok {
			return fmt.Sprintf(what, t.Value) + ", whose location is unknown"
		}
		if !c.inside(abs) {
			return fmt.Sprintf(what, abs) + ", which is outside the workspace"
		}
	}
	return ""
}

func checkDiskFormat(_ *checker, cmd *simpleCmd) string {
	name := cmd.Name()
	switch {
	case strings.HasPrefix(name, "mkfs"):
	case name == "mke2fs", name == "mkswap", name == "wipefs", name == "fdisk", name == "sfdisk",
		name == "cfdisk", name == "gdisk", name == "sgdisk", name == "parted":
	default:
		return ""
	}
	return "formats or partitions a disk"
}

// harmlessDevice reports whether writing to abs cannot hurt the machine.
func harmlessDevice(abs string) bool {
	switch abs {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return strings.HasPrefix(abs, "/dev/fd/") || strings.HasPrefix(abs, "/dev/shm/") ||
		strings.HasPrefix(abs, "/proc/self/fd/")
}

func checkDD(c *checker, cmd *simpleCmd) string {
	if cmd.Name() != "dd" {
		return ""
	}
	for _, a := range cmd.Args[1:] {
		if v, ok := strings.CutPrefix(a.Value, "of="); ok {
			abs, known := c.resolve(arg{Value: v, UnknownStart: a.UnknownStart}, cmd.Cwd)
			if known && under(abs, "/dev") && !harmlessDevice(abs) {
				return "writes to the device " + abs
			}
		}
	}
	return ""
}

func checkShred(c *checker, cmd *simpleCmd) string {
	if cmd.Name() != "shred" {
		return ""
	}
	for _, a := range cmd.Args[1:] {
		if abs, ok := c.resolve(a, cmd.Cwd); ok && under(abs, "/dev") && !harmlessDevice(abs) {
			return "overwrites the device " + abs
		}
	}
	return ""
}

func checkForkBomb(_ *checker, cmd *simpleCmd) string {
	if cmd.Func != "" && len(cmd.Args) > 0 && cmd.Args[0].Value == cmd.Func && (cmd.Piped || cmd.Background) {
		return fmt.Sprintf("function %s calls itself in a pipeline or in the background (a fork bomb)", cmd.Func)
	}
	if cmd.LoopBackground {
		return "starts a command in the background on every turn of a loop that never ends (a fork bomb)"
	}
	return ""
}

func checkPipeToShell(_ *checker, cmd *simpleCmd) string {
	name := cmd.Name()
	anyFetch := func(args []arg) bool {
		for _, a := range args {
			if a.Fetch {
				return true
			}
		}
		for _, r := range cmd.Redirs {
			if r.Target.Fetch || (r.Body != nil && r.Body.Fetch) {
				return true
			}
		}
		return false
	}
	if len(cmd.Args) > 0 && cmd.Args[0].Fetch && !cmd.Args[0].Unknown {
		return "runs a program downloaded earlier in the line"
	}
	switch {
	case name == "eval" || name == "source" || name == ".":
		if anyFetch(cmd.Args[1:]) {
			return "runs code downloaded by a substitution"
		}
		if cmd.StdinNet {
			for _, a := range cmd.Args[1:] {
				if a.Value == "/dev/stdin" || a.Value == "-" || a.Value == "/proc/self/fd/0" {
					return "runs code piped from a download"
				}
			}
		}
	case isInterpreter(name):
		if cmd.StdinNet && readsStdin(cmd) {
			return fmt.Sprintf("pipes a download into %s", name)
		}
		if anyFetch(cmd.Args[1:]) {
			return fmt.Sprintf("runs downloaded code with %s", name)
		}
	}
	return ""
}

func checkShutdown(_ *checker, cmd *simpleCmd) string {
	name := cmd.Name()
	switch name {
	case "shutdown", "reboot", "halt", "poweroff":
		return "stops the machine"
	case "init", "telinit":
		if len(cmd.Args) > 1 && (cmd.Args[1].Value == "0" || cmd.Args[1].Value == "6") {
			return "stops the machine"
		}
	case "systemctl":
		for _, a := range cmd.Args[1:] {
			switch a.Value {
			case "poweroff", "reboot", "halt", "kexec", "soft-reboot":
				return "stops the machine"
			}
		}
	}
	return ""
}

// pgroupZero is why kill 0 is denied.
const pgroupZero = "signals every process in its process group (PID 0): the shell, its jobs and whatever else shares the group"

func checkKillAll(_ *checker, cmd *simpleCmd) string {
	switch cmd.Name() {
	case "killall5":
		return "signals every process"
	case "killall":
		return "signals processes by name, whoever started them"
	case "pkill":
		return checkPkill(cmd)
	case "kill":
	default:
		return ""
	}
	args := cmd.Args[1:]
	signal := false // a signal option has been seen, so -1 from now on is a PID
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			for _, p := range args[i+1:] {
				if p.Value == "-1" {
					return "signals every process (PID -1)"
				}
				if p.Value == "0" {
					return pgroupZero
				}
			}
			return ""
		case v == "0":
			return pgroupZero
		case v == "-s" || v == "-n":
			i++
			signal = true
		case v == "-1" && signal:
			return "signals every process (PID -1)"
		case strings.HasPrefix(v, "-") && !signal:
			signal = true
		}
	}
	return ""
}
