package tools_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

// echoTool returns its arguments as JSON, so tests see exactly what Prepare produced.
type echoTool struct {
	name     string
	validate func(tools.Args) *tools.Error
}

func (t echoTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        t.name,
		Description: "Echo the arguments.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"path":         tools.String("A path."),
			"pattern":      tools.String("A pattern."),
			"file_pattern": tools.String("A file pattern."),
			"count":        tools.Integer("How many. Default 3.").WithDefault(3).WithRange(1, 100),
			"verbose":      tools.Boolean("Talk more. Default false.").WithDefault(false),
			"mode":         tools.String("fast or slow.").WithEnum("fast", "slow"),
			"tags":         tools.Array("Tags.", tools.String("A tag.")),
		}, "path"),
		Risk: tools.RiskReadOnly,
	}
}

func (t echoTool) Validate(args tools.Args, _ *tools.Workspace) *tools.Error {
	if t.validate != nil {
		return t.validate(args)
	}
	return nil
}

func (echoTool) Execute(_ context.Context, args tools.Args, _ *tools.Workspace) tools.Result {
	b, _ := json.Marshal(args)
	return tools.OK(string(b))
}

func (echoTool) RequiresApproval(args tools.Args, _ *tools.Workspace) bool {
	return args.Bool("verbose")
}

// panicTool crashes, as a buggy tool might.
type panicTool struct{}

func (panicTool) Spec() tools.Spec {
	return tools.Spec{Name: "boom", Description: "Crash.", Parameters: tools.Object(nil), Risk: tools.RiskDangerous}
}
func (panicTool) Validate(tools.Args, *tools.Workspace) *tools.Error { return nil }
func (panicTool) Execute(context.Context, tools.Args, *tools.Workspace) tools.Result {
	var m map[string]int
	m["x"] = 1 //nolint:staticcheck // SA5000 is the point: a nil map write, a runtime panic as in a buggy tool
	return tools.OK("unreachable")
}
func (panicTool) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

func newRegistry(t *testing.T) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	reg.MustRegister(echoTool{name: "echo"}, panicTool{})
	assert.NilError(t, reg.AddAlias(tools.Alias{Name: "cat", Target: "echo", Params: map[string]string{"file": "path", "n": "count"}}))
	assert.NilError(t, reg.AddAlias(tools.Alias{Name: "grep", Target: "echo",
		Params: map[string]string{"query": "pattern", "pattern": "file_pattern"}}))
	assert.NilError(t, reg.AddAlias(tools.Alias{Name: "shout", Target: "echo", Rewrite: func(a tools.Args) { a["verbose"] = true }}))
	assert.NilError(t, reg.AddSynonyms("echo", map[string]string{"times": "count", "loud": "verbose"}))
	return reg
}

func TestPrepare(t *testing.T) {
	tests := []struct {
		name string
		tool string
		raw  string
		want map[string]any // the prepared arguments
	}{
		{"defaults applied", "echo", `{"path":"a"}`, map[string]any{"path": "a", "count": 3.0, "verbose": false}},
		{"given values kept", "echo", `{"path":"a","count":7,"verbose":true}`, map[string]any{"path": "a", "count": 7.0, "verbose": true}},
		{"camelCase names", "echo", `{"path":"a","filePattern":"*.go"}`, map[string]any{"path": "a", "file_pattern": "*.go", "count": 3.0, "verbose": false}},
		{"synonyms", "echo", `{"path":"a","times":2,"loud":true}`, map[string]any{"path": "a", "count": 2.0, "verbose": true}},
		{"synonyms through an alias", "cat", `{"file":"x","times":2}`, map[string]any{"path": "x", "count": 2.0, "verbose": false}},
		{"null means not given", "echo", `{"path":"a","count":null}`, map[string]any{"path": "a", "count": 3.0, "verbose": false}},
		{"string to integer", "echo", `{"path":"a","count":" 12 "}`, map[string]any{"path": "a", "count": 12.0, "verbose": false}},
		{"string to boolean", "echo", `{"path":"a","verbose":"true"}`, map[string]any{"path": "a", "count": 3.0, "verbose": true}},
		{"JSON string holding the object", "echo", `"{\"path\":\"a\",\"count\":2}"`, map[string]any{"path": "a", "count": 2.0, "verbose": false}},
		{"file_path is path", "echo", `{"file_path":"f.go"}`, map[string]any{"path": "f.go", "count": 3.0, "verbose": false}},
		{"file_path equal to path", "echo", `{"file_path":"f.go","path":"f.go"}`, map[string]any{"path": "f.go", "count": 3.0, "verbose": false}},
		{"alias parameters renamed", "cat", `{"file":"x","n":"5"}`, map[string]any{"path": "x", "count": 5.0, "verbose": false}},
		{"canonical names work through an alias", "cat", `{"path":"x"}`, map[string]any{"path": "x", "count": 3.0, "verbose": false}},
		{"chained renames do not collide", "grep", `{"path":"p","query":"TODO","pattern":"*.go"}`,
			map[string]any{"path": "p", "pattern": "TODO", "file_pattern": "*.go", "count": 3.0, "verbose": false}},
		{"alias rewrite", "shout", `{"path":"x"}`, map[string]any{"path": "x", "count": 3.0, "verbose": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistry(t)
			call, err := reg.Prepare(tc.tool, json.RawMessage(tc.raw))
			assert.Assert(t, err == nil, "prepare: %v", err)
			assert.DeepEqual(t, jsonValues(t, call.Args), tc.want)
			assert.Equal(t, call.Name, tc.tool)
			assert.Equal(t, call.Tool, "echo")
		})
	}
}

// jsonValues compares arguments by their JSON meaning: a schema default written as the Go
// int 3 and a model's 3 (float64) are the same argument.
func jsonValues(t *testing.T, args tools.Args) map[string]any {
	t.Helper()
	b, err := json.Marshal(args)
	assert.NilError(t, err)
	var m map[string]any
	assert.NilError(t, json.Unmarshal(b, &m))
	return m
}

func TestPrepareErrors(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		raw     string
		contain []string
	}{
		{"unknown tool", "nope", `{}`, []string{"Unknown tool 'nope'", "Available tools: echo, boom"}},
		{"missing required", "echo", `{}`, []string{"Invalid arguments for echo", "'path' is required"}},
		{"empty arguments still need required ones", "echo", ``, []string{"'path' is required"}},
		{"wrong type names the field", "echo", `{"path":5}`, []string{"'path'"}},
		{"extra parameters are errors", "echo", `{"path":"a","color":"red","nested":{"x":1}}`,
			[]string{"echo has no parameters color, nested (parameters: count, file_pattern, mode, path, pattern, tags, verbose)"}},
		{"an alias is named with its tool", "cat", `{"file":"a","colour":1}`, []string{"cat (echo) has no parameter colour"}},
		{"a synonym does not override the name it stands for", "echo", `{"path":"a","count":1,"times":2}`, []string{"no parameter times"}},
		{"path and file_path disagree", "echo", `{"file_path":"f.go","path":"p.go"}`, []string{"both path p.go and file_path f.go"}},
		{"unparseable number names the field", "echo", `{"path":"a","count":"many"}`, []string{"'count'"}},
		{"out of range", "echo", `{"path":"a","count":500}`, []string{"'count'"}},
		{"not in the enum", "echo", `{"path":"a","mode":"medium"}`, []string{"'mode'"}},
		{"array item type", "echo", `{"path":"a","tags":["x",1]}`, []string{"'tags.1'"}},
		{"every violation is named", "echo", `{"path":1,"count":"x"}`, []string{"'path'", "'count'"}},
		{"alias errors name the canonical tool", "cat", `{"n":1}`, []string{"Invalid arguments for echo", "'path' is required"}},
		{"not JSON", "echo", `{path: a}`, []string{"not a valid JSON object"}},
		{"a JSON array", "echo", `[1,2]`, []string{"not a valid JSON object"}},
		{"a JSON string holding garbage", "echo", `"oops"`, []string{"not a valid JSON object"}},
		{"an unterminated JSON string", "echo", `"{\"path\": \"a\"}`, []string{"Arguments are not valid JSON"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistry(t)
			call, err := reg.Prepare(tc.tool, json.RawMessage(tc.raw))
			assert.Assert(t, call == nil)
			assert.Assert(t, err != nil)
			assert.Equal(t, err.Code, tools.CodeInvalidArgument)
			for _, c := range tc.contain {
				assert.Assert(t, is.Contains(err.Message+" "+err.Suggestion, c))
			}
		})
	}
}

func TestExecute(t *testing.T) {
	ws := openWorkspace(t, t.TempDir())
	reg := newRegistry(t)

	res := reg.Run(context.Background(), "boom", nil, ws)
	assert.Assert(t, !res.Success)
	assert.Equal(t, res.Error.Code, tools.CodeExecutionError)
	assert.Assert(t, is.Contains(res.Error.Message, "tool boom crashed: assignment to entry in nil map"))
	assert.Assert(t, strings.HasPrefix(res.Output, "Error: tool boom crashed"))

	res = reg.Run(context.Background(), "echo", json.RawMessage(`{"path":"a"}`), ws)
	assert.Assert(t, res.Success)
	assert.Equal(t, res.Output, `{"count":3,"path":"a","verbose":false}`)

	res = reg.Run(context.Background(), "nope", nil, ws)
	assert.Equal(t, res.Error.Code, tools.CodeInvalidArgument)
	assert.Assert(t, strings.HasPrefix(res.Output, "Error: Unknown tool 'nope'. Available tools:"))

	// A failed Validate stops the call before Execute.
	strict := tools.NewRegistry()
	strict.MustRegister(echoTool{name: "strict", validate: func(a tools.Args) *tools.Error {
		return tools.Errorf(tools.CodeInvalidPath, "Try another.", "bad path %q", a.String("path"))
	}})
	res = strict.Run(context.Background(), "strict", json.RawMessage(`{"path":"x"}`), ws)
	assert.Equal(t, res.Error.Code, tools.CodeInvalidPath)
	assert.Equal(t, res.Output, `Error: bad path "x". Try another.`)
}

func TestCallRiskAndApproval(t *testing.T) {
	ws := openWorkspace(t, t.TempDir())
	reg := newRegistry(t)
	call, err := reg.Prepare("shout", json.RawMessage(`{"path":"a"}`))
	assert.Assert(t, err == nil)
	assert.Equal(t, call.Risk(), tools.RiskReadOnly)
	assert.Assert(t, call.RequiresApproval(ws), "the tool decides per call")
	call, _ = reg.Prepare("echo", json.RawMessage(`{"path":"a"}`))
	assert.Assert(t, !call.RequiresApproval(ws))
	call, _ = reg.Prepare("boom", nil)
	assert.Equal(t, call.Risk(), tools.RiskDangerous)
}

func TestRegisterAndAliasErrors(t *testing.T) {
	reg := newRegistry(t)
	assert.ErrorContains(t, reg.Register(echoTool{name: "echo"}), "a tool with that name exists")
	assert.ErrorContains(t, reg.Register(echoTool{name: "cat"}), "an alias with that name exists")
	assert.ErrorContains(t, reg.Register(echoTool{name: ""}), "empty name")
	assert.ErrorContains(t, reg.Register(badSchema{}), "type object")
	assert.ErrorContains(t, reg.AddAlias(tools.Alias{Name: "x", Target: "missing"}), "unknown target")
	assert.ErrorContains(t, reg.AddAlias(tools.Alias{Name: "echo", Target: "boom"}), "a tool with that name exists")
	assert.ErrorContains(t, reg.AddAlias(tools.Alias{Name: "cat", Target: "boom"}), "already defined")
}

type badSchema struct{ panicTool }

func (badSchema) Spec() tools.Spec {
	return tools.Spec{Name: "bad", Parameters: tools.String("not an object")}
}

// uncompilableSchema has an object schema whose property type JSON Schema does not know.
type uncompilableSchema struct{ panicTool }

func (uncompilableSchema) Spec() tools.Spec {
	return tools.Spec{Name: "typo", Parameters: tools.Object(map[string]*tools.Schema{"n": {Type: "integr"}})}
}

func TestSchemaCompiledOnFirstUse(t *testing.T) {
	reg := newRegistry(t)
	assert.NilError(t, reg.CheckSchemas())
	assert.NilError(t, reg.Register(uncompilableSchema{}), "checking waits for the first call")
	sub, err := reg.Subset("typo", "echo")
	assert.NilError(t, err)
	for _, r := range []*tools.Registry{reg, sub} {
		assert.ErrorContains(t, r.CheckSchemas(), `tool typo: n: unknown type "integr"`)
		_, terr := r.Prepare("typo", json.RawMessage(`{"n": 1}`))
		assert.Assert(t, terr != nil)
		assert.Equal(t, terr.Code, tools.CodeExecutionError)
		assert.ErrorContains(t, terr, "Tool typo cannot take calls: its parameter schema is malformed")
		assert.ErrorContains(t, r.CheckArgs("typo", map[string]any{"n": 1}), "is malformed")
		// The other tools are unaffected.
		call, terr := r.Prepare("echo", json.RawMessage(`{"path": "a"}`))
		assert.Assert(t, terr == nil, "%v", terr)
		assert.Equal(t, call.Args["count"], float64(3), "defaults come with the lazily checked schema")
	}
}

func TestFirstPrepareConcurrent(t *testing.T) {
	reg := newRegistry(t) // nothing compiled yet: the goroutines race to compile echo
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, terr := reg.Prepare("cat", json.RawMessage(`{"file": "a", "n": "7"}`))
			assert.Check(t, terr == nil, "%v", terr)
		}()
	}
	wg.Wait()
}

func TestLookupSubsetAndListing(t *testing.T) {
	reg := newRegistry(t)
	tool, canonical, ok := reg.Lookup("cat")
	assert.Assert(t, ok)
	assert.Equal(t, canonical, "echo")
	assert.Equal(t, tool.Spec().Name, "echo")
	_, _, ok = reg.Lookup("missing")
	assert.Assert(t, !ok)
	c, ok := reg.Canonical("grep")
	assert.Assert(t, ok && c == "echo")

	assert.DeepEqual(t, reg.Names(), []string{"echo", "boom"})
	specs := reg.Specs()
	assert.Equal(t, len(specs), 2)
	assert.Equal(t, specs[1].Name, "boom")
	var aliasNames []string
	for _, a := range reg.Aliases() {
		aliasNames = append(aliasNames, a.Name)
	}
	assert.DeepEqual(t, aliasNames, []string{"cat", "grep", "shout"})

	sub, err := reg.Subset("boom")
	assert.NilError(t, err)
	assert.DeepEqual(t, sub.Names(), []string{"boom"})
	assert.Equal(t, len(sub.Aliases()), 0, "aliases of tools left out go too")
	sub, err = reg.Subset("cat", "boom")
	assert.NilError(t, err)
	assert.DeepEqual(t, sub.Names(), []string{"echo", "boom"}) // registry order, not request order
	assert.Equal(t, len(sub.Aliases()), 3)
	_, err = reg.Subset("echo", "nope")
	assert.ErrorContains(t, err, `unknown tool "nope"`)
}

func TestMustRegisterPanics(t *testing.T) {
	defer func() { assert.Assert(t, recover() != nil) }()
	tools.NewRegistry().MustRegister(echoTool{name: "a"}, echoTool{name: "a"})
}

func TestResultHelpers(t *testing.T) {
	res := tools.Failf(tools.CodeAlreadyExists, "Use replace_string_in_file to modify it", "File '%s' already exists", "test.txt")
	assert.Equal(t, res.Output, "Error: File 'test.txt' already exists. Use replace_string_in_file to modify it")
	assert.Equal(t, res.Error.Error(), "ALREADY_EXISTS: File 'test.txt' already exists (Use replace_string_in_file to modify it)")
	assert.Equal(t, tools.Fail(tools.Errorf(tools.CodeTimeout, "", "slow")).Output, "Error: slow")
	assert.Equal(t, tools.Errorf(tools.CodeTimeout, "", "slow").Error(), "TIMEOUT: slow")

	ok := tools.OK("done").WithMeta("a", 1).WithMeta("b", "x")
	assert.DeepEqual(t, ok.Metadata, map[string]any{"a": 1, "b": "x"})
	b, err := json.Marshal(ok)
	assert.NilError(t, err)
	assert.Equal(t, string(b), `{"success":true,"output":"done","execution_time_ms":0,"metadata":{"a":1,"b":"x"}}`)
}

func TestArgsHelpers(t *testing.T) {
	args, err := tools.DecodeArgs(json.RawMessage(`{"s":"x","n":3,"big":1e12,"neg":-1e12,"b":true,"list":["a",1,"b"],"env":{"K":"V","N":2},"nil":null}`))
	assert.Assert(t, err == nil)
	assert.Equal(t, args.String("s"), "x")
	assert.Equal(t, args.String("n"), "", "not a string")
	assert.Equal(t, args.Int("n"), 3)
	assert.Equal(t, args.Int("big"), 1<<31-1, "clamped, not wrapped")
	assert.Equal(t, args.Int("neg"), -1<<31)
	assert.Equal(t, args.Int("s"), 0)
	assert.Assert(t, args.Bool("b") && !args.Bool("s"))
	assert.DeepEqual(t, args.Strings("list"), []string{"a", "b"})
	assert.DeepEqual(t, args.StringMap("env"), map[string]string{"K": "V"})
	assert.Assert(t, args.Has("s") && !args.Has("nil") && !args.Has("absent"))

	for _, raw := range []string{"", "null", "  ", `""`, `"  "`, `"null"`} {
		args, err := tools.DecodeArgs(json.RawMessage(raw))
		assert.Assert(t, err == nil, raw)
		assert.Equal(t, len(args), 0, raw)
	}
}

func TestCheckArgsIsStrict(t *testing.T) {
	r := newRegistry(t)
	assert.NilError(t, r.CheckArgs("echo", map[string]any{"file_path": "b"}))
	err := r.CheckArgs("echo", map[string]any{"path": "a", "paht": "b", "colour": 1})
	assert.ErrorContains(t, err, "echo has no parameters colour, paht (parameters: count, file_pattern, mode, path, pattern, tags, verbose)")
	assert.ErrorContains(t, r.CheckArgs("echo", map[string]any{}), "'path' is required")
	assert.ErrorContains(t, r.CheckArgs("nope", nil), "Unknown tool 'nope'")
	// YAML's .nan in a reference solution cannot be sent as JSON.
	assert.ErrorContains(t, r.CheckArgs("echo", map[string]any{"path": "a", "count": math.NaN()}),
		"arguments for echo: json: unsupported value: NaN")
	// What models send is held to the same rule: an ignored option would mislead them.
	_, perr := r.Prepare("echo", json.RawMessage(`{"path":"a","paht":"b"}`))
	assert.Assert(t, perr != nil && perr.Code == tools.CodeInvalidArgument)
}

func TestAddSynonyms(t *testing.T) {
	r := newRegistry(t)
	assert.ErrorContains(t, r.AddSynonyms("nope", nil), "unknown tool nope")
	assert.ErrorContains(t, r.AddSynonyms("echo", map[string]string{"x": "missing"}), "no parameter missing")
	sub, err := r.Subset("echo")
	assert.NilError(t, err)
	call, perr := sub.Prepare("echo", json.RawMessage(`{"path":"a","times":4}`))
	assert.Assert(t, perr == nil, "%v", perr)
	assert.Equal(t, call.Args["count"], 4.0)
}

// TestWith: the registry a scenario builds for the tools its task brings keeps the
// catalog's tools, aliases and synonyms, and leaves the catalog as it was.
func TestWith(t *testing.T) {
	reg := newRegistry(t)
	out, err := reg.With(echoTool{name: "extra"})
	assert.NilError(t, err)
	assert.DeepEqual(t, out.Names(), []string{"echo", "boom", "extra"})
	assert.DeepEqual(t, reg.Names(), []string{"echo", "boom"})
	call, perr := out.Prepare("cat", json.RawMessage(`{"file":"a","n":2}`))
	assert.Assert(t, perr == nil, "%v", perr)
	assert.Equal(t, call.Tool, "echo")
	// Synonyms came along: dropping them made write_file's createDirs an unknown
	// parameter in every scenario with tools_defined or MCP servers.
	call, perr = out.Prepare("echo", json.RawMessage(`{"path":"a","times":4,"loud":true}`))
	assert.Assert(t, perr == nil, "%v", perr)
	assert.Equal(t, call.Args["count"], 4.0)
	assert.Equal(t, call.Args["verbose"], true)
	// Synonyms added to the new registry stay there.
	assert.NilError(t, out.AddSynonyms("extra", map[string]string{"p": "path"}))
	_, perr = reg.Prepare("echo", json.RawMessage(`{"p":"a"}`))
	assert.Assert(t, perr != nil)

	_, err = reg.With(echoTool{name: "new"}, echoTool{name: "cat"})
	assert.ErrorContains(t, err, "register tool cat: an alias with that name exists")
	_, err = reg.With(echoTool{name: "boom"})
	assert.ErrorContains(t, err, "register tool boom: a tool with that name exists")
}

// defaultTool's schema has a default that is not JSON: a Go programmer's mistake.
type defaultTool struct{ panicTool }

func (defaultTool) Spec() tools.Spec {
	return tools.Spec{Name: "chan", Parameters: tools.Object(map[string]*tools.Schema{
		"c": tools.String("").WithDefault(make(chan int)),
	})}
}

// A schema that does not marshal fails the tool's calls; it used to panic in Prepare,
// which the registry does not recover, and crash the run.
func TestUnmarshalableDefault(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(defaultTool{})
	assert.ErrorContains(t, reg.CheckSchemas(), "tool chan: c: default")
	_, terr := reg.Prepare("chan", nil)
	assert.Assert(t, terr != nil)
	assert.Equal(t, terr.Code, tools.CodeExecutionError)
	assert.ErrorContains(t, terr, "'c': want string, got chan int")
	assert.Assert(t, is.Panics(func() { defaultTool{}.Spec().Parameters.Map() }))
}

// numberTool takes a bounded number.
type numberTool struct{ panicTool }

func (numberTool) Spec() tools.Spec {
	return tools.Spec{Name: "ratio", Parameters: tools.Object(map[string]*tools.Schema{
		"r": (&tools.Schema{Type: "number", Description: "0 to 1."}).WithRange(0, 1),
	})}
}

// A quoted "NaN" or "Inf" is not coerced into a number: NaN passes every minimum and
// maximum, and neither can be written as JSON for the tool's command or MCP server.
func TestQuotedNaNIsNotANumber(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(numberTool{})
	for _, v := range []string{"NaN", " nan", "Inf", "-Infinity"} {
		raw, _ := json.Marshal(map[string]string{"r": v})
		_, terr := reg.Prepare("ratio", raw)
		assert.Assert(t, terr != nil, v)
		assert.Check(t, is.Contains(terr.Message, "'r': want number, got string"), v)
	}
	call, terr := reg.Prepare("ratio", json.RawMessage(`{"r":" 0.5 "}`))
	assert.Assert(t, terr == nil, "%v", terr)
	assert.Equal(t, call.Args["r"], 0.5)
}
