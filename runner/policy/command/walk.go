package command

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// simpleCmd is one simple command found anywhere in a line, with the context the rules
// need: where it runs, what feeds its stdin, which function it sits in.
type simpleCmd struct {
	Args   []arg
	Redirs []redir
	// Func is the enclosing function's name, if any (fork bombs call themselves).
	Func string
	// Piped is set for a stage of a pipeline; Background for a command run with &.
	Piped, Background bool
	// LoopBackground is set for a command started in the background on every turn of a
	// loop that never ends (while true; do cmd & done).
	LoopBackground bool
	// StdinNet is set when an earlier stage of the pipeline downloads something.
	StdinNet bool
	// StdinUnknown is set when an earlier stage writes something other than a literal
	// echo or printf (whose text, piped into a shell, is checked as a script).
	StdinUnknown bool
	// StdinInside is set when the previous stage lists paths inside the workspace.
	StdinInside bool
	// StdinOutside is a directory outside the workspace whose paths the previous stage
	// lists (find / ...), "" when none.
	StdinOutside string
	// Cwd is the working directory the command runs in, "" when unknown.
	Cwd string
}

type redir struct {
	Op     syntax.RedirOperator
	Target arg
	// Body is a here-document's or here-string's text.
	Body *arg
}

// Words returns the command's words as plain strings.
func (c *simpleCmd) Words() []string {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		out[i] = a.Value
	}
	return out
}

// Line is the words joined by single spaces: what command_rules match against.
func (c *simpleCmd) Line() string { return strings.Join(c.Words(), " ") }

// Name is the base name of the program run, "" when it is not known.
func (c *simpleCmd) Name() string {
	if len(c.Args) == 0 || c.Args[0].UnknownStart {
		return ""
	}
	return path.Base(c.Args[0].Value)
}

// child makes a command run by c (a wrapper's payload) in the same context.
func (c *simpleCmd) child(args []arg) *simpleCmd {
	return &simpleCmd{Args: args, Func: c.Func, Piped: c.Piped, Background: c.Background, LoopBackground: c.LoopBackground, StdinNet: c.StdinNet,
		StdinUnknown: c.StdinUnknown, StdinInside: c.StdinInside, StdinOutside: c.StdinOutside, Cwd: c.Cwd}
}

// cmdCtx is what a statement inherits from the statements around it.
type cmdCtx struct {
	fn        string
	piped, bg bool
	// endless is set inside the body of a loop that never ends; loopBg once a statement
	// there runs in the background.
	endless, loopBg bool
	stdinNet        bool
	// stdinScript is text piped in by echo or printf, which a shell would run.
	stdinScript *arg
	// stdinUnknown, stdinInside and stdinOutside: see simpleCmd.
	stdinUnknown, stdinInside bool
	stdinOutside              string
}

// walker collects every simple command of a line, re-parsing strings that a shell will
// run (bash -c, eval, here-documents fed to a shell).
type walker struct {
	c     *checker
	cmds  []*simpleCmd
	depth int
	err   error
	// funcs are the functions defined so far; active the ones being walked (a
	// function that calls itself is walked once).
	funcs  map[string]*syntax.Stmt
	active map[string]bool
	// aliases are the aliases defined so far (name -> text); expanding marks those
	// being expanded (an alias may use its own name: alias ls='ls -F').
	aliases   map[string]string
	expanding map[string]bool
	// downloaded are the files downloads wrote so far (curl -o a.sh URL), by absolute path.
	downloaded map[string]bool
}

// maxDepth bounds nested re-parsing (bash -c "bash -c '...'").
const maxDepth = 8

var errTooDeep = errors.New("commands nested more than 8 levels deep (bash -c inside bash -c ...)")

// script parses src and walks it.
func (w *walker) script(src string, sc *scope, cx cmdCtx) {
	if w.depth >= maxDepth {
		w.fail(errTooDeep)
		return
	}
	f, err := parse(src)
	if err != nil {
		w.fail(err)
		return
	}
	w.depth++
	w.stmts(f.Stmts, sc, cx)
	w.depth--
}

func (w *walker) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// parse reads a line as bash, falling back to POSIX sh: run_in_terminal uses sh -c, and
// a line either shell accepts can run somewhere.
func parse(src string) (*syntax.File, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err == nil {
		return f, nil
	}
	if f2, err2 := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), ""); err2 == nil {
		return f2, nil
	}
	return nil, fmt.Errorf("parse command line: %w", err)
}

func (w *walker) stmts(ss []*syntax.Stmt, sc *scope, cx cmdCtx) {
	for _, s := range ss {
		w.stmt(s, sc, cx)
	}
}

func (w *walker) stmt(s *syntax.Stmt, sc *scope, cx cmdCtx) {
	cx.bg = cx.bg || s.Background || s.Coprocess || s.Disown
	cx.loopBg = cx.loopBg || cx.endless && (s.Background || s.Coprocess)
	redirs := w.redirs(s.Redirs, sc)
	if ce, ok := s.Cmd.(*syntax.CallExpr); ok {
		w.call(ce, redirs, sc, cx)
		return
	}
	if len(redirs) > 0 {
		// Redirections of a compound command ({ ...; } > /etc/x) or of none at all.
		w.cmds = append(w.cmds, &simpleCmd{Redirs: redirs, Func: cx.fn, Piped: cx.piped, Background: cx.bg, Cwd: sc.cwd})
	}
	w.compound(s, sc, cx)
}

// compound walks a statement that is not a simple command: a pipeline or list, a
// subshell or block, a loop, a condition, a function definition, a declaration.
func (w *walker) compound(s *syntax.Stmt, sc *scope, cx cmdCtx) {
	switch cmd := s.Cmd.(type) {
	case nil:
	case *syntax.BinaryCmd:
		if cmd.Op == syntax.Pipe || cmd.Op == syntax.PipeAll {
			w.pipeline(s, sc, cx)
			return
		}
		w.stmt(cmd.X, sc, cx)
		w.stmt(cmd.Y, sc, cx)
	case *syntax.Subshell:
		w.stmts(cmd.Stmts, sc.clone(), cx)
	case *syntax.Block:
		w.stmts(cmd.Stmts, sc, cx)
	case *syntax.IfClause:
		for c := cmd; c != nil; c = c.Else {
			w.stmts(c.Cond, sc, cx)
			w.stmts(c.Then, sc, cx)
		}
	case *syntax.WhileClause:
		w.stmts(cmd.Cond, sc, cx)
		body := cx
		body.endless = body.endless || endless(cmd)
		w.stmts(cmd.Do, sc, body)
	case *syntax.ForClause:
		w.forClause(cmd, sc, cx)
	case *syntax.CaseClause:
		w.caseClause(cmd, sc, cx)
	case *syntax.FuncDecl:
		w.funcDecl(cmd, sc, cx)
	case *syntax.DeclClause:
		w.decl(cmd, sc, cx)
	case *syntax.TimeClause:
		if cmd.Stmt != nil {
			w.stmt(cmd.Stmt, sc, cx)
		}
	case *syntax.CoprocClause:
		cx.bg = true
		w.stmt(cmd.Stmt, sc, cx)
	case *syntax.TestDecl:
		w.stmt(cmd.Body, sc, cx)
	default: // arithmetic, [[ ]], let: only their substitutions run commands
		w.nested(cmd, sc)
	}
}

// forClause walks a for loop: its word list or C-style header, then its body.
func (w *walker) forClause(cmd *syntax.ForClause, sc *scope, cx cmdCtx) {
	if it, ok := cmd.Loop.(*syntax.WordIter); ok {
		for _, wd := range it.Items {
			w.words(wd, sc)
		}
		// The loop variable takes values the checker does not follow.
		if it.Name != nil {
			sc.forget(it.Name.Value)
		}
	} else {
		w.nested(cmd.Loop, sc)
	}
	body := cx
	if c, ok := cmd.Loop.(*syntax.CStyleLoop); ok && c.Cond == nil {
		body.endless = true // for ((;;))
	}
	w.stmts(cmd.Do, sc, body)
}

// caseClause walks a case statement: its word, each pattern's substitutions, each body.
func (w *walker) caseClause(cmd *syntax.CaseClause, sc *scope, cx cmdCtx) {
	w.words(cmd.Word, sc)
	for _, item := range cmd.Items {
		for _, p := range item.Patterns {
			w.nested(p, sc)
		}
		w.stmts(item.Stmts, sc, cx)
	}
}

// funcDecl records a function and checks its body where it is defined, as if it ran
// there; callFunc checks it again where it is called, in the caller's scope (a cd inside
// it lasts).
func (w *walker) funcDecl(cmd *syntax.FuncDecl, sc *scope, cx cmdCtx) {
	names := cmd.Names
	if cmd.Name != nil {
		names = append([]*syntax.Lit{cmd.Name}, names...)
	}
	if len(names) == 0 { // an anonymous function runs at once
		w.stmt(cmd.Body, sc.clone(), cx)
	}
	if w.funcs == nil {
		w.funcs = map[string]*syntax.Stmt{}
	}
	for _, n := range names {
		w.funcs[n.Value] = cmd.Body
		w.callFunc(n.Value, sc.clone(), cx)
	}
}

// endless reports whether a while or until loop never ends by its condition: while
// true, while :, until false.
func endless(c *syntax.WhileClause) bool {
	if len(c.Cond) != 1 {
		return false
	}
	ce, ok := c.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) != 1 || c.Cond[0].Negated {
		return false
	}
	switch ce.Args[0].Lit() {
	case "true", ":":
		return !c.Until
	case "false":
		return c.Until
	}
	return false
}

// pipeline walks the stages of a | b | c left to right, telling each stage whether an
// earlier one downloads something or echoes a script.
func (w *walker) pipeline(s *syntax.Stmt, sc *scope, cx cmdCtx) {
	var stages []*syntax.Stmt
	var flatten func(*syntax.Stmt)
	flatten = func(st *syntax.Stmt) {
		if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(st.Redirs) == 0 {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, st)
	}
	flatten(s)
	net := cx.stdinNet
	script := cx.stdinScript
	inside, outside := false, ""
	for i, st := range stages {
		scx := cx
		scx.piped = true
		scx.stdinNet = net
		scx.stdinScript = nil
		if i > 0 {
			scx.stdinScript = script
			scx.stdinUnknown = script == nil || script.Unknown
			scx.stdinInside = inside
			scx.stdinOutside = outside
		}
		n := len(w.cmds)
		// Each stage runs in its own subshell: a cd there does not last.
		w.stmt(st, sc.clone(), scx)
		added := w.cmds[n:]
		net = net || fetches(added)
		script = echoed(st, added)
		inside = w.listsInside(added)
		outside = w.listsOutside(added)
	}
}

// echoed returns the text a stage prints when it is a plain echo or printf.
func echoed(st *syntax.Stmt, added []*simpleCmd) *arg {
	if _, ok := st.Cmd.(*syntax.CallExpr); !ok || len(added) != 1 {
		return nil
	}
	c := added[0]
	switch c.Name() {
	case "echo", "printf":
	default:
		return nil
	}
	args := c.Args[1:]
	for len(args) > 0 && c.Name() == "echo" && strings.HasPrefix(args[0].Value, "-") {
		args = args[1:]
	}
	out := joinArgs(args)
	if c.Name() == "printf" && len(args) > 0 {
		// printf interprets its format: decode escapes (printf '\162m -rf /' prints rm -rf /);
		// with conversions (%s, %b) what it prints is not followed.
		out = arg{Value: decodeANSIC(args[0].Value), Fetch: out.Fetch, Unknown: out.Unknown || strings.Contains(args[0].Value, "%")}
	}
	return &out
}

// substitution walks the commands of $(...) or <(...) and reports whether they download.
func (w *walker) substitution(ss []*syntax.Stmt, sc *scope) bool {
	n := len(w.cmds)
	w.stmts(ss, sc.clone(), cmdCtx{})
	return fetches(w.cmds[n:])
}

// nested finds the command and process substitutions inside any node (arithmetic,
// test expressions, parameter defaults) and walks their commands.
func (w *walker) nested(node syntax.Node, sc *scope) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.substitution(n.Stmts, sc)
			return false
		case *syntax.ProcSubst:
			w.substitution(n.Stmts, sc)
			return false
		}
		return true
	})
}

func (w *walker) redirs(rs []*syntax.Redirect, sc *scope) []redir {
	var out []redir
	for _, r := range rs {
		rd := redir{Op: r.Op}
		if r.Word != nil {
			if as := w.words(r.Word, sc); len(as) > 0 {
				rd.Target = as[0]
			}
		}
		switch {
		case r.Hdoc != nil:
			body := w.quoted(r.Hdoc, sc)
			rd.Body = &body
		case r.Op == syntax.WordHdoc:
			body := rd.Target
			rd.Body = &body
		}
		out = append(out, rd)
	}
	return out
}

// quoted renders a word as one string, as inside double quotes (here-document bodies).
func (w *walker) quoted(word *syntax.Word, sc *scope) arg {
	var a arg
	for i, p := range word.Parts {
		w.part(p, sc, &a, i == 0, true)
	}
	return a
}

func (w *walker) call(ce *syntax.CallExpr, redirs []redir, sc *scope, cx cmdCtx) {
	var args []arg
	for _, wd := range ce.Args {
		args = append(args, w.words(wd, sc)...)
	}
	for _, as := range ce.Assigns {
		val, known := w.assign(as, sc)
		if len(ce.Args) > 0 || as.Name == nil {
			continue // FOO=1 cmd: the value is for cmd's environment only
		}
		sc.set(as.Name.Value, val, known)
	}
	if len(args) == 0 {
		if len(redirs) > 0 {
			w.cmds = append(w.cmds, &simpleCmd{Redirs: redirs, Func: cx.fn, Piped: cx.piped, Background: cx.bg, Cwd: sc.cwd})
		}
		return
	}
	cmd := &simpleCmd{Args: args, Redirs: redirs, Func: cx.fn, Piped: cx.piped, Background: cx.bg, LoopBackground: cx.loopBg, StdinNet: cx.stdinNet,
		StdinUnknown: cx.stdinUnknown, StdinInside: cx.stdinInside, StdinOutside: cx.stdinOutside, Cwd: sc.cwd}
	w.emit(cmd, sc, cx)
}

func (w *walker) assign(as *syntax.Assign, sc *scope) (arg, bool) {
	if as.Array != nil {
		w.nested(as.Array, sc)
		return arg{}, false
	}
	if as.Index != nil {
		w.nested(as.Index, sc)
		return arg{}, false
	}
	if as.Value == nil {
		return arg{}, !as.Naked
	}
	a := w.quoted(as.Value, sc)
	return a, !a.Unknown && !as.Append
}

func (w *walker) decl(d *syntax.DeclClause, sc *scope, cx cmdCtx) {
	args := []arg{{Value: d.Variant.Value}}
	// declare -n makes a name reference: its value names another variable, whose value
	// (x=/ later) the checker does not follow, so the reference is unknown.
	nameref := false
	for _, as := range d.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			if lit := as.Value.Lit(); strings.HasPrefix(lit, "-") && strings.Contains(lit, "n") {
				nameref = true
			}
		}
	}
	for _, as := range d.Args {
		if as.Naked {
			if as.Name != nil {
				args = append(args, arg{Value: as.Name.Value})
			} else if as.Value != nil {
				args = append(args, w.words(as.Value, sc)...)
			}
			continue
		}
		val, known := w.assign(as, sc)
		if as.Name == nil {
			continue
		}
		known = known && !nameref
		sc.set(as.Name.Value, val, known)
		args = append(args, arg{Value: as.Name.Value + "=" + val.Value, Unknown: !known, Fetch: val.Fetch})
	}
	w.cmds = append(w.cmds, &simpleCmd{Args: args, Func: cx.fn, Piped: cx.piped, Background: cx.bg, Cwd: sc.cwd})
}
