package task

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// decoder walks a goccy/go-yaml AST into typed values. Walking the AST ourselves (rather
// than yaml.Unmarshal into structs) gives every value a position and lets one pass report
// every problem instead of stopping at the first.
type decoder struct {
	file    string
	errs    []*Error
	warns   []*Error
	anchors map[string]ast.Node
	depth   int
	visits  int
	// foreign names the file of nodes that came from another file (a suite file's values
	// inherited by a task), by their tokens.
	foreign map[*token.Token]string
}

// maxDepth bounds recursion through aliases, so that a self-referencing anchor
// (`a: &x [*x]`) is an error rather than a stack overflow.
const maxDepth = 64

// maxVisits bounds the values a file may expand to, so that aliases of aliases (the
// "billion laughs") are an error rather than a hang. Real task files stay far below.
const maxVisits = 1 << 20

// entry is one key of a mapping.
type entry struct {
	key   string
	keyAt ast.Node // the key node, for "unknown field" positions
	value ast.Node
}

func (d *decoder) fail(n ast.Node, field, format string, args ...any) {
	d.errs = append(d.errs, &Error{Pos: d.posOf(n), Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) failErr(n ast.Node, field string, err error, format string, args ...any) {
	d.errs = append(d.errs, &Error{Pos: d.posOf(n), Field: field, Msg: fmt.Sprintf(format, args...), Err: err})
}

func (d *decoder) warn(n ast.Node, field, format string, args ...any) {
	d.warns = append(d.warns, &Error{Pos: d.posOf(n), Field: field, Msg: fmt.Sprintf(format, args...)})
}

// posOf returns where a node starts. Block mappings report their first key rather than
// goccy's default (the first ':'), which is where a reader looks.
func (d *decoder) posOf(n ast.Node) Position {
	var tk *token.Token
	switch v := n.(type) {
	case nil:
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 {
			return d.posOf(v.Values[0].Key)
		}
		tk = v.Start
	case *ast.MappingValueNode:
		return d.posOf(v.Key)
	case *ast.AnchorNode:
		tk = v.Start
	case *ast.TagNode:
		tk = v.Start
	case *ast.AliasNode:
		tk = v.Start
	case *ast.LiteralNode:
		tk = v.Start
	default:
		tk = n.GetToken()
	}
	if tk == nil || tk.Position == nil {
		return Position{File: d.file, Line: 1, Column: 1}
	}
	file := d.file
	if f, ok := d.foreign[tk]; ok {
		file = f
	}
	return Position{File: file, Line: tk.Position.Line, Column: tk.Position.Column}
}

// collectAnchors records every anchor of the document so aliases can be resolved
// wherever they appear.
func (d *decoder) collectAnchors(root ast.Node) {
	d.anchors = map[string]ast.Node{}
	ast.Walk(anchorVisitor(d.anchors), root)
}

type anchorVisitor map[string]ast.Node

func (v anchorVisitor) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
		v[a.Name.GetToken().Value] = a.Value
	}
	return v
}

// resolve follows anchors, aliases and tags to the node holding the value. It returns
// the tag ("" if none); ok is false (and the problem recorded) for an undefined alias or
// an unsupported tag.
func (d *decoder) resolve(n ast.Node, field string) (ast.Node, string, bool) {
	if d.visits++; d.visits >= maxVisits {
		if d.visits == maxVisits {
			d.fail(n, field, "the file expands to more than %d values; are aliases nested too deeply?", maxVisits)
		}
		return nil, "", false
	}
	tag := ""
	for i := 0; ; i++ {
		if i > maxDepth {
			d.fail(n, field, "aliases nest too deeply")
			return nil, "", false
		}
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			if v.Value == nil {
				d.fail(v, field, "alias without a name")
				return nil, "", false
			}
			name := v.Value.GetToken().Value
			target, ok := d.anchors[name]
			if !ok {
				d.fail(v, field, "undefined alias *%s", name)
				return nil, "", false
			}
			n = target
		case *ast.TagNode:
			t := v.Start.Value
			switch t {
			case "!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq":
			default:
				d.fail(v, field, "unsupported tag %s", t)
				return nil, "", false
			}
			if tag == "" {
				tag = t
			}
			n = v.Value
		default:
			return n, tag, true
		}
	}
}

// entries returns a mapping's keys in order, with merge keys (<<: *base) expanded.
// Null counts as an empty mapping.
func (d *decoder) entries(n ast.Node, field string) ([]entry, bool) {
	r, _, ok := d.resolve(n, field)
	if !ok {
		return nil, false
	}
	var values []*ast.MappingValueNode
	switch v := r.(type) {
	case nil, *ast.NullNode:
		return nil, true
	case *ast.MappingNode:
		values = v.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{v}
	default:
		d.fail(r, field, "expected a mapping, got %s", describe(r))
		return nil, false
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		d.fail(r, field, "aliases nest too deeply")
		return nil, false
	}
	var out, merged []entry
	explicit := map[string]bool{}
	ok = true
	for _, mv := range values {
		if _, isMerge := mv.Key.(*ast.MergeKeyNode); isMerge {
			m, mok := d.mergeSources(mv.Value, field)
			merged, ok = append(merged, m...), ok && mok
			continue
		}
		key, kok := d.key(mv.Key, field)
		if !kok {
			ok = false
			continue
		}
		explicit[key] = true
		out = append(out, entry{key: key, keyAt: mv.Key, value: mv.Value})
	}
	for _, e := range merged {
		if !explicit[e.key] {
			explicit[e.key] = true
			out = append(out, e)
		}
	}
	return out, ok
}

// mergeSources expands the value of a merge key: one mapping or a list of mappings.
func (d *decoder) mergeSources(n ast.Node, field string) ([]entry, bool) {
	r, _, ok := d.resolve(n, field)
	if !ok {
		return nil, false
	}
	seq, isSeq := r.(*ast.SequenceNode)
	if !isSeq {
		return d.entries(r, field)
	}
	var out []entry
	for _, item := range seq.Values {
		e, eok := d.entries(item, field)
		out, ok = append(out, e...), ok && eok
	}
	return out, ok
}

func (d *decoder) key(n ast.Node, field string) (string, bool) {
	if k, isKey := n.(*ast.MappingKeyNode); isKey {
		n = k.Value
	}
	s, ok := d.scalarOf(n, field, "a string key")
	if !ok {
		return "", false
	}
	if s.kind == "null" {
		d.fail(n, field, "empty key")
		return "", false
	}
	return s.text, true
}

// items returns a list's elements. Null counts as an empty list.
func (d *decoder) items(n ast.Node, field string) ([]ast.Node, bool) {
	r, _, ok := d.resolve(n, field)
	if !ok {
		return nil, false
	}
	switch v := r.(type) {
	case nil, *ast.NullNode:
		return nil, true
	case *ast.SequenceNode:
		return v.Values, true
	default:
		d.fail(r, field, "expected a list, got %s", describe(r))
		return nil, false
	}
}

// object decodes a mapping whose keys must come from known: an unknown key is reported at
// the key with a suggestion, each known one is handed to fn. It returns the keys present,
// or nil when n is not a mapping at all (already reported, so require stays quiet).
func (d *decoder) object(n ast.Node, field string, known []string, fn func(e entry, field string)) map[string]entry {
	es, ok := d.entries(n, field)
	if !ok {
		return nil
	}
	present := make(map[string]entry, len(es))
	for _, e := range es {
		f := join(field, e.key)
		if !contains(known, e.key) {
			d.fail(e.keyAt, f, "unknown field %q%s", e.key, suggest(e.key, known, "known fields"))
			continue
		}
		present[e.key] = e
		fn(e, f)
	}
	return present
}

// require reports the keys of an object that are missing, at the object's position.
func (d *decoder) require(n ast.Node, field string, present map[string]entry, keys ...string) {
	if present == nil {
		return
	}
	for _, k := range keys {
		if _, ok := present[k]; !ok {
			d.fail(n, join(field, k), "required field is missing")
		}
	}
}

// stringList decodes a list of strings.
func (d *decoder) stringList(n ast.Node, field string) []string {
	items, _ := d.items(n, field)
	out := make([]string, 0, len(items))
	for i, it := range items {
		if s, ok := d.str(it, index(field, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// toAny converts a node to plain Go values for tool arguments: map[string]any, []any,
// string, int, float64, bool or nil, which marshal to the JSON a model would send.
func (d *decoder) toAny(n ast.Node, field string) (any, bool) {
	r, _, ok := d.resolve(n, field)
	if !ok {
		return nil, false
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		d.fail(r, field, "aliases nest too deeply")
		return nil, false
	}
	switch r.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		es, ok := d.entries(r, field)
		m := make(map[string]any, len(es))
		for _, e := range es {
			v, vok := d.toAny(e.value, join(field, e.key))
			m[e.key], ok = v, ok && vok
		}
		return m, ok
	case *ast.SequenceNode:
		items, ok := d.items(r, field)
		list := make([]any, len(items))
		for i, it := range items {
			v, vok := d.toAny(it, index(field, i))
			list[i], ok = v, ok && vok
		}
		return list, ok
	}
	s, ok := d.scalarOf(r, field, "a value")
	if !ok {
		return nil, false
	}
	switch s.kind {
	case "null":
		return nil, true
	case "string":
		return s.text, true
	case "boolean":
		return d.boolean(s.node, field)
	case "integer":
		return d.integer(s.node, field)
	default:
		return d.number(s.node, field)
	}
}

// join, index and mapKey build field paths: approval.rules[2].match, workspace.files["a.go"].
func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

func mapKey(field, key string) string { return fmt.Sprintf("%s[%q]", field, key) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
