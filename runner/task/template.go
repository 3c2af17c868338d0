package task

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/goccy/go-yaml/ast"
)

// Templating applies Go's text/template (missingkey=error) to the values a case may vary,
// and only there: prompt, system, description, env values, workspace setup commands, the
// workspace files workspace.template names (opt-in, so code with braces is left alone),
// every value under assert: and reference:. Nothing else of the file is a template.
var templatedKeys = []string{"prompt", "system", "description", "env", "assert", "reference"}

// templater fills one case's values into a freshly parsed task file, in place.
type templater struct {
	d       *decoder
	vars    map[string]any
	where   string // the case, for messages: " (case language=go)"
	visited map[ast.Node]bool
}

// template fills the case's values into the templated values of root. Every problem is
// recorded with its position in the task file.
func (l *loader) template(root ast.Node, vars map[string]any, where string) {
	tp := &templater{d: l.d, vars: vars, where: where, visited: map[ast.Node]bool{}}
	es, _ := l.d.entries(root, "")
	for _, e := range es {
		switch {
		case e.key == "workspace":
			tp.workspace(e.value, e.key)
		case contains(templatedKeys, e.key):
			tp.walk(e.value, e.key)
		}
	}
}

// workspace templates setup commands and the files workspace.template names.
func (tp *templater) workspace(n ast.Node, field string) {
	d := tp.d
	es, _ := d.entries(n, field)
	var globs []string
	var files *entry
	for i, e := range es {
		switch e.key {
		case "setup":
			tp.walk(e.value, join(field, e.key))
		case "template":
			globs = d.stringList(e.value, join(field, e.key))
		case "files":
			files = &es[i]
		}
	}
	if files == nil || len(globs) == 0 {
		return
	}
	fes, _ := d.entries(files.value, join(field, "files"))
	for _, fe := range fes {
		for _, g := range globs {
			if ok, _ := doublestar.Match(g, fe.key); ok {
				tp.walk(fe.value, mapKey(join(field, "files"), fe.key))
				break
			}
		}
	}
}

// walk templates every string under n.
func (tp *templater) walk(n ast.Node, field string) {
	if n == nil || tp.visited[n] {
		return
	}
	tp.visited[n] = true
	switch v := n.(type) {
	case *ast.AnchorNode:
		tp.walk(v.Value, field)
	case *ast.TagNode:
		tp.walk(v.Value, field)
	case *ast.MappingNode:
		for _, mv := range v.Values {
			tp.walk(mv, field)
		}
	case *ast.MappingValueNode:
		key := ""
		if k, ok := tp.d.key(v.Key, field); ok {
			key = k
		}
		tp.walk(v.Value, join(field, key))
	case *ast.SequenceNode:
		for i, it := range v.Values {
			tp.walk(it, index(field, i))
		}
	case *ast.StringNode:
		if out, ok := tp.fill(n, field, v.Value, 0); ok {
			v.Value = out
		}
	case *ast.LiteralNode:
		if out, ok := tp.fill(n, field, v.Value.Value, 1); ok {
			v.Value.Value = out
		}
	}
}

// templateLine finds the line and column text/template gives in its errors.
var templateLine = regexp.MustCompile(`^template: [^:]*:(\d+):(?:(\d+):)?\s*(?:executing "[^"]*" at <[^>]*>: )?(.*)$`)

// fill runs one value as a template; firstLine is how many lines after the node's own the
// value starts (1 for a block scalar), to place an error on the line it is about.
func (tp *templater) fill(n ast.Node, field, text string, firstLine int) (string, bool) {
	if !strings.Contains(text, "{{") {
		return text, false
	}
	t, err := template.New(field).Option("missingkey=error").Parse(text)
	if err == nil {
		var b strings.Builder
		if err = t.Execute(&b, tp.vars); err == nil {
			return b.String(), true
		}
	}
	pos := tp.d.posOf(n)
	msg := err.Error()
	if m := templateLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		pos.Line += line - 1 + firstLine
		if firstLine > 0 {
			pos.Column = 1
		}
		msg = m[3]
	}
	if key, ok := missingKey(err); ok {
		msg = fmt.Sprintf("no variable %q%s", key, tp.known())
	}
	tp.d.errs = append(tp.d.errs, &Error{Pos: pos, Field: field, Msg: "template: " + msg + tp.where, Err: err})
	return "", false
}

// missingKey recognises missingkey=error's failure.
func missingKey(err error) (string, bool) {
	var ee template.ExecError
	if !errors.As(err, &ee) {
		return "", false
	}
	_, key, ok := strings.Cut(ee.Error(), `map has no entry for key "`)
	if !ok {
		return "", false
	}
	return strings.TrimSuffix(key, `"`), true
}

func (tp *templater) known() string {
	names := make([]string, 0, len(tp.vars))
	for k := range tp.vars {
		names = append(names, k)
	}
	if len(names) == 0 {
		return "; the task declares none (vars:, matrix: or dataset:)"
	}
	sort.Strings(names)
	return "; known: " + strings.Join(names, ", ")
}

// templateGlobs checks workspace.template: doublestar globs over the paths of
// workspace.files whose content is a template.
func (l *loader) templateGlobs(n ast.Node, field string) []string {
	items, _ := l.d.items(n, field)
	var globs []string
	for i, it := range items {
		f := index(field, i)
		s, ok := l.d.nonEmpty(it, f)
		switch {
		case !ok:
		case !doublestar.ValidatePattern(s):
			l.d.fail(it, f, "invalid glob %q", s)
		default:
			globs = append(globs, s)
		}
	}
	if !l.templated {
		l.d.warn(n, field, "has no effect: the task declares no vars:, matrix: or dataset:, so nothing is templated")
	}
	return globs
}
