package task

import (
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// DefaultCommandTimeout bounds a command assertion that sets no timeout.
const DefaultCommandTimeout = 60 * time.Second

// AssertionKind is the task file's side of an assertion kind: the key of an assert:
// entry, the line the schema shows, how its value is written (the schema of a scalar,
// or a zero Spec whose fields the schema describes) and its decoder. It is one part of
// the kind's row in runner/assert's Registry, which carries the checker too and
// registers this part here: the format knows nothing of the runtime, and a kind is its
// file plus its row there.
type AssertionKind struct {
	Name string
	Doc  string
	// Spec is a zero value of a struct kind's Spec type, which the schema describes field
	// by field (a Go name or scalar alone becomes a oneOf). Schema is the JSON Schema of a
	// scalar kind's value.
	Spec   any
	Schema string
	// Decode decodes the kind's value into its Spec (see Value); false when it reported
	// a problem.
	Decode func(v Value) (any, bool)
}

// Kinds are the assertion kinds the loader knows, in the order of the documentation:
// the rows runner/assert registers when it is linked (as it is into runner, and into
// every test of this package, through kinds_test.go). AssertionKinds are their names.
var (
	Kinds          []AssertionKind
	AssertionKinds []string
)

// RegisterKind adds an assertion kind for the loader, after the others. It is for init
// functions (runner/assert's) and tests, before anything loads a task file; an empty
// name, a missing decoder or a name already registered panics.
func RegisterKind(k AssertionKind) {
	switch {
	case k.Name == "" || k.Decode == nil:
		panic(fmt.Sprintf("task: RegisterKind of %q without a name or decoder", k.Name))
	case contains(AssertionKinds, k.Name):
		panic("task: RegisterKind of " + k.Name + " twice")
	}
	Kinds = append(Kinds[:len(Kinds):len(Kinds)], k)
	AssertionKinds = append(AssertionKinds[:len(AssertionKinds):len(AssertionKinds)], k.Name)
}

// The decoders of the built-in kinds whose value is a block, for their rows in
// runner/assert: each decodes into the Spec type of its name.

// DecodeFileContains decodes file_contains: {path, text}.
func DecodeFileContains(v Value) (any, bool) { return v.l.fileContains(v.n, v.field) }

// DecodeFileMatches decodes file_matches: {path, regex}.
func DecodeFileMatches(v Value) (any, bool) { return v.l.fileMatches(v.n, v.field) }

// DecodeFileEquals decodes file_equals: {path, content}.
func DecodeFileEquals(v Value) (any, bool) { return v.l.fileEquals(v.n, v.field) }

// DecodeCommand decodes command: {run, exit_code, stdout_contains, timeout, junit, format}.
func DecodeCommand(v Value) (any, bool) { return v.l.command(v.n, v.field) }

// DecodeToolCalled decodes tool_called: NAME or {name, args_match, min, max}.
func DecodeToolCalled(v Value) (any, bool) { return v.l.toolCalled(v.n, v.field) }

// DecodeJudge decodes judge: {model, rubric, files, min_score}.
func DecodeJudge(v Value) (any, bool) { return v.l.judge(v.n, v.field) }

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
		if len(Kinds) == 0 {
			l.d.fail(e.keyAt, f, "unknown assertion kind %q: no kinds are registered (a Go program that loads task files imports runner/assert, which registers them)", e.key)
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
			return k.Decode(Value{l: l, n: n, field: f})
		}
	}
	panic("task: unhandled assertion kind " + kind) // the caller checked AssertionKinds
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
			// The report is read from $RESULTS_DIR, a directory runner makes afresh for
			// this command: a path the agent could have written is no longer accepted.
			if c.JUnit, ok = d.nonEmpty(e.value, f); ok && !localPath(c.JUnit) {
				d.fail(e.value, f, "%q: name the report's file inside $RESULTS_DIR, the directory runner makes afresh for this command outside the agent's reach (the command writes \"$RESULTS_DIR/junit.xml\", junit: junit.xml)", c.JUnit)
				ok = false
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
	if ok && c.PerTest() && c.ExitCode != 0 {
		// A report never outweighs the exit code: tests that all pass end with 0.
		d.fail(n, join(f, "exit_code"), "%d with per-test results: they pass only when the command exits 0", c.ExitCode)
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
