package task

import (
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Value is the value of an assert: entry as its kind's decoder (AssertionKind.Decode) gets
// it, in the task file being loaded: each method decodes it as one type and reports a
// problem at its line, column and field, with the loader's own messages; the second
// result says whether it decoded. A kind written outside this package (a row of
// runner/assert) decodes its value with these, so its errors read as every other's.
type Value struct {
	l     *loader
	n     ast.Node
	field string
}

// Field is the value's place in the file's keys, as messages name it
// (assert[2].file_exists).
func (v Value) Field() string { return v.field }

// Fail reports a problem with the value at its position.
func (v Value) Fail(format string, args ...any) { v.l.d.fail(v.n, v.field, format, args...) }

// Bool decodes true or false.
func (v Value) Bool() (bool, bool) { return v.l.d.boolean(v.n, v.field) }

// Str decodes a string (a number or a boolean written unquoted is refused).
func (v Value) Str() (string, bool) { return v.l.d.str(v.n, v.field) }

// NonEmpty decodes a string that is not empty.
func (v Value) NonEmpty() (string, bool) { return v.l.d.nonEmpty(v.n, v.field) }

// AtLeast decodes an integer no smaller than min.
func (v Value) AtLeast(min int) (int, bool) { return v.l.d.atLeast(v.n, v.field, min) }

// Number decodes a number.
func (v Value) Number() (float64, bool) { return v.l.d.number(v.n, v.field) }

// Duration decodes a Go duration (90s, 5m).
func (v Value) Duration() (time.Duration, bool) { return v.l.d.duration(v.n, v.field) }

// Regex decodes a Go regular expression that compiles.
func (v Value) Regex() (string, bool) { return v.l.d.regex(v.n, v.field) }

// Path decodes a path inside the workspace: relative, without "..".
func (v Value) Path() (string, bool) { return v.l.wsPath(v.n, v.field) }

// Tool decodes the name of a tool the task knows (the catalog's, its tools_defined, its
// MCP servers'), as its canonical name.
func (v Value) Tool() (string, bool) {
	name, ok := v.l.d.nonEmpty(v.n, v.field)
	if !ok {
		return "", false
	}
	return v.l.tool(v.n, v.field, name)
}

// Fields decodes a mapping whose keys are the json keys of spec's struct type (a zero
// value of it), the keys in required present: an unknown key is an error with the
// nearest known one, and field decodes each value, saying whether it decoded. It
// reports whether the whole mapping did.
func (v Value) Fields(spec any, required []string, field func(key string, v Value) bool) bool {
	return v.l.fields(v.n, v.field, keysOf(spec), required, func(e entry, f string) bool {
		return field(e.key, Value{l: v.l, n: e.value, field: f})
	})
}
