package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// TestCheck: `runner policy check` decides as the task's scenario would, with the
// toolbox the scenario gets: the cases of policy.CheckCall, which built its own, now over
// the real catalog (write_file's content given, as its schema requires).
func TestCheck(t *testing.T) {
	reg := testRegistry(t)
	tk := &task.Task{
		Path:  "tasks/fix.yaml",
		Tools: []string{"read_file", "write_file", "delete_file", "run_command"},
		Approval: task.Approval{Mode: task.ModeAsk, Default: "deny", Rules: []task.Rule{
			{Tool: "shell", Match: `"command":"(go|git) `, Action: "allow"},
			{Tool: "read_file", Action: "allow"},
			{Tool: "write_file", Action: "allow", Match: `"path":"docs/`},
		}},
		CommandRules: []task.CommandRule{{Match: `^git push`, Action: "deny", Reason: "no pushing"}},
	}
	ctx := context.Background()
	check := func(name, args string, ws *tools.Workspace) (policy.Decision, error) {
		b, err := New(tk, Options{Catalog: reg})
		assert.NilError(t, err)
		return b.Check(ctx, name, json.RawMessage(args), ws)
	}

	cases := []struct {
		name, args string
		allowed    bool
		by         string
	}{
		{"run_in_terminal", `{"command":"go test ./..."}`, true, "approval.rules[0]"},
		{"run_command", `{"command":"git push origin main"}`, false, "command_rules[0]"},
		{"shell", `{"command":"go vet ./... && rm -rf ~"}`, false, "built-in command rule rm-home"},
		{"run_in_terminal", `{"command":"make"}`, false, "the approval default (deny)"},
		{"read_file", `{"path":"a.go"}`, true, "approval.rules[1]"},
		{"write_file", `"{\"path\":\"docs/x.md\",\"content\":\"x\"}"`, true, "approval.rules[2]"},
		{"delete_file", `{"path":"a.go"}`, false, "the approval default (deny)"},
	}
	for _, tc := range cases {
		d, err := check(tc.name, tc.args, nil)
		assert.NilError(t, err, "%s %s", tc.name, tc.args)
		assert.Check(t, is.Equal(d.Allowed, tc.allowed), "%s %s: %+v", tc.name, tc.args, d)
		assert.Check(t, is.Equal(d.By, tc.by), "%s %s: %+v", tc.name, tc.args, d)
	}

	// Usage errors: unknown tool, a tool the task does not offer, bad arguments.
	_, err := check("nope", `{}`, nil)
	assert.Check(t, is.ErrorContains(err, "Unknown tool 'nope'"))
	_, err = check("create_file", `{"path":"a"}`, nil)
	assert.Check(t, is.ErrorContains(err, `tool "create_file" is not among the task's tools`))
	_, err = check("read_file", `{"path":5}`, nil)
	assert.Check(t, is.ErrorContains(err, "tool read_file: Invalid arguments"))
	_, err = check("read_file", `not json`, nil)
	assert.Check(t, is.ErrorContains(err, "not a valid JSON object"))

	bad := *tk
	bad.Approval.Mode = "sometimes"
	_, err = New(&bad, Options{Catalog: reg})
	assert.Check(t, is.ErrorContains(err, "approval policy"))

	// A given workspace is where overwrites are judged.
	auto := &task.Task{Path: "t.yaml", Approval: task.Approval{Mode: task.ModeAuto, Default: "deny",
		Rules: []task.Rule{{Tool: "ghost_tool", Action: "allow"}}}}
	b, err := New(auto, Options{Catalog: reg})
	assert.NilError(t, err)
	d, err := b.Check(ctx, "write_file", json.RawMessage(`{"path":"existing.txt","content":"x"}`), nil)
	assert.NilError(t, err)
	assert.Check(t, d.Allowed, "in a fresh workspace nothing is overwritten: %+v", d)
	assert.Check(t, is.Len(b.Policy.Warnings(), 1))
	assert.Check(t, is.Contains(b.Policy.Warnings()[0], "ghost_tool"))
	d, err = b.Check(ctx, "write_file", json.RawMessage(`{"path":"existing.txt","content":"x"}`), testWorkspace(t))
	assert.NilError(t, err)
	assert.Check(t, !d.Allowed)
	assert.Check(t, is.Equal(d.Source, policy.SourceDefault))
}

// TestCheckNormalisesAsRunsDo: another spelling of a protected path is denied by the
// check as by the run (issue 7 item 11; policy's TestRulesMatchNormalisedArguments).
func TestCheckNormalisesAsRunsDo(t *testing.T) {
	reg := testRegistry(t)
	ws := testWorkspace(t)
	assert.NilError(t, ws.Root().MkdirAll("protected/sub", 0o755))
	tk := &task.Task{Path: "t.yaml", Approval: task.Approval{Mode: task.ModeRules, Default: "allow", Rules: []task.Rule{
		{Match: `"path":"protected/`, Action: "deny"}}}}
	b, err := New(tk, Options{Catalog: reg})
	assert.NilError(t, err)
	d, err := b.Check(context.Background(), "write_file", json.RawMessage(`{"path":"./protected/a.txt","content":"x"}`), ws)
	assert.NilError(t, err)
	assert.Check(t, !d.Allowed, "%+v", d)
	d, err = b.Check(context.Background(), "write_file", json.RawMessage(`{"path":"x/../protected/a.txt","content":"x"}`), nil)
	assert.NilError(t, err)
	assert.Check(t, !d.Allowed, "%+v", d)
}

// TestNewAppliesTheRunsParts: the run's --approval wins over the task's, the toolset is
// the task's tools:, and the sandbox is probed for the task's mode, except where a
// container confines the commands or nothing runs.
func TestNewAppliesTheRunsParts(t *testing.T) {
	reg := testRegistry(t)
	var probed []string
	probe := func(mode string) (tools.CommandWrapper, error) { probed = append(probed, mode); return nil, nil }
	tk := &task.Task{Path: "t.yaml", Tools: []string{"read_file"}, Sandbox: "landlock", Approval: task.Approval{Mode: task.ModeAuto}}
	b, err := New(tk, Options{Catalog: reg, Sandbox: probe, Approval: &task.Approval{Mode: task.ModeReadOnly}})
	assert.NilError(t, err)
	assert.Equal(t, b.Approval.Mode, task.ModeReadOnly)
	assert.DeepEqual(t, b.Toolset.Names(), []string{"read_file"})
	assert.DeepEqual(t, probed, []string{"landlock"})

	withEnv := *tk
	withEnv.Environment = &task.Environment{}
	_, err = New(&withEnv, Options{Catalog: reg, Sandbox: probe})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(probed, []string{"landlock"}), "a container confines the commands: no probe")

	failed := errors.New("no sandbox works")
	_, err = New(tk, Options{Catalog: reg, Sandbox: func(string) (tools.CommandWrapper, error) { return nil, failed }})
	assert.ErrorIs(t, err, failed)
	assert.ErrorContains(t, err, "sandbox: ")
}

// testRegistry is the real catalog, as a run's toolbox gets it.
func testRegistry(t *testing.T) *tools.Registry {
	t.Helper()
	return catalog.New(catalog.Options{})
}

// testWorkspace holds one existing file, existing.txt.
func testWorkspace(t *testing.T) *tools.Workspace {
	t.Helper()
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	assert.NilError(t, ws.Root().WriteFile("existing.txt", []byte("x"), 0o644))
	return ws
}
