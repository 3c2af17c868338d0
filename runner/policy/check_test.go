package policy

import (
	"context"
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/task"
)

func TestCheckCall(t *testing.T) {
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
	check := func(name, args string, opts CheckOptions) (Decision, error) {
		d, _, err := CheckCall(ctx, tk, reg, name, json.RawMessage(args), opts)
		return d, err
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
		{"write_file", `"{\"path\":\"docs/x.md\"}"`, true, "approval.rules[2]"},
		{"delete_file", `{"path":"a.go"}`, false, "the approval default (deny)"},
	}
	for _, tc := range cases {
		d, err := check(tc.name, tc.args, CheckOptions{})
		assert.NilError(t, err, "%s %s", tc.name, tc.args)
		assert.Check(t, is.Equal(d.Allowed, tc.allowed), "%s %s: %+v", tc.name, tc.args, d)
		assert.Check(t, is.Equal(d.By, tc.by), "%s %s: %+v", tc.name, tc.args, d)
	}

	// Usage errors: unknown tool, a tool the task does not offer, bad arguments.
	_, err := check("nope", `{}`, CheckOptions{})
	assert.Check(t, is.ErrorContains(err, "Unknown tool 'nope'"))
	_, err = check("create_file", `{"path":"a"}`, CheckOptions{})
	assert.Check(t, is.ErrorContains(err, `tool "create_file" is not among the task's tools`))
	_, err = check("read_file", `{"path":5}`, CheckOptions{})
	assert.Check(t, is.ErrorContains(err, "tool read_file: Invalid arguments"))
	_, err = check("read_file", `not json`, CheckOptions{})
	assert.Check(t, is.ErrorContains(err, "not a valid JSON object"))

	bad := *tk
	bad.Approval.Mode = "sometimes"
	_, _, err = CheckCall(ctx, &bad, reg, "read_file", json.RawMessage(`{}`), CheckOptions{})
	assert.Check(t, is.ErrorContains(err, "tasks/fix.yaml: approval policy"))

	// A given workspace is where overwrites are judged.
	auto := &task.Task{Path: "t.yaml", Approval: task.Approval{Mode: task.ModeAuto, Default: "deny",
		Rules: []task.Rule{{Tool: "ghost_tool", Action: "allow"}}}}
	d, warnings, err := CheckCall(ctx, auto, reg, "write_file", json.RawMessage(`{"path":"existing.txt"}`), CheckOptions{})
	assert.NilError(t, err)
	assert.Check(t, d.Allowed, "in a fresh workspace nothing is overwritten: %+v", d)
	assert.Check(t, is.Len(warnings, 1))
	assert.Check(t, is.Contains(warnings[0], "ghost_tool"))
	d, _, err = CheckCall(ctx, auto, reg, "write_file", json.RawMessage(`{"path":"existing.txt"}`), CheckOptions{Workspace: testWorkspace(t)})
	assert.NilError(t, err)
	assert.Check(t, !d.Allowed)
	assert.Check(t, is.Equal(d.Source, SourceDefault))
}
