package command

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxCommands bounds the work for one line: functions calling functions can multiply it.
const maxCommands = 20000

var errTooMany = fmt.Errorf("more than %d commands to check", maxCommands)

// callFunc walks a function's body as called from sc.
func (w *walker) callFunc(name string, sc *scope, cx cmdCtx) {
	body := w.funcs[name]
	if body == nil || w.active[name] {
		return
	}
	if w.active == nil {
		w.active = map[string]bool{}
	}
	w.active[name] = true
	fcx := cx
	fcx.fn = name
	w.stmt(body, sc, fcx)
	delete(w.active, name)
}

// emit records a command, follows cd, and walks whatever the command itself runs:
// a wrapper's payload, a shell's -c string, eval's arguments, a script on stdin.
func (w *walker) emit(cmd *simpleCmd, sc *scope, cx cmdCtx) {
	if len(w.cmds) >= maxCommands {
		w.fail(errTooMany)
		return
	}
	w.cmds = append(w.cmds, cmd)
	name := cmd.Name()
	w.downloads(cmd)
	w.expandAlias(cmd, sc, cx)
	if name == "eval" {
		w.script(joinArgs(cmd.Args[1:]).Value, sc, cx)
		return
	}
	w.builtin(cmd, sc, cx)
	if w.funcs[name] != nil {
		w.callFunc(name, sc, cx)
	}
	w.emitAsPossiblePrograms(cmd, sc, cx)
	w.emitPayloads(cmd, sc, cx)
}

// builtin follows what a shell builtin does to the scope the next commands run in: the
// working directory, aliases, and variables it sets to values the checker cannot know.
func (w *walker) builtin(cmd *simpleCmd, sc *scope, cx cmdCtx) {
	switch cmd.Name() {
	case "cd", "pushd":
		w.cd(cmd, sc)
	case "popd":
		sc.cwd = ""
	case "alias":
		w.alias(cmd, sc, cx)
	case "unalias":
		for _, a := range cmd.Args[1:] {
			if a.Value == "-a" {
				w.aliases = nil
			}
			delete(w.aliases, a.Value)
		}
	case "read", "mapfile", "readarray", "unset":
		for _, a := range cmd.Args[1:] {
			if !strings.HasPrefix(a.Value, "-") {
				sc.forget(a.Value)
			}
		}
	case "printf":
		if len(cmd.Args) > 2 && cmd.Args[1].Value == "-v" {
			sc.forget(cmd.Args[2].Value)
		}
	case "getopts":
		if len(cmd.Args) > 2 {
			sc.forget(cmd.Args[2].Value)
		}
	case "source", ".":
		// The sourced file may set anything.
		sc.vars, sc.fetched = map[string]string{}, map[string]bool{}
	}
}

// alias checks each definition of an alias command and remembers it for the commands
// that use it: sh (dash) expands aliases even when not interactive.
func (w *walker) alias(cmd *simpleCmd, sc *scope, cx cmdCtx) {
	for _, a := range cmd.Args[1:] {
		if n, def, ok := strings.Cut(a.Value, "="); ok {
			w.script(def, sc.clone(), cx)
			if w.aliases == nil {
				w.aliases = map[string]string{}
			}
			w.aliases[n] = def
		}
	}
}

// emitAsPossiblePrograms checks a command whose program the checker cannot name as each
// program it may be.
func (w *walker) emitAsPossiblePrograms(cmd *simpleCmd, sc *scope, cx cmdCtx) {
	name := cmd.Name()
	if len(cmd.Args) > 0 && cmd.Args[0].UnknownStart && !cmd.Args[0].Split {
		// "$X" -rf /: the program is unknown; check the arguments as those of each
		// program whose rules read them.
		for _, target := range unknownProgramTargets {
			w.emitAs(cmd, target, sc, cx)
		}
	}
	if strings.ContainsAny(name, "*?[") {
		// A globbed program name (/bin/r?) may be any program it matches.
		for _, target := range globTargets {
			if ok, _ := path.Match(name, target); ok {
				w.emitAs(cmd, target, sc, cx)
			}
		}
	}
}

// emitAs emits cmd's arguments and redirections with program as its program.
func (w *walker) emitAs(cmd *simpleCmd, program string, sc *scope, cx cmdCtx) {
	alt := cmd.child(append([]arg{{Value: program}}, cmd.Args[1:]...))
	alt.Redirs = cmd.Redirs
	w.emit(alt, sc.clone(), cx)
}

// emitPayloads walks the commands and scripts cmd runs: a wrapper's payload, a -c
// string, a script a shell reads from a here-document or from the pipe.
func (w *walker) emitPayloads(cmd *simpleCmd, sc *scope, cx cmdCtx) {
	name := cmd.Name()
	if inner := unwrap(cmd); inner != nil {
		if name == "xargs" || name == "parallel" {
			inner = w.feedPayload(cmd, inner[0])
		}
		for _, in := range inner {
			if name == "command" || name == "builtin" {
				w.emit(in, sc, cx) // runs in this shell: command cd / lasts
			} else {
				w.emit(in, sc.clone(), cx)
			}
		}
	}
	if src, ok := runsString(cmd); ok {
		w.script(src.Value, sc.clone(), cmdCtx{bg: cx.bg})
	}
	if isShell(name) && readsStdin(cmd) {
		for _, r := range cmd.Redirs {
			if r.Body != nil {
				w.script(r.Body.Value, sc.clone(), cmdCtx{bg: cx.bg})
			}
		}
		if cx.stdinScript != nil {
			w.script(cx.stdinScript.Value, sc.clone(), cmdCtx{bg: cx.bg})
		}
	}
}

// expandAlias checks a command that uses an alias as the shell would run it: the
// alias's text followed by the command's other words.
func (w *walker) expandAlias(cmd *simpleCmd, sc *scope, cx cmdCtx) {
	if len(cmd.Args) == 0 || cmd.Args[0].Unknown {
		return
	}
	name := cmd.Args[0].Value
	def, ok := w.aliases[name]
	if !ok || w.expanding[name] {
		return
	}
	text := def
	for _, a := range cmd.Args[1:] {
		q := a.Value
		if !a.Unknown { // an unknown word stays an expansion, unknown again when re-read
			if quoted, err := syntax.Quote(a.Value, syntax.LangBash); err == nil {
				q = quoted
			}
		}
		text += " " + q
	}
	if w.expanding == nil {
		w.expanding = map[string]bool{}
	}
	w.expanding[name] = true
	w.script(text, sc, cx)
	delete(w.expanding, name)
}

// cd follows a change of directory; a target the checker cannot know makes the working
// directory unknown, so relative paths after it are judged as unknown too.
func (w *walker) cd(cmd *simpleCmd, sc *scope) {
	var target *arg
	for i := 1; i < len(cmd.Args); i++ {
		a := cmd.Args[i]
		if a.Value == "--" {
			if i+1 < len(cmd.Args) {
				target = &cmd.Args[i+1]
			}
			break
		}
		if strings.HasPrefix(a.Value, "-") && a.Value != "-" && !a.UnknownStart {
			continue
		}
		target = &cmd.Args[i]
		break
	}
	switch {
	case target == nil:
		sc.cwd = w.c.home
	case target.Value == "-":
		sc.cwd = ""
	default:
		abs, ok := w.c.resolve(*target, sc.cwd)
		if !ok {
			abs = ""
		}
		sc.cwd = abs
	}
}

// joinArgs is args as one word, as echo prints them: joined by spaces, fetched or
// unknown if any of them is.
func joinArgs(args []arg) arg {
	out := arg{}
	for i, a := range args {
		if i > 0 {
			out.Value += " "
		}
		out.Value += a.Value
		out.Fetch = out.Fetch || a.Fetch
		out.Unknown = out.Unknown || a.Unknown
	}
	return out
}

// downloads follows files that a download wrote earlier in the line (curl -o a.sh URL,
// wget URL, curl URL > /dev/shm/a): a later command that runs one as its program, or
// hands one to a shell or interpreter as its script, gets that word marked Fetch, for
// pipe-to-shell. Then it records what cmd itself downloads.
func (w *walker) downloads(cmd *simpleCmd) {
	if len(w.downloaded) > 0 && len(cmd.Args) > 0 {
		w.markDownloadedRuns(cmd)
	}
	if !fetchers[cmd.Name()] {
		return
	}
	for _, a := range downloadTargets(cmd) {
		if abs, ok := w.c.resolve(a, cmd.Cwd); ok {
			if w.downloaded == nil {
				w.downloaded = map[string]bool{}
			}
			w.downloaded[abs] = true
		}
	}
}

// markDownloadedRuns marks Fetch the program or script word of cmd that names a file
// downloaded earlier in the line.
func (w *walker) markDownloadedRuns(cmd *simpleCmd) {
	name := cmd.Name()
	isDownloaded := func(a arg) bool {
		abs, ok := w.c.resolve(a, cmd.Cwd)
		return ok && w.downloaded[abs]
	}
	if strings.Contains(cmd.Args[0].Value, "/") && isDownloaded(cmd.Args[0]) {
		cmd.Args[0].Fetch = true
	}
	if !isInterpreter(name) && name != "source" && name != "." {
		return
	}
	// The script is the first operand, unless the code comes from -c, -e or -m.
	for i := 1; i < len(cmd.Args); i++ {
		v := cmd.Args[i].Value
		if v == "-c" || v == "-e" || v == "-m" || v == "--" && i+1 == len(cmd.Args) {
			break
		}
		if strings.HasPrefix(v, "-") && v != "-" {
			continue
		}
		if isDownloaded(cmd.Args[i]) {
			cmd.Args[i].Fetch = true
		}
		break
	}
}

// downloadTargets returns the files a fetcher (curl, wget) writes: its redirections, its
// output options, and the URL's last segment when it saves under the remote name.
func downloadTargets(cmd *simpleCmd) []arg {
	name := cmd.Name()
	var out []arg
	for _, r := range cmd.Redirs {
		if writeRedirect(r) {
			out = append(out, r.Target)
		}
	}
	out = append(out, writeTargets(cmd)...)
	remoteName := name == "wget"
	for _, a := range cmd.Args[1:] {
		if a.Value == "-O" && name == "curl" || a.Value == "--remote-name" {
			remoteName = true
		}
	}
	if !remoteName {
		return out
	}
	// wget URL and curl -O URL save to the URL's last segment.
	for _, a := range cmd.Args[1:] {
		if _, rest, ok := strings.Cut(a.Value, "://"); ok && !a.Unknown {
			if _, p, ok := strings.Cut(rest, "/"); ok && path.Base(p) != "." && path.Base(p) != "/" {
				out = append(out, arg{Value: path.Base(p)})
			}
		}
	}
	return out
}
