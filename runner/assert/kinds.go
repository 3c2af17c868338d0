package assert

import (
	"fmt"
	"slices"
	"sort"

	"github.com/agentrunner/runner/runner/task"
)

// Kind is one row of the registry of assertion kinds, and carries all there is to a kind:
// the key of an assert: entry and its doc line (the schema's description; the table in
// docs/assertions.md is tested against the rows), how its value is written (Schema, the
// JSON Schema of a scalar value, or a zero Spec whose fields the schema describes), its
// decoder (Decode, with task.Value's methods: positioned errors as the loader's own) and
// its checker (New). runner/task, the format, knows the first part only: each row
// registers it there (task.RegisterKind), so task imports nothing of the runtime. A new
// kind is its file (Spec type, decoder, checker) plus its row
// (runner/schemas/newkind_test.go adds one).
type Kind struct {
	Name   string
	Doc    string
	Spec   any
	Schema string
	Decode func(v task.Value) (any, bool)
	// New type-checks a decoded spec and returns the kind's checker.
	New func(spec any) (Checker, error)
}

// Registry is the assertion kinds, in the order of the documentation.
var Registry = []Kind{
	{Name: task.KindCompleted, Doc: "Whether task_complete was called (true) or not (false).", Schema: `{"type": "boolean"}`,
		Decode: func(v task.Value) (any, bool) { return v.Bool() }, New: newCompleted},
	{Name: task.KindFileExists, Doc: "This file exists at the end.", Schema: `{"$ref": "#/$defs/path"}`,
		Decode: func(v task.Value) (any, bool) { return v.Path() }, New: newFileExists},
	{Name: task.KindFileAbsent, Doc: "This file does not exist at the end.", Schema: `{"$ref": "#/$defs/path"}`,
		Decode: func(v task.Value) (any, bool) { return v.Path() }, New: newFileAbsent},
	{Name: task.KindFileContains, Doc: "A file contains a substring.", Spec: task.FileContains{},
		Decode: task.DecodeFileContains, New: newFileContains},
	{Name: task.KindFileMatches, Doc: "A file matches a regex.", Spec: task.FileMatches{},
		Decode: task.DecodeFileMatches, New: newFileMatches},
	{Name: task.KindFileEquals, Doc: "A file's exact content.", Spec: task.FileEquals{},
		Decode: task.DecodeFileEquals, New: newFileEquals},
	{Name: task.KindCommand, Doc: "A shell command run in the final workspace (after verify files are added).", Spec: task.CommandCheck{},
		Decode: task.DecodeCommand, New: newCommand},
	{Name: task.KindToolCalled, Doc: "A tool was executed (denied calls do not count): a name, or a block.", Spec: task.ToolCalled{},
		Schema: `{"$ref": "#/$defs/toolName"}`, Decode: task.DecodeToolCalled, New: newToolCalled},
	{Name: task.KindToolNotCalled, Doc: "This tool was never executed.", Schema: `{"$ref": "#/$defs/toolName"}`,
		Decode: func(v task.Value) (any, bool) { return v.Tool() }, New: newToolNotCalled},
	{Name: task.KindStepsAtMost, Doc: "The agent finished within this many steps (model responses).", Schema: `{"type": "integer", "minimum": 1}`,
		Decode: func(v task.Value) (any, bool) { return v.AtLeast(1) }, New: newStepsAtMost},
	{Name: task.KindSummaryMatches, Doc: "The task_complete summary matches this regex.", Schema: `{"$ref": "#/$defs/regex"}`,
		Decode: func(v task.Value) (any, bool) { return v.Regex() }, New: newSummaryMatches},
	{Name: task.KindDeniedAtMost, Doc: "At most this many calls were denied by the approval policy or command rules.", Schema: `{"type": "integer", "minimum": 0}`,
		Decode: func(v task.Value) (any, bool) { return v.AtLeast(0) }, New: newDeniedAtMost},
	{Name: task.KindJudge, Doc: "A model grades the work against the rubric, seeing the task's prompt, the files named and the agent's summary, and answers through a verdict tool call (score 0..1, reasoning). Passes when score >= min_score. The judge's own failures (unreachable, no verdict) are scenario errors; its tokens are counted apart (judge_usage).",
		Spec: task.Judge{}, Decode: task.DecodeJudge, New: newJudge},
}

// The rows' task file side reaches the loader when this package is linked, as a
// database/sql driver registers itself: the format cannot import its checkers.
func init() {
	for _, k := range Registry {
		task.RegisterKind(k.format())
	}
}

// Register adds a row to Registry, and its task file side to the loader: a kind defined
// outside the table (a test's, a build's own). It is for init functions and tests,
// before anything loads a task file; a name already registered panics.
func Register(k Kind) {
	if k.New == nil {
		panic("assert: Register of " + k.Name + " without a checker")
	}
	task.RegisterKind(k.format()) // panics on a name twice, before the row is added
	Registry = append(slices.Clip(Registry), k)
}

func (k Kind) format() task.AssertionKind {
	return task.AssertionKind{Name: k.Name, Doc: k.Doc, Spec: k.Spec, Schema: k.Schema, Decode: k.Decode}
}

// Kinds returns the names of every assertion kind, sorted.
func Kinds() []string {
	names := make([]string, 0, len(Registry))
	for _, k := range Registry {
		names = append(names, k.Name)
	}
	sort.Strings(names)
	return names
}

// New builds the checker for one assertion. It fails on an unknown kind, a spec of the
// wrong type or an invalid regex, so `runner validate` can report these before a run.
func New(a task.Assertion) (Checker, error) {
	i := slices.IndexFunc(Registry, func(k Kind) bool { return k.Name == a.Kind })
	if i < 0 {
		return nil, fmt.Errorf("unknown assertion kind %q", a.Kind)
	}
	c, err := Registry[i].New(a.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Kind, err)
	}
	return c, nil
}
