package policy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/task"
)

// The bypasses of issue 7 item 11: rules used to match the raw JSON, so another spelling
// of a protected path, or a leading blank before a command, slipped past a deny rule.
func TestRulesMatchNormalisedArguments(t *testing.T) {
	reg := testRegistry(t)
	ws := testWorkspace(t)
	assert.NilError(t, ws.Root().MkdirAll("protected/sub", 0o755))
	assert.NilError(t, ws.Root().Mkdir("src", 0o755))
	assert.NilError(t, ws.Root().WriteFile("keep.txt", []byte("k"), 0o644))
	assert.NilError(t, os.Symlink("protected", filepath.Join(ws.Dir(), "link")))
	assert.NilError(t, os.Symlink("../protected/sub", filepath.Join(ws.Dir(), "src", "deep")))
	p := newPolicy(t, task.Approval{Mode: task.ModeAuto, Default: "allow", Rules: []task.Rule{
		{Match: `"path":"protected/`, Action: "deny", Reason: "protected"},
		{Match: `"path":"keep\.txt"`, Action: "deny", Reason: "keep"},
		{Tool: "run_in_terminal", Match: `"command":"git push`, Action: "deny", Reason: "no push"},
	}}, Options{})
	p.mode = task.ModeRules // every call goes to the rules

	for _, tc := range []struct{ name, args string }{
		{"write_file", `{"path":"protected/a.txt","content":"x"}`},
		{"write_file", `{"path":"./protected/a.txt","content":"x"}`},
		{"write_file", `{"path":"a/../protected/x","content":"x"}`},
		{"write_file", `{"path":"protected//a.txt","content":"x"}`},
		{"write_file", `{"path":"` + filepath.Join(ws.Dir(), "protected", "a.txt") + `","content":"x"}`},
		{"write_file", `{"path":"link/a.txt","content":"x"}`},
		{"write_file", `{"path":"src/deep/a.txt","content":"x"}`},
		{"write_file", `{"file_path":"./protected/a.txt","content":"x"}`},
		{"delete_file", `{"path":"./keep.txt"}`},
		{"delete_file", `{"path":"src/../keep.txt"}`},
		{"run_in_terminal", `{"command":" git push origin main"}`},
		{"run_in_terminal", `{"command":"\n\tgit push"}`},
	} {
		d := p.Decide(context.Background(), prepare(t, reg, tc.name, tc.args), ws)
		assert.Check(t, !d.Allowed, "%s %s slipped past the rules: %+v", tc.name, tc.args, d)
		assert.Check(t, is.Equal(d.Source, SourceRule), "%s %s", tc.name, tc.args)
	}
	for _, tc := range []struct{ name, args string }{
		{"write_file", `{"path":"src/a.txt","content":"x"}`},
		{"write_file", `{"path":"protectedx/a.txt","content":"x"}`},
		{"run_in_terminal", `{"command":"git status"}`},
	} {
		d := p.Decide(context.Background(), prepare(t, reg, tc.name, tc.args), ws)
		assert.Check(t, d.Allowed, "%s %s: %+v", tc.name, tc.args, d)
	}

}

func TestRuleArgs(t *testing.T) {
	ws := testWorkspace(t)
	assert.NilError(t, os.Symlink("/etc", filepath.Join(ws.Dir(), "abs")))
	assert.NilError(t, os.Symlink("../..", filepath.Join(ws.Dir(), "up")))
	assert.NilError(t, os.Symlink("loop", filepath.Join(ws.Dir(), "loop")))
	assert.NilError(t, os.Symlink(".", filepath.Join(ws.Dir(), "here")))
	for in, want := range map[string]string{
		"./a.txt":       "a.txt",
		".":             ".",
		"./":            ".",
		"here/a.txt":    "a.txt",
		"abs/passwd":    "abs/passwd", // an absolute link: the tool refuses it, nothing to follow
		"up/x":          "up/x",       // leaves the workspace: the same
		"loop/x":        "loop/x",
		"../outside":    "../outside",
		"/etc/passwd":   "/etc/passwd",
		"missing/./a/b": "missing/a/b",
	} {
		got := RuleArgs(map[string]any{"path": in, "n": 1.0}, ws)
		assert.Check(t, is.Equal(got, `{"n":1,"path":"`+want+`"}`), in)
	}
	assert.Equal(t, RuleArgs(map[string]any{"path": "./a//b", "command": " ls "}, nil), `{"command":"ls","path":"a/b"}`)
}
