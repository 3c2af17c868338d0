package task

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Case names one expansion of a task file over its variables (vars:, a matrix cell or a
// dataset row). Everything downstream sees an ordinary scenario; Case says which task file
// it came from and with which values, so reports can group cases under their task.
type Case struct {
	// Task is the scenario name of the file before the case label.
	Task string `json:"task"`
	// Label tells the case apart: "language=go,size=small" for a matrix cell, the row's
	// id (or its 1-based number) for a dataset row; "" for a file with vars: only.
	Label string `json:"label,omitempty"`
	// Vars are the values the templates saw.
	Vars map[string]any `json:"vars"`
	// Row is where a dataset row was written (zero for other cases).
	Row Position `json:"row,omitzero"`
	// Declared are the variables the file declares: the ones outside values may set.
	Declared []string `json:"-"`
}

// caseFields are the top-level keys that turn templating on.
const (
	keyVars    = "vars"
	keyMatrix  = "matrix"
	keyDataset = "dataset"
)

// caseSpec is what a file's vars:, matrix: and dataset: keys declare.
type caseSpec struct {
	vars  map[string]any
	order []string // declared variable names, for messages
	cases []caseValues
}

// caseValues is one case before templating: its label, its own values and, for a dataset
// row, where the row was written.
type caseValues struct {
	label string
	vals  map[string]any
	row   Position
}

// readCases decodes vars:, matrix: and dataset:. It returns nil when the file declares none
// of them: such a file is not templated at all, so braces in it mean nothing.
func (l *loader) readCases(root ast.Node) *caseSpec {
	d := l.d
	n := len(d.errs)
	es, _ := d.entries(root, "")
	d.errs = d.errs[:n] // decode reports a root that is not a mapping
	var varsAt, matrixAt, datasetAt *entry
	for i := range es {
		switch es[i].key {
		case keyVars:
			varsAt = &es[i]
		case keyMatrix:
			matrixAt = &es[i]
		case keyDataset:
			datasetAt = &es[i]
		}
	}
	inherited := l.suite != nil && len(l.suite.order) > 0
	if varsAt == nil && matrixAt == nil && datasetAt == nil && !inherited {
		return nil
	}
	spec := &caseSpec{vars: map[string]any{}}
	if inherited {
		// The suite's vars: are declared in every task under it; the task's own win.
		for _, k := range l.suite.order {
			spec.vars[k] = l.suite.vars[k]
			spec.order = append(spec.order, k)
		}
	}
	if varsAt != nil {
		l.declaredVars(varsAt.value, keyVars, spec)
	}
	switch {
	case matrixAt != nil && datasetAt != nil:
		d.fail(datasetAt.keyAt, keyDataset, "a task takes either matrix: or dataset:, not both; put the matrix's values into the dataset's rows")
	case matrixAt != nil:
		spec.cases = l.matrix(matrixAt.value, keyMatrix)
	case datasetAt != nil:
		spec.cases = l.dataset(datasetAt.value, keyDataset)
	}
	if matrixAt == nil && datasetAt == nil {
		spec.cases = []caseValues{{}}
	}
	for _, c := range spec.cases {
		for k := range c.vals {
			if _, ok := spec.vars[k]; !ok && !contains(spec.order, k) {
				spec.order = append(spec.order, k)
			}
		}
	}
	sort.Strings(spec.order)
	spec.cases = l.pick(spec.cases)
	return spec
}

// declaredVars decodes vars:, a mapping of variable names to default values.
func (l *loader) declaredVars(n ast.Node, field string, spec *caseSpec) {
	es, _ := l.d.entries(n, field)
	for _, e := range es {
		f := join(field, e.key)
		if !l.varName(e.keyAt, f, e.key) {
			continue
		}
		if v, ok := l.d.toAny(e.value, f); ok {
			spec.vars[e.key] = v
			if !contains(spec.order, e.key) {
				spec.order = append(spec.order, e.key)
			}
		}
	}
}

// varName checks that a variable can be written {{.name}} in a template.
func (l *loader) varName(n ast.Node, field, name string) bool {
	if !validEnvName(name) {
		l.d.fail(n, field, "invalid variable name %q: use letters, digits and _, not starting with a digit, so templates can write {{.%s}}", name, name)
		return false
	}
	return true
}

// matrixKeys are matrix:'s keys that are not axes.
const (
	matrixInclude = "include"
	matrixExclude = "exclude"
)

// matrix expands matrix: into the cross product of its axes, less exclude:, plus include:,
// as GitHub Actions does: an include entry extends every cell whose axis values it does not
// contradict, and becomes a cell of its own when it extends none.
func (l *loader) matrix(n ast.Node, field string) []caseValues {
	m, ok := l.readMatrix(n, field)
	if !ok {
		return nil
	}
	cells := crossProduct(m.axes, m.values)
	kept := cells[:0]
	for _, c := range cells {
		if !matchesAny(c, m.exclude) {
			kept = append(kept, c)
		}
	}
	cells, labelKeys, added := m.addIncludes(kept)
	if len(cells) == 0 && len(l.d.errs) == 0 {
		l.d.fail(n, field, "the matrix has no cells: give at least one axis with values, or include: entries")
	}
	for _, c := range cells {
		for _, k := range added {
			if _, ok := c[k]; !ok {
				c[k] = "" // as GitHub Actions: a key one include: entry adds is empty elsewhere
			}
		}
	}
	out := make([]caseValues, len(cells))
	for i, c := range cells {
		var parts []string
		for _, k := range labelKeys {
			if v, ok := c[k]; ok {
				parts = append(parts, k+"="+fmt.Sprint(v))
			}
		}
		out[i] = caseValues{label: strings.Join(parts, ","), vals: c}
	}
	return out
}

// matrixSpec is matrix: as written: its axes in order with their values, and its
// include: and exclude: entries.
type matrixSpec struct {
	axes             []string
	values           map[string][]any
	include, exclude []map[string]any
}

// readMatrix decodes matrix: and checks that exclude: names only axes.
func (l *loader) readMatrix(n ast.Node, field string) (matrixSpec, bool) {
	d := l.d
	es, ok := d.entries(n, field)
	if !ok {
		return matrixSpec{}, false
	}
	m := matrixSpec{values: map[string][]any{}}
	var excludeAt []ast.Node
	for _, e := range es {
		f := join(field, e.key)
		switch e.key {
		case matrixInclude:
			m.include, _ = l.matrixEntries(e.value, f)
		case matrixExclude:
			m.exclude, excludeAt = l.matrixEntries(e.value, f)
		default:
			if l.matrixAxis(e, f, m.values) {
				m.axes = append(m.axes, e.key)
			}
		}
	}
	for i, ex := range m.exclude {
		for k := range ex {
			if _, isAxis := m.values[k]; !isAxis {
				d.fail(excludeAt[i], index(join(field, matrixExclude), i), "%q is not an axis of the matrix%s", k, suggest(k, m.axes, "axes"))
			}
		}
	}
	return m, true
}

// matrixAxis decodes one axis into values, reporting whether it is one.
func (l *loader) matrixAxis(e entry, f string, values map[string][]any) bool {
	d := l.d
	if !l.varName(e.keyAt, f, e.key) {
		return false
	}
	items, _ := d.items(e.value, f)
	if len(items) == 0 {
		d.fail(e.value, f, "an axis needs at least one value")
		return false
	}
	for i, it := range items {
		if v, ok := d.toAny(it, index(f, i)); ok {
			values[e.key] = append(values[e.key], v)
		}
	}
	return true
}

// crossProduct is every combination of the axes' values, the first axis slowest (none
// without axes).
func crossProduct(axes []string, values map[string][]any) []map[string]any {
	if len(axes) == 0 {
		return nil
	}
	cells := []map[string]any{{}}
	for _, axis := range axes {
		var next []map[string]any
		for _, c := range cells {
			for _, v := range values[axis] {
				cell := make(map[string]any, len(c)+1)
				for k, x := range c {
					cell[k] = x
				}
				cell[axis] = v
				next = append(next, cell)
			}
		}
		cells = next
	}
	return cells
}

// addIncludes applies include: to cells: an entry extends every cell it is compatible
// with, or becomes a cell of its own. It returns the cells, the keys that label them
// (the axes, then the keys of include-only cells) and the keys the entries added.
func (m matrixSpec) addIncludes(cells []map[string]any) ([]map[string]any, []string, []string) {
	labelKeys := append([]string(nil), m.axes...)
	var added []string
	for _, inc := range m.include {
		for _, k := range sortedKeys(inc) {
			if _, isAxis := m.values[k]; !isAxis && !contains(added, k) {
				added = append(added, k)
			}
		}
		extended := false
		for _, c := range cells {
			if compatible(c, inc, m.values) {
				for k, v := range inc {
					c[k] = v
				}
				extended = true
			}
		}
		if !extended {
			cells = append(cells, inc)
			for _, k := range sortedKeys(inc) {
				if !contains(labelKeys, k) {
					labelKeys = append(labelKeys, k)
				}
			}
		}
	}
	return cells, labelKeys, added
}

// matrixEntries decodes include: or exclude:, lists of mappings.
func (l *loader) matrixEntries(n ast.Node, field string) ([]map[string]any, []ast.Node) {
	items, _ := l.d.items(n, field)
	var out []map[string]any
	var at []ast.Node
	for i, it := range items {
		f := index(field, i)
		v, ok := l.d.toAny(it, f)
		m, isMap := v.(map[string]any)
		if !ok {
			continue
		}
		if !isMap || len(m) == 0 {
			l.d.fail(it, f, "expected a mapping of variable names to values")
			continue
		}
		for k := range m {
			l.varName(it, f, k)
		}
		out, at = append(out, m), append(at, it)
	}
	return out, at
}

// matchesAny reports whether a cell has every value of one of the entries.
func matchesAny(cell map[string]any, entries []map[string]any) bool {
	for _, e := range entries {
		all := true
		for k, v := range e {
			if fmt.Sprint(cell[k]) != fmt.Sprint(v) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// compatible reports whether an include entry leaves the cell's original axis values as
// they are.
func compatible(cell, inc map[string]any, axes map[string][]any) bool {
	for k, v := range inc {
		if _, isAxis := axes[k]; isAxis && fmt.Sprint(cell[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// dataset reads dataset: FILE, a CSV, JSON Lines, JSON or YAML list beside the task file:
// one case per row.
func (l *loader) dataset(n ast.Node, field string) []caseValues {
	name, ok := l.d.nonEmpty(n, field)
	if !ok {
		return nil
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.t.Dir, filepath.FromSlash(name))
	}
	rows, err := readDataset(path)
	if err != nil {
		l.d.failErr(n, field, err, "%v", err)
		return nil
	}
	if len(rows) == 0 {
		l.d.fail(n, field, "%s has no rows", name)
		return nil
	}
	out := make([]caseValues, 0, len(rows))
	for i, r := range rows {
		label := fmt.Sprint(i + 1)
		if id, ok := r.vals["id"]; ok && fmt.Sprint(id) != "" {
			label = fmt.Sprint(id)
		}
		out = append(out, caseValues{label: label, vals: r.vals, row: r.pos})
	}
	return out
}

// pick applies LoadOptions.Limit and Sample to a task's cases, keeping their order.
func (l *loader) pick(cases []caseValues) []caseValues {
	if n := l.opts.Sample; n > 0 && n < len(cases) {
		r := rand.New(rand.NewPCG(l.opts.Seed, 0x5eed))
		idx := r.Perm(len(cases))[:n]
		sort.Ints(idx)
		picked := make([]caseValues, n)
		for i, j := range idx {
			picked[i] = cases[j]
		}
		cases = picked
	}
	if n := l.opts.Limit; n > 0 && n < len(cases) {
		cases = cases[:n]
	}
	return cases
}

// caseName is a case's scenario name: task[label], with characters that cannot be part of
// a directory name replaced.
func caseName(task, label string) string {
	if label == "" {
		return task
	}
	clean := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, label)
	return task + "[" + clean + "]"
}
