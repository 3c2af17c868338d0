package command

import (
	"path"
	"strings"
)

// xargsInput is the word xargs (or parallel) adds to its command from stdin. Its
// location is known only when the previous stage of the pipeline lists paths inside
// the workspace (find ., ls src, git ls-files), or outside it (find /); otherwise it is unknown, which the
// path rules treat as possibly anywhere (ls / | xargs rm -rf).
func (w *walker) xargsInput(cmd *simpleCmd) arg {
	// Both spellings survive being pasted into a string a shell parses again
	// (xargs -I{} sh -c 'rm -rf {}'): the unknown one stays an unknown variable.
	if cmd.StdinInside && cmd.Cwd != "" {
		return arg{Value: path.Join(cmd.Cwd, "xargs-input")}
	}
	if cmd.StdinOutside != "" {
		// find / -print0 | xargs -0 rm -f: the files are known to lie outside; their
		// names are still unknown text (pasted into sh -c code, unchecked).
		return arg{Value: path.Join(cmd.StdinOutside, "xargs-input"), Unknown: true}
	}
	return arg{Value: "$XARGS_INPUT", Unknown: true, UnknownStart: true, Split: true}
}

// xargsReplace returns the replace string of xargs -I/-i/--replace, "" when there is
// none (each input is then appended to the command).
func xargsReplace(cmd *simpleCmd) string {
	for i, a := range cmd.Args[1:] {
		v := a.Value
		switch {
		case v == "-I" || v == "--replace":
			if i+2 < len(cmd.Args) && v == "-I" {
				return cmd.Args[i+2].Value
			}
			return "{}"
		case strings.HasPrefix(v, "-I"):
			return v[2:]
		case v == "-i":
			return "{}"
		case strings.HasPrefix(v, "-i") && !strings.HasPrefix(v, "--"):
			return v[2:]
		case strings.HasPrefix(v, "--replace="):
			return strings.TrimPrefix(v, "--replace=")
		case !strings.HasPrefix(v, "-"):
			return ""
		}
	}
	return ""
}

// withInput returns payload's words with input in place of the replace string, or
// appended when there is none (or it does not occur).
func withInput(payload []arg, replace string, input arg) []arg {
	out := make([]arg, 0, len(payload)+1)
	used := false
	for _, a := range payload {
		if replace != "" && strings.Contains(a.Value, replace) {
			used = true
			n := a
			n.Value = strings.ReplaceAll(a.Value, replace, input.Value)
			n.Unknown = n.Unknown || input.Unknown
			n.Split = n.Split || input.Split
			n.UnknownStart = n.UnknownStart || (input.UnknownStart && strings.HasPrefix(a.Value, replace))
			out = append(out, n)
			continue
		}
		out = append(out, a)
	}
	if !used {
		out = append(out, input)
	}
	return out
}

// feedPayload gives xargs's or parallel's command the arguments it will get: for
// parallel, each input after ::: in turn (one command per input); otherwise the stdin
// input (see xargsInput).
func (w *walker) feedPayload(cmd, inner *simpleCmd) []*simpleCmd {
	replace := "{}"
	if cmd.Name() == "xargs" {
		replace = xargsReplace(cmd)
	}
	args := inner.Args
	for i, a := range args {
		switch a.Value {
		case ":::", ":::+":
			var out []*simpleCmd
			for _, in := range args[i+1:] {
				if strings.HasPrefix(in.Value, ":::") {
					break
				}
				out = append(out, inner.child(withInput(args[:i], replace, in)))
			}
			if len(out) > 0 {
				return out
			}
			return []*simpleCmd{inner.child(withInput(args[:i], replace, w.xargsInput(&simpleCmd{})))}
		case "::::", "::::+": // inputs read from files: unknown
			return []*simpleCmd{inner.child(withInput(args[:i], replace, w.xargsInput(&simpleCmd{})))}
		}
	}
	return []*simpleCmd{inner.child(withInput(args, replace, w.xargsInput(cmd)))}
}

// listsInside reports whether a pipeline stage's output is a list of paths inside the
// workspace: a find, ls or git ls-files whose starting points all are.
func (w *walker) listsInside(added []*simpleCmd) bool {
	starts, ok := w.listed(added)
	if !ok {
		return false
	}
	for _, s := range starts {
		if !s.inside {
			return false
		}
	}
	return true
}

// listsOutside returns a starting point outside the workspace of a pipeline stage that
// lists paths (find /, ls ~), "" when it has none: what it prints lies there.
func (w *walker) listsOutside(added []*simpleCmd) string {
	starts, _ := w.listed(added)
	for _, s := range starts {
		if !s.inside && s.abs != "" {
			return s.abs
		}
	}
	return ""
}

// start is a listing's starting point: its absolute path ("" when unknown) and whether
// everything below it lies inside the workspace.
type start struct {
	abs    string
	inside bool
}

// listed returns the starting points of a stage that lists paths (find, ls, git
// ls-files), and false for any other stage.
func (w *walker) listed(added []*simpleCmd) ([]start, bool) {
	if len(added) != 1 {
		return nil, false
	}
	c := added[0]
	var starts []arg
	switch c.Name() {
	case "find":
		for _, a := range c.Args[1:] {
			if a.Value == "-H" || a.Value == "-L" || a.Value == "-P" {
				continue
			}
			if strings.HasPrefix(a.Value, "-") || a.Value == "(" || a.Value == "!" {
				break
			}
			starts = append(starts, a)
		}
	case "ls":
		for _, a := range c.Args[1:] {
			if !strings.HasPrefix(a.Value, "-") || a.UnknownStart {
				starts = append(starts, a)
			}
		}
	case "git":
		if len(c.Args) < 2 || c.Args[1].Value != "ls-files" {
			return nil, false
		}
	default:
		return nil, false
	}
	if len(starts) == 0 {
		starts = []arg{{Value: "."}}
	}
	out := make([]start, 0, len(starts))
	for _, s := range starts {
		abs, ok := w.c.resolve(s, c.Cwd)
		if !ok {
			out = append(out, start{})
			continue
		}
		out = append(out, start{abs: abs, inside: w.c.inside(abs) && (!hasGlob(s.Value) || w.c.inside(path.Dir(abs)))})
	}
	return out, true
}
