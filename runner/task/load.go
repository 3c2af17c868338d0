package task

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
)

// LoadOptions configure Load and LoadAll. runner/task is the format only: what a task file
// names of the runtime (its tools, sandbox modes and tool-call parsers) is given here as
// data by whoever runs the tasks (runner/session), and a key whose list is nil is not
// checked against one.
type LoadOptions struct {
	// KnownTool resolves a tool name or alias to its canonical name. It checks tools:,
	// reference calls, tool assertions and approval rules; nil skips tool checks.
	KnownTool func(name string) (canonical string, ok bool)
	// ToolNames are the known tools, listed in "unknown tool" messages. When KnownTool is
	// nil and ToolNames is not, a name is known when it is in this list.
	ToolNames []string
	// Now is the time rule expiry is judged against; zero means time.Now().
	Now time.Time
	// CheckArgs, when set, checks a reference call's arguments against the tool's schema
	// (unknown parameters included), so a typo in a reference fails at load time rather
	// than being silently ignored by the oracle run.
	CheckArgs func(tool string, args map[string]any) error
	// Getenv reads the values of the variables a task lists under secrets: (nil:
	// os.Getenv).
	Getenv func(string) string
	// SandboxModes are the values sandbox: takes (tools/exec/sandbox's ModeNames); Parsers
	// those of tool_call_parser: (runner/model/textcall's Modes).
	SandboxModes, Parsers []string
	// SecretMinLen is the shortest secret value the scrubber hides (runner/scrub's
	// MinLen): a shorter one is a warning at its name (0: no warning).
	SecretMinLen int

	// Vars set template variables from outside the file; they win over the file's vars:,
	// matrix cells and dataset rows, for the variables a task declares.
	Vars map[string]any
	// Limit keeps the first Limit cases of each task with a matrix or dataset (0: all);
	// Sample picks Sample of them at random, seeded by Seed, in file order (0: all).
	Limit, Sample int
	Seed          uint64
}

// Load reads and decodes one task file. Decoding is strict: an unknown key, a wrong type,
// a bad regex, duration or tool name is an error, and every problem of the file is
// reported at once, one per line, as "file:line:column: field: message" (a
// *multierror.Error of *Error; see Problems). Defaults are filled in; problems that do
// not stop the task end up in Task.Warnings.
func Load(path string, opts LoadOptions) (*Task, error) {
	data, err := bounded.ReadFile(path, bounded.TaskFile)
	if err != nil {
		return nil, combine([]error{readError(path, err)})
	}
	return Parse(path, data, opts)
}

// Parse decodes a task file's content; path names it in messages and anchors
// workspace.copy and verify.copy.
//
// A file with a matrix: or dataset: holds several cases: Parse returns the first, ParseAll
// returns them all.
func Parse(path string, data []byte, opts LoadOptions) (*Task, error) {
	ts, err := ParseAll(path, data, opts)
	if err != nil {
		return nil, err
	}
	return ts[0], nil
}

// ParseAll decodes a task file into its cases: one task, or one per matrix cell or dataset
// row (see Case).
func ParseAll(path string, data []byte, opts LoadOptions) ([]*Task, error) {
	s, errs := suiteFor(path, opts)
	if errs != nil {
		return nil, combine(errs)
	}
	ps, errs := parse(path, data, opts, s)
	if len(errs) > 0 {
		return nil, combine(errs)
	}
	ts := make([]*Task, len(ps))
	for i, p := range ps {
		ts[i] = p.t
	}
	return ts, nil
}

// readError is a task file that could not be read, or was refused unread (its size, or
// not a regular file).
func readError(path string, err error) error {
	var be *bounded.Error
	if errors.As(err, &be) {
		return syntaxProblem(path, err)
	}
	return &Error{Pos: Position{File: path}, Msg: readProblem(err), Err: err}
}

func readProblem(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no such file"
	case errors.Is(err, os.ErrPermission):
		return "permission denied"
	}
	return fmt.Sprintf("cannot read: %v", err)
}

// syntaxProblem turns a goccy parse error (which carries a token and a source excerpt)
// into a one-line Error.
func syntaxProblem(path string, err error) error {
	var be *bounded.Error
	if errors.As(err, &be) {
		return &Error{Pos: Position{File: be.File, Line: be.Line, Column: be.Column}, Field: be.Field, Msg: be.Msg, Err: err}
	}
	var ye yaml.Error
	if errors.As(err, &ye) {
		p := Position{File: path, Line: 1, Column: 1}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			p.Line, p.Column = tk.Position.Line, tk.Position.Column
		}
		return &Error{Pos: p, Msg: "invalid YAML: " + ye.GetMessage(), Err: err}
	}
	return &Error{Pos: Position{File: path}, Msg: "invalid YAML: " + err.Error(), Err: err}
}

// loader holds one file's decoding state.
type loader struct {
	d       *decoder
	t       *Task
	opts    LoadOptions
	known   func(string) (string, bool)
	namePos Position

	// Nodes kept for checks that need several keys (which may come in any order).
	refNodes    []ast.Node
	approvalAt  ast.Node
	secretNodes []ast.Node

	// defined holds the tools of tools_defined, decoded before every other key.
	defined      *tools.Registry
	definedNames []string
	mcpNames     []string
	absPaths     []absPath
	freshAt      *absPath // verify.fresh_container: true, which needs environment:
	// toolFiles are the files tools and servers may read, checked once verify is known.
	toolFiles []toolFile

	// agentAt is the agent: key's value, for errors found once the rest is decoded;
	// keyNodes the top-level keys, for warnings about them.
	agentAt  ast.Node
	keyNodes map[string]ast.Node

	// templated is set for a case of a file with vars:, matrix: or dataset:.
	templated bool
	// suite is the suite file whose defaults the task inherits (nil: none).
	suite *suiteFile
}

func newLoader(path string, opts LoadOptions) *loader {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	l := &loader{d: &decoder{file: path}, opts: opts, known: opts.KnownTool}
	if l.known == nil && opts.ToolNames != nil {
		l.known = func(name string) (string, bool) { return name, contains(opts.ToolNames, name) }
	}
	l.t = &Task{
		Path:     path,
		Dir:      filepath.Dir(path),
		Name:     nameFromPath(path),
		MaxSteps: DefaultMaxSteps,
		Timeout:  DefaultTimeout,
		Sandbox:  DefaultSandbox,
		Approval: Approval{Mode: ModeAuto},
	}
	l.namePos = Position{File: path, Line: 1, Column: 1}
	return l
}

// nameFromPath is the default scenario name: the file name without .yaml or .yml.
func nameFromPath(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".yaml", ".yml"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return base
}

// taskFields are the top-level keys, in the order of the documentation.
var taskFields = keysOf(Task{})

func (l *loader) decode(root ast.Node) {
	d, t := l.d, l.t
	l.predecode(root)
	t.KeyLines = map[string]int{}
	l.keyNodes = map[string]ast.Node{}
	present := d.object(root, "", taskFields, func(e entry, f string) {
		if p := d.posOf(e.keyAt); p.File == d.file { // not a key inherited from a suite file
			t.KeyLines[e.key] = p.Line
		}
		l.keyNodes[e.key] = e.keyAt
		dec, ok := topLevel[e.key]
		if !ok {
			panic("task: unhandled field " + e.key) // taskFields and topLevel disagree
		}
		dec(l, e.value, f)
	})
	if _, ok := present["name"]; !ok {
		l.validName(root, "name", t.Name)
	}
	d.require(root, "", present, "prompt")
	l.checkToolFiles()
	l.checkAgent()
}

// topLevel decodes each top-level key (taskFields) into the task: one row per key.
var topLevel = map[string]func(l *loader, v ast.Node, f string){
	"name": func(l *loader, v ast.Node, f string) {
		l.namePos = l.d.posOf(v)
		if s, ok := l.d.nonEmpty(v, f); ok && l.validName(v, f, s) {
			l.t.Name = s
		}
	},
	"description":      func(l *loader, v ast.Node, f string) { l.t.Description, _ = l.d.str(v, f) },
	"tags":             func(l *loader, v ast.Node, f string) { l.t.Tags = l.d.stringList(v, f) },
	"model":            func(l *loader, v ast.Node, f string) { l.t.Model, _ = l.d.nonEmpty(v, f) },
	"agent":            func(*loader, ast.Node, string) {}, // see predecode
	"model_options":    (*loader).modelOptions,
	"tool_call_parser": func(l *loader, v ast.Node, f string) { l.t.ToolCallParser, _ = l.d.choice(v, f, l.opts.Parsers) },
	"system":           func(l *loader, v ast.Node, f string) { l.t.System, _ = l.d.str(v, f) },
	"prompt":           func(l *loader, v ast.Node, f string) { l.t.Prompt, _ = l.d.nonEmpty(v, f) },
	"tools":            (*loader).tools,
	"tools_defined":    func(*loader, ast.Node, string) {}, // see predecode
	"mcp":              func(*loader, ast.Node, string) {}, // see predecode
	keyVars:            func(*loader, ast.Node, string) {}, // see readCases
	keyMatrix:          func(*loader, ast.Node, string) {}, // see readCases
	keyDataset:         func(*loader, ast.Node, string) {}, // see readCases
	"approval":         (*loader).approval,
	"command_rules":    (*loader).commandRules,
	"max_steps": func(l *loader, v ast.Node, f string) {
		if n, ok := l.d.atLeast(v, f, 1); ok {
			l.t.MaxSteps = n
		}
	},
	"timeout": func(l *loader, v ast.Node, f string) {
		if dur, ok := l.d.duration(v, f); ok {
			l.t.Timeout = dur
		}
	},
	"env":         func(l *loader, v ast.Node, f string) { l.t.Env = l.env(v, f) },
	"secrets":     (*loader).secrets,
	"network":     func(l *loader, v ast.Node, f string) { l.t.Network, _ = l.d.boolean(v, f) },
	"sandbox":     (*loader).sandbox,
	"limits":      (*loader).limits,
	"environment": (*loader).environment,
	"score":       (*loader).score,
	"workspace": func(l *loader, v ast.Node, f string) {
		l.t.Workspace.Files, l.t.Workspace.Copy = l.files(v, f, workspaceFields, &l.t.Workspace.Setup, nil)
	},
	"verify": func(l *loader, v ast.Node, f string) {
		l.t.Verify.Files, l.t.Verify.Copy = l.files(v, f, verifyFields, nil, &l.t.Verify.Protect)
	},
	"assert":    (*loader).assertions,
	"reference": (*loader).reference,
}

// validName refuses names that cannot be a directory under the output directory.
func (l *loader) validName(n ast.Node, field, name string) bool {
	bad := name == "." || name == ".." || strings.ContainsAny(name, `/\`) ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f })
	if bad {
		l.d.fail(n, field, "%q cannot name a scenario: it becomes a directory name, so no slashes, control characters, \".\" or \"..\"", name)
	}
	return !bad
}

var modelOptionFields = keysOf(result.ModelOptions{})

func (l *loader) modelOptions(n ast.Node, field string) {
	d, o := l.d, &l.t.ModelOptions
	d.object(n, field, modelOptionFields, func(e entry, f string) {
		switch e.key {
		case "temperature":
			if x, ok := d.number(e.value, f); ok {
				if x < 0 {
					d.fail(e.value, f, "must not be negative, got %v", x)
				}
				o.Temperature = &x
			}
		case "seed":
			if x, ok := d.integer(e.value, f); ok {
				o.Seed = &x
			}
		case "num_ctx":
			o.NumCtx, _ = d.atLeast(e.value, f, 0)
		case "max_tokens":
			o.MaxTokens, _ = d.atLeast(e.value, f, 0)
		case "top_p":
			if x, ok := d.number(e.value, f); ok {
				if x < 0 || x > 1 {
					d.fail(e.value, f, "must be between 0 and 1, got %v", x)
				}
				o.TopP = &x
			}
		}
	})
}

// tools decodes the allowed tools as canonical names, without duplicates, task_complete
// always included.
func (l *loader) tools(n ast.Node, field string) {
	items, _ := l.d.items(n, field)
	list := []string{}
	for i, it := range items {
		f := index(field, i)
		name, ok := l.d.nonEmpty(it, f)
		if !ok {
			continue
		}
		if canonical, ok := l.tool(it, f, name); ok && !contains(list, canonical) {
			list = append(list, canonical)
		}
	}
	if !contains(list, TaskComplete) {
		list = append(list, TaskComplete)
	}
	l.t.Tools = list
}

// tool checks a tool name or alias and returns its canonical name.
func (l *loader) tool(n ast.Node, field, name string) (string, bool) {
	if canonical, ok := l.lookup(name); ok {
		return canonical, true
	}
	l.d.fail(n, field, "unknown tool %q%s", name, hintAndList(name, l.toolNames(), "known tools"))
	return "", false
}

// lookup resolves a tool name or alias to its canonical name: a tool of tools_defined,
// task_complete, or one KnownTool knows (every name, when tool checks are off).
func (l *loader) lookup(name string) (string, bool) {
	// An external agent's tools are its own (Bash, apply_patch): tool_called names them as
	// the endpoint sees them, which no catalog lists.
	if contains(l.definedNames, name) || name == TaskComplete || l.known == nil || l.mcpTool(name) || l.t.Agent.External() {
		return name, true
	}
	return l.known(name)
}

// toolNames lists the known tools for messages: the catalog's and the task's own.
func (l *loader) toolNames() []string {
	if len(l.definedNames) == 0 && len(l.mcpNames) == 0 {
		return l.opts.ToolNames
	}
	names := append(append([]string(nil), l.opts.ToolNames...), l.definedNames...)
	for _, s := range l.mcpNames {
		names = append(names, s+"__*")
	}
	return names
}

// allowed reports whether a canonical tool name may be called under tools:.
func (l *loader) allowed(canonical string) bool {
	if l.t.Tools == nil || contains(l.t.Tools, canonical) {
		return true
	}
	server, _, ok := strings.Cut(canonical, "__")
	return ok && l.mcpTool(canonical) && contains(l.t.Tools, server+"__*")
}

func (l *loader) env(n ast.Node, field string) map[string]string {
	es, _ := l.d.entries(n, field)
	if len(es) == 0 {
		return nil
	}
	env := make(map[string]string, len(es))
	for _, e := range es {
		f := join(field, e.key)
		if !validEnvName(e.key) {
			l.d.fail(e.keyAt, f, "invalid variable name %q: use letters, digits and _, not starting with a digit", e.key)
			continue
		}
		if err := tools.CheckEnv(map[string]string{e.key: ""}); err != nil {
			l.d.fail(e.keyAt, f, "%v", err)
			continue
		}
		if v, ok := l.d.text(e.value, f); ok {
			env[e.key] = v
		}
	}
	return env
}

func validEnvName(s string) bool {
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

var (
	workspaceFields = keysOf(WorkspaceSpec{})
	verifyFields    = keysOf(VerifySpec{})
)

// files decodes a workspace: or verify: block; setup is nil for verify:, which has none,
// and protect is nil for workspace:.
func (l *loader) files(n ast.Node, field string, known []string, setup, protect *[]string) (map[string]string, string) {
	d := l.d
	var files map[string]string
	var copyDir string
	d.object(n, field, known, func(e entry, f string) {
		switch e.key {
		case "files":
			es, _ := d.entries(e.value, f)
			for _, fe := range es {
				ff := mapKey(f, fe.key)
				if !localPath(fe.key) {
					d.fail(fe.keyAt, ff, "path must be relative and stay inside the workspace")
					continue
				}
				if content, ok := d.str(fe.value, ff); ok {
					if files == nil {
						files = map[string]string{}
					}
					files[fe.key] = content
				}
			}
		case "copy":
			if s, ok := d.nonEmpty(e.value, f); ok {
				copyDir = s
				l.checkDir(e.value, f, s)
			}
		case "setup":
			*setup = d.stringList(e.value, f)
		case "template":
			l.t.Workspace.Template = l.templateGlobs(e.value, f)
		case "protect":
			*protect = l.protectGlobs(e.value, f)
		case "fresh_container":
			if b, ok := d.boolean(e.value, f); ok && b {
				l.t.Verify.FreshContainer = true
				l.freshAt = &absPath{e.value, f}
			}
		}
	})
	return files, copyDir
}

// protectGlobs decodes verify.protect: doublestar globs over workspace paths.
func (l *loader) protectGlobs(n ast.Node, field string) []string {
	items, _ := l.d.items(n, field)
	var out []string
	for i, it := range items {
		f := index(field, i)
		if s, ok := l.d.nonEmpty(it, f); ok {
			if strings.HasPrefix(s, "/") {
				// A path inside the environment's container, outside the workspace (the
				// image's test runner): what the agent changed there is compared after it.
				if err := CheckProtectGlob(s[1:]); err != nil {
					l.d.fail(it, f, "%v", err)
					continue
				}
				l.absPaths = append(l.absPaths, absPath{it, f})
				out = append(out, s)
				continue
			}
			if err := CheckProtectGlob(s); err != nil {
				l.d.fail(it, f, "%v", err)
				continue
			}
			out = append(out, s)
		}
	}
	return out
}

// checkDir reports a copy: directory that does not exist next to the task file.
func (l *loader) checkDir(n ast.Node, field, dir string) {
	full := dir
	if !filepath.IsAbs(full) {
		full = filepath.Join(l.t.Dir, filepath.FromSlash(dir))
	}
	info, err := os.Stat(full)
	switch {
	case err != nil:
		l.d.failErr(n, field, err, "directory %q not found (looked for %s, relative to the task file)", dir, full)
	case !info.IsDir():
		l.d.fail(n, field, "%q is not a directory", dir)
	}
}

// localPath reports whether a workspace path is relative and cannot escape: no absolute
// paths, no "..", nothing empty.
func localPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && !strings.Contains(p, `\`) && filepath.IsLocal(filepath.FromSlash(p))
}

// check runs the checks that involve several keys.
func (l *loader) check() {
	t := l.t
	for i, c := range t.Reference {
		if l.known == nil && !contains(l.definedNames, c.Tool) {
			continue
		}
		canonical, ok := l.lookup(c.Tool)
		if ok && !l.allowed(canonical) {
			l.d.fail(l.refNodes[i], index("reference", i), "tool %q is not in tools:, so the reference solution cannot call it", c.Tool)
			continue
		}
		checkArgs := l.opts.CheckArgs
		switch {
		case contains(l.definedNames, c.Tool):
			checkArgs = l.defined.CheckArgs
		case l.mcpTool(c.Tool):
			checkArgs = nil // the server says what its tools take, once it runs
		}
		if ok && checkArgs != nil {
			if err := checkArgs(c.Tool, c.Args); err != nil {
				l.d.fail(l.refNodes[i], index("reference", i)+"."+c.Tool, "%v", err)
			}
		}
	}
	for i, a := range t.Assert {
		tc, ok := a.Spec.(ToolCalled)
		if !ok || tc.Min == 0 || l.allowed(tc.Name) {
			continue
		}
		l.d.errs = append(l.d.errs, &Error{Pos: a.Pos, Field: index("assert", i) + "." + KindToolCalled,
			Msg: fmt.Sprintf("tool %q is not in tools:, so this assertion cannot pass", tc.Name)})
	}
	l.approvalDefaults()
	l.checkAbsPaths()
}
