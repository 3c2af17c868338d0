package task

// suite.go: the suite file (runner.yaml), the defaults every task file beside and below it
// inherits, found upward from each task file and never beyond the repository.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/agentrunner/runner/runner/bounded"
)

// SuiteFile is the suite file's name: defaults for every task file in its directory and
// below (promptfoo's defaultTest). It is never a task file itself.
const SuiteFile = "runner.yaml"

// SuiteKeys are the keys a suite file may set, in the documentation's order: each is a
// task file key with the same meaning and syntax. A task's own value wins; env: and vars:
// merge by name (the task's value of a name wins), every other key is taken whole.
var SuiteKeys = []string{
	"model", "agent", "model_options", "tool_call_parser", "system", "tools", "approval", "command_rules",
	"max_steps", "timeout", "env", "secrets", "network", "sandbox", "limits", keyVars,
}

// suiteFile is one suite file, read and checked once per load.
type suiteFile struct {
	path string
	data []byte
	// keys are the keys the file sets, in file order.
	keys []string
	// vars are its vars: (the variables every task under it declares), in order.
	vars  map[string]any
	order []string
	// errs are the file's own problems, with its positions; a suite with problems is
	// reported once and applied to no task.
	errs []error
}

// FindSuite returns the suite file that applies to the task file at taskPath, or "" when
// none does: the nearest runner.yaml in the task's directory or above it, up to the
// repository's root (the directory holding .git). Outside a repository the search stops
// at the current directory when the task is below it, else it looks in the task's own
// directory only: a runner.yaml in a shared parent (/tmp, a home directory), which anyone
// (or an unconfined agent) could have written, is never read.
func FindSuite(taskPath string) (string, error) {
	abs, err := filepath.Abs(taskPath)
	if err != nil {
		return "", fmt.Errorf("find %s: %w", SuiteFile, err)
	}
	dir := filepath.Dir(abs)
	stop := searchRoot(dir)
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, SuiteFile)
		info, err := os.Stat(p)
		switch {
		case err == nil && info.Mode().IsRegular():
			return displayPath(p), nil
		case err == nil && !info.IsDir():
			return "", fmt.Errorf("%s is not a regular file", displayPath(p))
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return "", fmt.Errorf("%s: %w", displayPath(p), err)
		}
		if d == stop || filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// searchRoot is the highest directory FindSuite looks in for a task in dir: the repository
// root above dir, else the current directory if dir is below it, else dir.
func searchRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d // a directory, or the file a worktree or submodule has
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, dir); err == nil && filepath.IsLocal(rel) {
			return cwd
		}
	}
	return dir
}

// displayPath is p relative to the current directory when it is below it, for messages.
func displayPath(p string) string {
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, p); err == nil && filepath.IsLocal(rel) {
			return rel
		}
	}
	return p
}

// suites reads each suite file once for a load.
type suites struct {
	byDir  map[string]*suiteFile // a task's directory -> its suite (nil: none)
	byPath map[string]*suiteFile
	opts   LoadOptions
}

func newSuites(opts LoadOptions) *suites {
	return &suites{byDir: map[string]*suiteFile{}, byPath: map[string]*suiteFile{}, opts: opts}
}

// forTask returns the suite of a task file (nil when none applies), and whether it was
// read just now (its problems are then the caller's to report, once).
func (ss *suites) forTask(taskPath string) (*suiteFile, bool) {
	dir := filepath.Dir(taskPath)
	if s, ok := ss.byDir[dir]; ok {
		return s, false
	}
	path, err := FindSuite(taskPath)
	var s *suiteFile
	fresh := false
	switch {
	case err != nil:
		s = &suiteFile{path: taskPath, errs: []error{&Error{Pos: Position{File: taskPath}, Msg: "suite file: " + err.Error(), Err: err}}}
		fresh = true
	case path != "":
		if s = ss.byPath[path]; s == nil {
			s = readSuite(path, ss.opts)
			ss.byPath[path] = s
			fresh = true
		}
	}
	ss.byDir[dir] = s
	return s, fresh
}

// readSuite reads and checks a suite file on its own: its keys, their types and values.
// What depends on a task (a tool only the task defines) is checked with each task, at the
// suite file's positions.
func readSuite(path string, opts LoadOptions) *suiteFile {
	s := &suiteFile{path: path}
	// Bounded as a task file is: a suite file arrives in a pull request as task files do,
	// and one nested past reason must not stop every task under it.
	data, err := bounded.ReadFile(path, bounded.TaskFile)
	if err == nil {
		err = bounded.YAML(path, data, bounded.TaskFile)
	}
	if err != nil {
		s.errs = []error{readError(path, err)}
		return s
	}
	s.data = data
	root, _, errs := s.parse()
	if errs != nil {
		s.errs = errs
		return s
	}
	opts.KnownTool, opts.ToolNames, opts.CheckArgs = nil, nil, nil // checked with each task
	l := newLoader(path, opts)
	d := l.d
	l.checkNoAliases(root)
	spec := &caseSpec{vars: map[string]any{}}
	es, _ := d.entries(root, "")
	for _, e := range es {
		switch {
		case contains(SuiteKeys, e.key):
		case contains(taskFields, e.key):
			d.fail(e.keyAt, e.key, "a suite file cannot set %s: it belongs in each task file (a suite file sets %s)", e.key, orList(SuiteKeys))
			continue
		default:
			d.fail(e.keyAt, e.key, "unknown field %q%s", e.key, suggest(e.key, SuiteKeys, "a suite file's fields"))
			continue
		}
		s.keys = append(s.keys, e.key)
		if e.key == keyVars {
			l.declaredVars(e.value, e.key, spec)
			continue
		}
		topLevel[e.key](l, e.value, e.key)
	}
	s.vars, s.order = spec.vars, spec.order
	s.errs = problemsOf(d.errs)
	return s
}

// parse parses the suite file afresh, so each task gets nodes of its own to template and
// merge; tokens are the file's tokens, by which positions in it are told from the task's.
func (s *suiteFile) parse() (ast.Node, map[*token.Token]string, []error) {
	tokens := lexer.Tokenize(string(s.data))
	file, err := parser.Parse(tokens, 0)
	if err != nil {
		return nil, nil, []error{syntaxProblem(s.path, err)}
	}
	var root ast.Node
	for _, doc := range file.Docs {
		if doc.Body == nil {
			continue
		}
		if root != nil {
			d := &decoder{file: s.path}
			return nil, nil, []error{&Error{Pos: d.posOf(doc.Body), Msg: "a suite file holds one YAML document"}}
		}
		root = doc.Body
	}
	if root == nil {
		root = &ast.MappingNode{BaseNode: &ast.BaseNode{}} // an empty suite file sets nothing
	}
	own := make(map[*token.Token]string, len(tokens))
	for _, tk := range tokens {
		own[tk] = s.path
	}
	return root, own, nil
}

// checkNoAliases refuses anchors, aliases and merge keys in a suite file: its nodes join
// each task's document, where an anchor's name could meet one of the task's.
func (l *loader) checkNoAliases(root ast.Node) {
	ast.Walk(visitFunc(func(n ast.Node) {
		switch n.(type) {
		case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode:
			l.d.fail(n, "", "a suite file takes no anchors, aliases or merge keys (<<): write the values out")
		}
	}), root)
}

type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	f(n)
	return f
}

// inherit adds the suite's values to the task's document root, in place: each key the
// task leaves out, and the env: variables it does not set (vars: are merged by readCases).
// The nodes keep their positions in the suite file, so a problem with an inherited value
// is reported there.
func (l *loader) inherit(root ast.Node, s *suiteFile) {
	m, ok := root.(*ast.MappingNode)
	if !ok {
		return // not a mapping: decode reports it
	}
	sroot, own, errs := s.parse()
	if errs != nil {
		return // reported with the suite
	}
	sm, ok := sroot.(*ast.MappingNode)
	if !ok {
		return
	}
	d := l.d
	n := len(d.errs)
	es, _ := d.entries(root, "")
	d.errs = d.errs[:n] // decode reports them
	taskKeys := map[string]entry{}
	for _, e := range es {
		taskKeys[e.key] = e
	}
	if d.foreign == nil {
		d.foreign = map[*token.Token]string{}
	}
	for tk, f := range own {
		d.foreign[tk] = f
	}
	l.t.Suite = s.path
	for _, mv := range sm.Values {
		key, ok := d.key(mv.Key, "")
		if !ok || key == keyVars {
			continue
		}
		mine, set := taskKeys[key]
		switch {
		case !set:
			m.Values = append(m.Values, mv)
			l.t.Inherited = append(l.t.Inherited, key)
		case key == "env":
			l.mergeEnv(mine.value, mv.Value)
		}
	}
}

// mergeEnv adds the suite's env: variables the task's env: does not set. A task's env: that
// is not a plain mapping (null: "no variables") takes nothing.
func (l *loader) mergeEnv(task, suite ast.Node) {
	tm, ok := task.(*ast.MappingNode)
	if !ok {
		return
	}
	sm, ok := suite.(*ast.MappingNode)
	if !ok {
		return
	}
	have := map[string]bool{}
	for _, mv := range tm.Values {
		if k, ok := l.d.key(mv.Key, "env"); ok {
			have[k] = true
		}
	}
	added := false
	for _, mv := range sm.Values {
		if k, ok := l.d.key(mv.Key, "env"); ok && !have[k] {
			tm.Values = append(tm.Values, mv)
			added = true
		}
	}
	if added {
		l.t.Inherited = append(l.t.Inherited, "env")
	}
}

// suiteFor finds and reads the suite of one task file, for Load and ParseAll (LoadAll
// shares one suites across its files).
func suiteFor(path string, opts LoadOptions) (*suiteFile, []error) {
	s, _ := newSuites(opts).forTask(path)
	if s != nil && len(s.errs) > 0 {
		return nil, s.errs
	}
	return s, nil
}

// isSuiteFile reports whether a path names a suite file rather than a task file.
func isSuiteFile(path string) bool {
	return strings.EqualFold(filepath.Base(path), SuiteFile)
}
