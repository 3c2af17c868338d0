package task

import (
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// DefaultCommandTimeout bounds a command assertion that sets no timeout.
const DefaultCommandTimeout = 60 * time.Second

// AssertionKind is one row of the registry of assertion kinds: the key of an assert:
// entry, the line the schema shows, how its value is written, and its decoder. The
// checker is the kind's row in runner/assert; a new kind is its files plus one row each.
type AssertionKind struct {
	Name string
	Doc  string
	// Spec is a zero value of a struct kind's Spec type, which the schema describes field
	// by field (a Go name or scalar alone becomes a oneOf). Schema is the JSON Schema of a
	// scalar kind's value.
	Spec   any
	Schema string
	decode func(l *loader, n ast.Node, f string) (any, bool)
}

// Kinds are the assertion kinds, in the order of the documentation.
var Kinds = []AssertionKind{
	{Name: KindCompleted, Doc: "Whether task_complete was called (true) or not (false).", Schema: `{"type": "boolean"}`,
		decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.d.boolean(n, f) }},
	{Name: KindFileExists, Doc: "This file exists at the end.", Schema: `{"$ref": "#/$defs/path"}`,
		decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.wsPath(n, f) }},
	{Name: KindFileAbsent, Doc: "This file does not exist at the end.", Schema: `{"$ref": "#/$defs/path"}`,
		decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.wsPath(n, f) }},
	{Name: KindFileContains, Doc: "A file contains a substring.", Spec: FileContains{}, decode: (*loader).fileContains},
	{Name: KindFileMatches, Doc: "A file matches a regex.", Spec: FileMatches{}, decode: (*loader).fileMatches},
	{Name: KindFileEquals, Doc: "A file's exact content.", Spec: FileEquals{}, decode: (*loader).fileEquals},
	{Name: KindCommand, Doc: "A shell command run in the final workspace (after verify files are added).", Spec: CommandCheck{},
		decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.command(n, f) }},
	{Name: KindToolCalled, Doc: "A tool was executed (denied calls do not count): a name, or a block.", Spec: ToolCalled{},
		Schema: `{"$ref": "#/$defs/toolName"}`,
		decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.toolCalled(n, f) }},
	{Name: KindToolNotCalled, Doc: "This tool was never executed.", Schema: `{"$ref": "#/$defs/toolName"}`, decode: (*loader).toolNotCalled},
	{Name: KindStepsAtMost, Doc: "The agent finished within this many steps (model responses).", Schema: `{"type": "integer", "minimum": 1}`,
		decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.d.atLeast(n, f, 1) }},
	{Name: KindSummaryMatches, Doc: "The task_complete summary matches this regex.", Schema: `{"$ref": "#/$defs/regex"}`,
		decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.d.regex(n, f) }},
	{Name: KindDeniedAtMost, Doc: "At most this many calls were denied by the approval policy or command rules.", Schema: `{"type": "integer", "minimum": 0}`,
		decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.d.atLeast(n, f, 0) }},
	{Name: KindJudge, Doc: "A model grades the work against the rubric, seeing the task's prompt, the files named and the agent's summary, and answers through a verdict tool call (score 0..1, reasoning). Passes when score >= min_score. The judge's own failures (unreachable, no verdict) are scenario errors; its tokens are counted apart (judge_usage).",
		Spec: Judge{}, decode: func(l *loader, n ast.Node, f string) (any, bool) { return l.judge(n, f) }},
}

// AssertionKinds lists the names of Kinds, in order.
var AssertionKinds = func() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.Name
	}
	return out
}()

var (
	fileContainsFields = keysOf(FileContains{})
	fileMatchesFields  = keysOf(FileMatches{})
	fileEqualsFields   = keysOf(FileEquals{})
	commandFields      = keysOf(CommandCheck{})
	toolCalledFields   = keysOf(ToolCalled{})
)

// single decodes a single-key mapping such as `- file_exists: out.txt` or
// `- read_file: {path: a}`, the shape of assert: and reference: entries.
func (l *loader) single(n ast.Node, field, what, example string) (entry, bool) {
	d := l.d
	r, _, ok := d.resolve(n, field)
	if !ok {
		return entry{}, false
	}
	switch r.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		d.fail(r, field, "expected a single-key mapping like %q, got %s", example, describe(r))
		return entry{}, false
	}
	es, ok := d.entries(r, field)
	if !ok {
		return entry{}, false
	}
	switch {
	case len(es) == 0:
		d.fail(r, field, "empty entry; expected a single-key mapping like %q", example)
		return entry{}, false
	case len(es) > 1:
		keys := make([]string, len(es))
		for i, e := range es {
			keys[i] = e.key
		}
		if v, _, _ := d.resolve(es[0].value, field); isNull(v) {
			d.fail(r, field, "%s has one key, but found %s; indent %s under %s",
				what, strings.Join(keys, ", "), strings.Join(keys[1:], ", "), keys[0])
		} else {
			d.fail(r, field, "%s has one key, but found %s", what, strings.Join(keys, ", "))
		}
		return entry{}, false
	}
	return es[0], true
}

func isNull(n ast.Node) bool {
	_, null := n.(*ast.NullNode)
	return n == nil || null
}

func (l *loader) assertions(n ast.Node, field string) {
	items, _ := l.d.items(n, field)
	for i, it := range items {
		f := index(field, i)
		e, ok := l.single(it, f, "an assertion", "- file_exists: out.txt")
		if !ok {
			continue
		}
		if !contains(AssertionKinds, e.key) {
			l.d.fail(e.keyAt, f, "unknown assertion kind %q%s", e.key, suggest(e.key, AssertionKinds, "known kinds"))
			continue
		}
		spec, ok := l.assertion(e.key, e.value, join(f, e.key))
		if ok {
			l.t.Assert = append(l.t.Assert, Assertion{Kind: e.key, Spec: spec, Pos: l.d.posOf(it)})
		}
	}
}

// assertion decodes one kind's value into its Spec type.
func (l *loader) assertion(kind string, n ast.Node, f string) (any, bool) {
	for _, k := range Kinds {
		if k.Name == kind {
			return k.decode(l, n, f)
		}
	}
	panic("task: unhandled assertion kind " + kind) // the caller checked AssertionKinds
}

func (l *loader) toolNotCalled(n ast.Node, f string) (any, bool) {
	name, ok := l.d.nonEmpty(n, f)
	if !ok {
		return "", false
	}
	return l.tool(n, f, name)
}

func (l *loader) fileContains(n ast.Node, f string) (any, bool) {
	var s FileContains
	ok := l.fields(n, f, fileContainsFields, []string{"path", "text"}, func(e entry, f string) bool {
		return l.fileField(e, f, &s.Path, &s.Text, "text")
	})
	return s, ok
}

func (l *loader) fileMatches(n ast.Node, f string) (any, bool) {
	var s FileMatches
	ok := l.fields(n, f, fileMatchesFields, []string{"path", "regex"}, func(e entry, f string) bool {
		if e.key == "regex" {
			var ok bool
			s.Regex, ok = l.d.regex(e.value, f)
			return ok
		}
		return l.fileField(e, f, &s.Path, nil, "")
	})
	return s, ok
}

func (l *loader) fileEquals(n ast.Node, f string) (any, bool) {
	var s FileEquals
	ok := l.fields(n, f, fileEqualsFields, []string{"path", "content"}, func(e entry, f string) bool {
		return l.fileField(e, f, &s.Path, &s.Content, "content")
	})
	return s, ok
}

// fields decodes an object with required keys; fn reports whether each value was valid.
func (l *loader) fields(n ast.Node, f string, known, required []string, fn func(e entry, f string) bool) bool {
	ok := true
	before := len(l.d.errs)
	present := l.d.object(n, f, known, func(e entry, f string) {
		if !fn(e, f) {
			ok = false
		}
	})
	l.d.require(n, f, present, required...)
	return ok && len(l.d.errs) == before
}

// fileField decodes the path of a file assertion, or its text field (named textKey).
func (l *loader) fileField(e entry, f string, path, text *string, textKey string) bool {
	var ok bool
	if e.key == "path" {
		*path, ok = l.wsPath(e.value, f)
		return ok
	}
	if e.key == textKey {
		*text, ok = l.d.str(e.value, f)
		return ok
	}
	return false
}

// wsPath decodes a path inside the workspace.
func (l *loader) wsPath(n ast.Node, f string) (string, bool) {
	s, ok := l.d.nonEmpty(n, f)
	if ok && !localPath(s) {
		l.d.fail(n, f, "path %q must be relative and stay inside the workspace", s)
		return s, false
	}
	return s, ok
}

func (l *loader) command(n ast.Node, f string) (CommandCheck, bool) {
	d := l.d
	c := CommandCheck{Timeout: DefaultCommandTimeout}
	exitAt := false
	ok := l.fields(n, f, commandFields, []string{"run"}, func(e entry, f string) bool {
		var ok bool
		switch e.key {
		case "run":
			c.Run, ok = d.nonEmpty(e.value, f)
		case "exit_code":
			c.ExitCode, ok = d.atLeast(e.value, f, 0)
		case "stdout_contains":
			c.StdoutContains, ok = d.str(e.value, f)
		case "timeout":
			if dur, dok := d.duration(e.value, f); dok {
				c.Timeout, ok = dur, true
			}
		case "junit":
			if c.JUnit, ok = d.nonEmpty(e.value, f); ok && !strings.HasPrefix(c.JUnit, "/") && !localPath(c.JUnit) {
				d.fail(e.value, f, "path %q must stay inside the workspace, or be absolute inside the container", c.JUnit)
				ok = false
			}
			if ok && strings.HasPrefix(c.JUnit, "/") {
				l.absPaths = append(l.absPaths, absPath{e.value, f})
			}
		case "format":
			if c.Format, ok = d.nonEmpty(e.value, f); ok && c.Format != FormatPytest {
				d.fail(e.value, f, "unknown format %q; the one format is %s (pytest -rA output on stdout)", c.Format, FormatPytest)
				ok = false
			}
		}
		exitAt = exitAt || e.key == "exit_code"
		return ok
	})
	c.ExitCodeSet = exitAt && c.PerTest()
	if ok && c.JUnit != "" && c.Format != "" {
		d.fail(n, f, "give junit or format, not both")
		ok = false
	}
	return c, ok
}

// toolCalled decodes `tool_called: NAME` or the block {name, args_match, min, max}.
func (l *loader) toolCalled(n ast.Node, f string) (ToolCalled, bool) {
	d := l.d
	tc := ToolCalled{Min: 1}
	r, _, ok := d.resolve(n, f)
	if !ok {
		return tc, false
	}
	switch r.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	case *ast.SequenceNode:
		d.fail(r, f, "expected a tool name or a mapping with name, args_match, min and max, got a list")
		return tc, false
	default:
		name, ok := d.nonEmpty(r, f)
		if ok {
			tc.Name, ok = l.tool(r, f, name)
		}
		return tc, ok
	}
	var maxAt ast.Node
	ok = l.fields(r, f, toolCalledFields, []string{"name"}, func(e entry, f string) bool {
		var ok bool
		switch e.key {
		case "name":
			var name string
			if name, ok = d.nonEmpty(e.value, f); ok {
				tc.Name, ok = l.tool(e.value, f, name)
			}
		case "args_match":
			tc.ArgsMatch, ok = d.regex(e.value, f)
		case "min":
			tc.Min, ok = d.atLeast(e.value, f, 0)
		case "max":
			maxAt = e.value
			tc.Max, ok = d.atLeast(e.value, f, 0)
		}
		return ok
	})
	if ok && tc.Max > 0 && tc.Max < tc.Min {
		d.fail(maxAt, join(f, "max"), "max %d is below min %d", tc.Max, tc.Min)
		ok = false
	}
	return tc, ok
}

// reference decodes the reference solution: a list of `- TOOL: {ARGS}`.
func (l *loader) reference(n ast.Node, field string) {
	items, _ := l.d.items(n, field)
	for i, it := range items {
		f := index(field, i)
		e, ok := l.single(it, f, "a reference call", "- read_file: {path: main.go}")
		if !ok {
			continue
		}
		if _, ok := l.tool(e.keyAt, f, e.key); !ok {
			continue
		}
		call := Call{Tool: e.key, Args: map[string]any{}, Pos: l.d.posOf(it)}
		r, _, ok := l.d.resolve(e.value, join(f, e.key))
		if !ok {
			continue
		}
		switch r.(type) {
		case nil, *ast.NullNode:
		case *ast.MappingNode, *ast.MappingValueNode:
			v, _ := l.d.toAny(r, join(f, e.key))
			call.Args = v.(map[string]any)
		default:
			l.d.fail(r, join(f, e.key), "expected the arguments as a mapping, like {path: main.go}, got %s", describe(r))
			continue
		}
		l.t.Reference = append(l.t.Reference, call)
		l.refNodes = append(l.refNodes, e.keyAt)
	}
}
