package task

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// scalar is a resolved scalar value: its YAML kind and its source text.
type scalar struct {
	kind string // "string", "integer", "float", "boolean" or "null"
	text string
	node ast.Node
}

// scalarOf resolves n to a scalar; for a mapping or list it records "expected <want>".
func (d *decoder) scalarOf(n ast.Node, field, want string) (scalar, bool) {
	r, tag, ok := d.resolve(n, field)
	if !ok {
		return scalar{}, false
	}
	s := scalar{node: r}
	switch v := r.(type) {
	case nil, *ast.NullNode:
		s.kind = "null"
	case *ast.StringNode:
		s.kind, s.text = "string", v.Value
	case *ast.LiteralNode:
		s.kind, s.text = "string", v.Value.Value
	case *ast.IntegerNode:
		s.kind, s.text = "integer", v.Token.Value
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		s.kind, s.text = "float", r.GetToken().Value
	case *ast.BoolNode:
		s.kind, s.text = "boolean", v.Token.Value
	default:
		d.fail(r, field, "expected %s, got %s", want, describe(r))
		return scalar{}, false
	}
	if tag == "!!str" && s.kind != "string" {
		s.kind = "string"
		if s.text == "" && s.node != nil {
			s.text = s.node.GetToken().Value
		}
	}
	return s, true
}

// describe names a node for "expected X, got Y" messages.
func describe(n ast.Node) string {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		return "string " + strconv.Quote(v.Value)
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.BoolNode:
		return "boolean " + v.Token.Value
	case *ast.IntegerNode:
		return "integer " + v.Token.Value
	default:
		return "number " + n.GetToken().Value
	}
}

func (d *decoder) describeScalar(s scalar) string {
	switch s.kind {
	case "null":
		return "null"
	case "string":
		return "string " + strconv.Quote(s.text)
	default:
		return s.kind + " " + s.text
	}
}

// str decodes a string. Numbers are taken as written (`text: 42` is "42"); booleans and
// null are refused, since `path: yes` or an empty value is far more often a mistake.
func (d *decoder) str(n ast.Node, field string) (string, bool) {
	s, ok := d.scalarOf(n, field, "a string")
	if !ok {
		return "", false
	}
	switch s.kind {
	case "string", "integer", "float":
		return s.text, true
	case "boolean":
		d.fail(s.node, field, "expected a string, got %s (quote it: %q)", d.describeScalar(s), s.text)
	default:
		d.fail(s.node, field, "expected a string, got null")
	}
	return "", false
}

// text decodes any non-null scalar as its source text (environment values: `CGO_ENABLED: 0`).
func (d *decoder) text(n ast.Node, field string) (string, bool) {
	s, ok := d.scalarOf(n, field, "a string")
	if !ok {
		return "", false
	}
	if s.kind == "null" {
		d.fail(s.node, field, "expected a string, got null")
		return "", false
	}
	return s.text, true
}

// nonEmpty is str that also refuses an empty or blank string.
func (d *decoder) nonEmpty(n ast.Node, field string) (string, bool) {
	v, ok := d.str(n, field)
	if ok && strings.TrimSpace(v) == "" {
		d.fail(n, field, "must not be empty")
		return v, false
	}
	return v, ok
}

func (d *decoder) boolean(n ast.Node, field string) (bool, bool) {
	s, ok := d.scalarOf(n, field, "true or false")
	if !ok {
		return false, false
	}
	if s.kind != "boolean" {
		d.fail(s.node, field, "expected true or false, got %s", d.describeScalar(s))
		return false, false
	}
	v, err := strconv.ParseBool(strings.ToLower(s.text))
	if err != nil {
		d.fail(s.node, field, "expected true or false, got %s", s.text)
		return false, false
	}
	return v, true
}

func (d *decoder) integer(n ast.Node, field string) (int, bool) {
	s, ok := d.scalarOf(n, field, "an integer")
	if !ok {
		return 0, false
	}
	if s.kind != "integer" {
		d.fail(s.node, field, "expected an integer, got %s", d.describeScalar(s))
		return 0, false
	}
	switch v := s.node.(*ast.IntegerNode).Value.(type) {
	case int64:
		if v >= math.MinInt && v <= math.MaxInt {
			return int(v), true
		}
	case uint64:
		if v <= math.MaxInt {
			return int(v), true
		}
	}
	d.fail(s.node, field, "integer %s is out of range", s.text)
	return 0, false
}

// atLeast is integer that refuses values below min.
func (d *decoder) atLeast(n ast.Node, field string, min int) (int, bool) {
	v, ok := d.integer(n, field)
	if ok && v < min {
		d.fail(n, field, "must be at least %d, got %d", min, v)
		return v, false
	}
	return v, ok
}

func (d *decoder) number(n ast.Node, field string) (float64, bool) {
	s, ok := d.scalarOf(n, field, "a number")
	if !ok {
		return 0, false
	}
	switch s.kind {
	case "integer":
		i, ok := d.integer(s.node, field)
		return float64(i), ok
	case "float":
		if f, ok := s.node.(*ast.FloatNode); ok {
			return f.Value, true
		}
		d.fail(s.node, field, "expected a finite number, got %s", s.text)
	default:
		d.fail(s.node, field, "expected a number, got %s", d.describeScalar(s))
	}
	return 0, false
}

// duration decodes a Go duration string such as 90s, 5m or 1h30m; it must be positive.
func (d *decoder) duration(n ast.Node, field string) (time.Duration, bool) {
	s, ok := d.scalarOf(n, field, "a duration like 90s, 5m or 1h30m")
	if !ok {
		return 0, false
	}
	if s.kind != "string" {
		d.fail(s.node, field, "expected a duration with a unit, like 90s, 5m or 1h30m, got %s", d.describeScalar(s))
		return 0, false
	}
	v, err := time.ParseDuration(strings.TrimSpace(s.text))
	if err != nil {
		d.failErr(s.node, field, err, "invalid duration %q: want a number and a unit, like 90s, 5m or 1h30m", s.text)
		return 0, false
	}
	if v <= 0 {
		d.fail(s.node, field, "duration must be positive, got %s", s.text)
		return 0, false
	}
	return v, true
}
