package task

// parse.go turns a file into its cases: the YAML document, then one decode per case.

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/agentrunner/runner/runner/bounded"
)

// parsed is one case of a file and the position of its name (for duplicate-name errors).
type parsed struct {
	t       *Task
	namePos Position
}

// parse returns the file's cases, or its problems in document order.
func parse(path string, data []byte, opts LoadOptions, suite *suiteFile) ([]parsed, []error) {
	root, errs := parseRoot(path, data)
	if errs != nil {
		return nil, errs
	}
	head := newLoader(path, opts)
	head.suite = suite
	head.d.collectAnchors(root)
	spec := head.readCases(root)
	if len(head.d.errs) > 0 {
		return nil, problemsOf(head.d.errs)
	}
	if spec == nil {
		t, namePos, errs := decodeTask(path, root, opts, suite, nil)
		if errs != nil {
			return nil, errs
		}
		return []parsed{{t, namePos}}, nil
	}
	return parseCases(path, data, root, opts, suite, spec)
}

// parseCases decodes each case from its own copy of the file's AST, with the case's
// values filled into the templated values. A problem every case shares is reported once.
func parseCases(path string, data []byte, root ast.Node, opts LoadOptions, suite *suiteFile, spec *caseSpec) ([]parsed, []error) {
	var out []parsed
	var errs []error
	seen := map[string]bool{}
	for i, c := range spec.cases {
		if i > 0 {
			root, _ = parseRoot(path, data) // parsed once already: it parses
		}
		vars := caseVars(spec, c, opts.Vars)
		t, namePos, problems := decodeTask(path, root, opts, suite, func(l *loader, r ast.Node) {
			l.template(r, vars, caseWhere(c))
		})
		for _, p := range problems {
			key := p.Error()
			if e, ok := p.(*Error); ok {
				key = fmt.Sprint(e.Pos, e.Field, strings.TrimSuffix(e.Msg, caseWhere(c)))
			}
			if !seen[key] {
				seen[key] = true
				errs = append(errs, p)
			}
		}
		if problems != nil {
			if len(errs) >= 20 {
				break // a template every case fails says so 20 times at most
			}
			continue
		}
		t.Case = &Case{Task: t.Name, Label: c.label, Vars: vars, Row: c.row, Declared: spec.order}
		t.Name = caseName(t.Name, c.label)
		if c.row.Line > 0 {
			namePos = c.row
		}
		out = append(out, parsed{t, namePos})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// caseVars merges a case's values: the file's vars:, then the cell's or row's own, then
// those set from outside, for the variables the task declares.
func caseVars(spec *caseSpec, c caseValues, outside map[string]any) map[string]any {
	vars := make(map[string]any, len(spec.vars)+len(c.vals))
	for k, v := range spec.vars {
		vars[k] = v
	}
	for k, v := range c.vals {
		vars[k] = v
	}
	for k, v := range outside {
		if contains(spec.order, k) {
			vars[k] = v
		}
	}
	return vars
}

// caseWhere names a case in template errors.
func caseWhere(c caseValues) string {
	switch {
	case c.row.Line > 0:
		return fmt.Sprintf(" (dataset row %s at %s)", c.label, c.row)
	case c.label != "":
		return fmt.Sprintf(" (case %s)", c.label)
	}
	return ""
}

// decodeTask decodes one task from root; before, when set, runs first (templating).
func decodeTask(path string, root ast.Node, opts LoadOptions, suite *suiteFile, before func(*loader, ast.Node)) (*Task, Position, []error) {
	l := newLoader(path, opts)
	l.d.collectAnchors(root) // before inherit: a suite file has no anchors
	if suite != nil {
		l.suite = suite
		l.inherit(root, suite)
	}
	if before != nil {
		l.templated = true
		before(l, root)
		if len(l.d.errs) > 0 {
			return nil, l.namePos, problemsOf(l.d.errs)
		}
	}
	l.decode(root)
	l.check()
	l.resolveSecrets()
	if len(l.d.errs) > 0 {
		return nil, l.namePos, problemsOf(l.d.errs)
	}
	for _, w := range sortProblems(l.d.warns) {
		l.t.Warnings = append(l.t.Warnings, w.Error())
	}
	return l.t, l.namePos, nil
}

func problemsOf(es []*Error) []error {
	var errs []error
	for _, e := range sortProblems(es) {
		errs = append(errs, e)
	}
	return errs
}

// parseRoot parses a task file's one YAML document.
func parseRoot(path string, data []byte) (ast.Node, []error) {
	start := Position{File: path, Line: 1, Column: 1}
	// Bounded: a file nested or crowded past what a task needs is refused with its
	// position before the parser, whose cost grows with the square of the depth, sees it.
	file, err := bounded.ParseYAML(path, data, bounded.TaskFile)
	if err != nil {
		return nil, []error{syntaxProblem(path, err)}
	}
	var root ast.Node
	for i, doc := range file.Docs {
		if doc.Body == nil {
			continue
		}
		if root != nil {
			d := &decoder{file: path}
			return nil, []error{&Error{Pos: d.posOf(file.Docs[i].Body), Msg: "a task file holds one YAML document; put each task in its own file"}}
		}
		root = doc.Body
	}
	if root == nil {
		return nil, []error{&Error{Pos: start, Msg: "the file is empty; a task needs at least a prompt"}}
	}
	return root, nil
}
