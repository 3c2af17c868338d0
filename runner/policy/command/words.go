package command

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a simple command after a static expansion: quotes removed, escapes
// undone, braces expanded, and variables replaced where the script itself set them.
type arg struct {
	Value string
	// Unknown is set when part of the word comes from something the checker cannot know
	// statically: a variable it did not see assigned, a command substitution, arithmetic.
	Unknown bool
	// UnknownStart is set when the very first part is unknown, so the word could be any
	// path at all (rm -rf "$DIR/").
	UnknownStart bool
	// Fetch is set when a command or process substitution inside the word downloads
	// something (curl, wget): bash <(curl ...), sh -c "$(curl ...)".
	Fetch bool
	// Split is set when an unknown part is unquoted, so word splitting could turn the
	// word into several words (a whole command line: $cmd).
	Split bool
}

// scope is the shell state the walker follows as statements run in order: variables
// with literal values and the working directory. It is an approximation on purpose:
// conditionals are treated as if both branches ran, loops as if they ran once.
type scope struct {
	vars map[string]string
	// fetched marks variables holding downloaded text (x=$(curl ...)).
	fetched map[string]bool
	// cwd is absolute, or "" once a cd went somewhere the checker cannot tell.
	cwd string
	// ifsUnknown is set once IFS was given a value the checker cannot know: from then
	// on no unquoted expansion splits predictably. A known IFS is in vars.
	ifsUnknown bool
}

func (s *scope) clone() *scope {
	vars := make(map[string]string, len(s.vars))
	for k, v := range s.vars {
		vars[k] = v
	}
	fetched := make(map[string]bool, len(s.fetched))
	for k, v := range s.fetched {
		fetched[k] = v
	}
	return &scope{vars: vars, fetched: fetched, cwd: s.cwd, ifsUnknown: s.ifsUnknown}
}

func newScope(cwd string) *scope {
	return &scope{vars: map[string]string{}, fetched: map[string]bool{}, cwd: cwd}
}

// set records an assignment; a value the checker cannot know forgets the variable.
func (s *scope) set(name string, a arg, known bool) {
	if name == "IFS" {
		s.ifsUnknown = !known
	}
	if known {
		s.vars[name] = a.Value
	} else {
		delete(s.vars, name)
	}
	if a.Fetch {
		s.fetched[name] = true
	} else {
		delete(s.fetched, name)
	}
}

// forget makes variables unknown (read x, printf -v x, unset x).
func (s *scope) forget(names ...string) {
	for _, n := range names {
		delete(s.vars, n)
		delete(s.fetched, n)
		if n == "IFS" {
			s.ifsUnknown = true
		}
	}
}

// ifs returns the characters unquoted expansions split on, and false when they are
// unknown.
func (s *scope) ifs() (string, bool) {
	if s.ifsUnknown {
		return "", false
	}
	if v, ok := s.vars["IFS"]; ok {
		return v, true
	}
	return " \t\n", true
}

// maxBraceWords bounds brace expansion ({1..100000}) so a hostile line cannot make the
// checker allocate without limit; words past it are not checked individually, but the
// word is marked unknown.
const maxBraceWords = 256

// words expands one shell word into fields.
func (w *walker) words(word *syntax.Word, sc *scope) []arg {
	var out []arg
	n := 0
	syntax.SplitBraces(word)
	for bw, err := range expand.BracesSeq(nil, word) {
		if err != nil || n >= maxBraceWords {
			out = append(out, arg{Value: "{...}", Unknown: true, UnknownStart: true})
			break
		}
		n++
		out = append(out, w.fields(bw, sc)...)
	}
	return out
}

// fields renders a brace-free word. An unquoted variable with a known value is split on
// blanks, as the shell would (x="-rf /"; rm $x).
func (w *walker) fields(word *syntax.Word, sc *scope) []arg {
	var out []arg
	cur := arg{}
	started := false // cur has content or came from a quoted part
	flush := func() {
		if started {
			out = append(out, cur)
		}
		cur, started = arg{}, false
	}
	for i, part := range word.Parts {
		first := i == 0
		switch p := part.(type) {
		case *syntax.Lit:
			cur.Value += unescapeLit(p.Value)
			started = true
		case *syntax.SglQuoted:
			cur.Value += sglQuoted(p)
			started = true
		case *syntax.DblQuoted:
			for j, dp := range p.Parts {
				w.part(dp, sc, &cur, first && j == 0, true)
			}
			started = true
		case *syntax.ParamExp:
			val, known := w.param(p, sc)
			ifs, ifsKnown := sc.ifs()
			if !known {
				w.part(p, sc, &cur, first, false)
				started = true
				continue
			}
			if !ifsKnown {
				// With IFS unknown even a known value splits unpredictably (IFS=$x; $cmd).
				cur.Value += val
				cur.Unknown, cur.Split, started = true, true, true
				cur.UnknownStart = cur.UnknownStart || first
				continue
			}
			if ifs == "" {
				cur.Value += val // IFS='' turns splitting off
				started = started || val != ""
				continue
			}
			isIFS := func(r rune) bool { return strings.ContainsRune(ifs, r) }
			fs := strings.FieldsFunc(val, isIFS)
			if len(fs) == 0 {
				continue
			}
			if strings.IndexFunc(val[:1], isIFS) == 0 {
				flush()
			}
			for k, f := range fs {
				if k > 0 {
					flush()
				}
				cur.Value += f
				started = true
			}
			if strings.IndexFunc(val[len(val)-1:], isIFS) == 0 {
				flush()
			}
		default:
			w.part(p, sc, &cur, first, false)
			started = true
		}
	}
	flush()
	return out
}

// part appends one word part (inside double quotes when quoted) to cur.
func (w *walker) part(part syntax.WordPart, sc *scope, cur *arg, first, quoted bool) {
	unknown := func(text string) {
		cur.Value += text
		cur.Unknown = true
		cur.Split = cur.Split || !quoted
		if first {
			cur.UnknownStart = true
		}
	}
	switch p := part.(type) {
	case *syntax.Lit:
		if quoted {
			cur.Value += unescapeDouble(p.Value)
		} else {
			cur.Value += unescapeLit(p.Value)
		}
	case *syntax.SglQuoted:
		cur.Value += sglQuoted(p)
	case *syntax.DblQuoted:
		for j, dp := range p.Parts {
			w.part(dp, sc, cur, first && j == 0, true)
		}
	case *syntax.ParamExp:
		w.nested(p, sc) // ${x:-$(cmd)} runs cmd
		if val, ok := w.param(p, sc); ok {
			cur.Value += val
			return
		}
		name := "?"
		if p.Param != nil {
			name = p.Param.Value
		}
		if sc.fetched[name] {
			cur.Fetch = true
		}
		unknown("$" + name)
		if allElements(p) {
			// "${a[@]}" and "$@" are several words even quoted: any command line.
			cur.Split = true
		}
	case *syntax.CmdSubst:
		if w.substitution(p.Stmts, sc) {
			cur.Fetch = true
		}
		unknown("$(...)")
	case *syntax.ProcSubst:
		if w.substitution(p.Stmts, sc) {
			cur.Fetch = true
		}
		unknown(p.Op.String() + "...)")
	case *syntax.ArithmExp:
		w.nested(p, sc)
		unknown("$((_))") // a placeholder that still parses when re-read (bash -c "...")
	case *syntax.ExtGlob:
		cur.Value += p.Op.String() + p.Pattern.Value + ")"
	default:
		w.nested(p, sc)
		unknown("?")
	}
}

// allElements reports whether p expands to every element of an array or every
// positional parameter (${a[@]}, ${a[*]}, $@, $*), several words even inside quotes.
func allElements(p *syntax.ParamExp) bool {
	if p.Param != nil && (p.Param.Value == "@" || p.Param.Value == "*") {
		return true
	}
	if idx, ok := p.Index.(*syntax.Word); ok {
		lit := idx.Lit()
		return lit == "@" || lit == "*"
	}
	return false
}

// param returns a variable's value when the script itself set it to a literal (or it is
// HOME or PWD, which stand for known places).
func (w *walker) param(p *syntax.ParamExp, sc *scope) (string, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil ||
		p.Repl != nil || p.Exp != nil || p.Names != 0 || p.NestedParam != nil || len(p.Modifiers) > 0 {
		return "", false
	}
	name := p.Param.Value
	if v, ok := sc.vars[name]; ok {
		return v, true
	}
	switch name {
	case "HOME":
		return "~", true
	case "PWD":
		if sc.cwd != "" {
			return sc.cwd, true
		}
	}
	return "", false
}

// sglQuoted returns a single-quoted string's value, decoding $'...' escapes, which
// could otherwise hide a command name ($'\x72m' is rm).
func sglQuoted(q *syntax.SglQuoted) string {
	if !q.Dollar {
		return q.Value
	}
	return decodeANSIC(q.Value)
}

// decodeANSIC decodes the escapes of bash's $'...' strings.
func decodeANSIC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			maxDigits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 1
			for j < len(s) && j-i-1 < maxDigits && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default: // \\ \' \" \? and unknown escapes
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// unescapeLit undoes backslash escapes in an unquoted literal: \r\m is rm.
func unescapeLit(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble undoes the few escapes that work inside double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// resolve turns a word into an absolute, lexically clean path. ok is false when the
// word's location cannot be known: it starts with an unknown expansion, or it is
// relative and the working directory is unknown.
func (c *checker) resolve(a arg, cwd string) (string, bool) {
	if a.UnknownStart {
		return "", false
	}
	p := a.Value
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return path.Clean(c.home + p[1:]), true
	case strings.HasPrefix(p, "~"):
		// ~user: another user's home, outside the workspace in any case.
		user, rest, _ := strings.Cut(p[1:], "/")
		return path.Clean("/home/" + user + "/" + rest), true
	case strings.HasPrefix(p, "/"):
		return path.Clean(p), true
	case cwd == "":
		return "", false
	}
	return path.Join(cwd, p), true
}

// inside reports whether abs is the workspace or below it.
func (c *checker) inside(abs string) bool {
	return abs == c.workspace || strings.HasPrefix(abs, c.workspace+"/")
}

// under reports whether abs is dir or below it.
func under(abs, dir string) bool {
	return abs == dir || strings.HasPrefix(abs, strings.TrimSuffix(dir, "/")+"/")
}
