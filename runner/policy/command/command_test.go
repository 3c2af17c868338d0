package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/agentrunner/runner/runner/task"
)

func mustRules(t *testing.T, rules ...task.CommandRule) []Rule {
	t.Helper()
	out, err := CompileRules(rules)
	assert.NilError(t, err)
	return out
}

func TestTaskRules(t *testing.T) {
	rules := mustRules(t,
		task.CommandRule{Match: `^git push`, Action: "deny", Reason: "pushing is not part of this task", Pos: task.Position{File: "t.yaml", Line: 9, Column: 5}},
		task.CommandRule{Match: `^sudo apt-get install`, Action: "allow"},
		task.CommandRule{Match: `^git`, Action: "allow"},
		task.CommandRule{Match: `^rm -rf /tmp/cache$`, Action: "allow"},
		task.CommandRule{Match: `^npm publish`, Action: "deny"},
	)
	cases := []struct {
		line    string
		allowed bool
		source  string
		name    string
	}{
		{"git push origin main", false, SourceTaskRule, "command_rules[0]"},
		{"git status && git push", false, SourceTaskRule, "command_rules[0]"},
		{"bash -c 'git push --force'", false, SourceTaskRule, "command_rules[0]"},
		{"env GIT_TRACE=1 git push", false, SourceTaskRule, "command_rules[0]"},
		// An allow rule overrides the built-ins for the command it matches...
		{"sudo apt-get install -y jq", true, SourceTaskRule, "command_rules[1]"},
		{"rm -rf /tmp/cache", true, SourceTaskRule, "command_rules[3]"},
		// ...but not for the other commands of the line.
		{"sudo apt-get install -y jq && sudo reboot", false, SourceBuiltin, "privilege-escalation"},
		{"git status; rm -rf ~", false, SourceBuiltin, "rm-home"},
		// First match wins: git log is allowed by rule 2 before anything else.
		{"git log", true, SourceTaskRule, "command_rules[2]"},
		{"npm publish --access public", false, SourceTaskRule, "command_rules[4]"},
		// Nothing matched: allowed with no source.
		{"go test ./...", true, "", ""},
	}
	for _, tc := range cases {
		v := Check(tc.line, Options{Rules: rules, Workspace: "/w", Home: "/home/u"})
		assert.Check(t, is.Equal(v.Allowed, tc.allowed), tc.line)
		assert.Check(t, is.Equal(v.Source, tc.source), tc.line)
		assert.Check(t, is.Equal(v.Name, tc.name), tc.line)
	}
	v := Check("git push", Options{Rules: rules})
	assert.Equal(t, v.Reason, "`git push`: pushing is not part of this task")
	assert.Equal(t, v.Rule, "command_rules[0] {match: '^git push', action: deny} (t.yaml:9:5)")
	assert.Equal(t, v.Command, "git push")
	assert.Assert(t, v.Suggestion != "")
}

func TestTaskRulesSeeWordsJoined(t *testing.T) {
	// Quotes and extra blanks disappear: the rule sees the words joined by one space.
	rules := mustRules(t, task.CommandRule{Match: `^echo a b c$`, Action: "deny"})
	for _, line := range []string{`echo   a  "b"   'c'`, `echo "a" b\ c`, "echo a b c"} {
		v := Check(line, Options{Rules: rules})
		assert.Check(t, !v.Allowed, line)
	}
	assert.Check(t, Check(`echo "a b c d"`, Options{Rules: rules}).Allowed)
}

func TestCompileRulesErrors(t *testing.T) {
	_, err := CompileRules([]task.CommandRule{
		{Match: `(`, Action: "deny"},
		{Match: `x`, Action: "maybe"},
	})
	assert.ErrorContains(t, err, "command_rules[0]: match")
	assert.ErrorContains(t, err, `command_rules[1]: action "maybe"`)
}

func TestNoBuiltins(t *testing.T) {
	assert.Check(t, Check("rm -rf /", Options{NoBuiltins: true}).Allowed)
	// A line that does not parse is denied even then.
	v := Check("echo 'x", Options{NoBuiltins: true})
	assert.Check(t, !v.Allowed)
	assert.Check(t, is.Equal(v.Name, ParseErrorRule))
	assert.Check(t, is.Contains(v.Reason, "closing quote"))
}

func TestCwdOption(t *testing.T) {
	opts := Options{Workspace: "/w", Home: "/home/u"}
	assert.Check(t, Check("rm -rf ../x", opts).Name == "rm-outside-workspace")
	opts.Cwd = "sub"
	assert.Check(t, Check("rm -rf ../x", opts).Allowed, "../x from /w/sub is /w/x")
	opts.Cwd = "/w/sub/deeper"
	assert.Check(t, Check("rm -rf ../../x", opts).Allowed)
	assert.Check(t, !Check("rm -rf ../../../x", opts).Allowed)
}

func TestWorkspaceUnderSystemDir(t *testing.T) {
	// Containers often work in /usr/src/app: the workspace's own files stay writable.
	opts := Options{Workspace: "/usr/src/app", Home: "/root"}
	assert.Check(t, Check("echo x > out.txt && cp a /usr/src/app/b", opts).Allowed)
	assert.Check(t, !Check("cp a /usr/local/bin/", opts).Allowed)
}

func TestEmptyWorkspacePlaceholder(t *testing.T) {
	assert.Check(t, Check("rm -rf build", Options{Home: "/home/u"}).Allowed)
	assert.Check(t, !Check("rm -rf /srv/data", Options{Home: "/home/u"}).Allowed)
}

func TestNestingLimit(t *testing.T) {
	// Each eval re-parses the rest of the line once more.
	v := Check(strings.Repeat("eval ", 12)+"true", testOpts)
	assert.Check(t, !v.Allowed)
	assert.Check(t, is.Contains(v.Reason, "nested"))
	assert.Check(t, Check(strings.Repeat("eval ", 6)+"true", testOpts).Allowed)
	assert.Check(t, Check(`bash -c "sh -c 'bash -c true'"`, testOpts).Allowed)
}

func TestHugeLineDenied(t *testing.T) {
	v := Check("echo "+strings.Repeat("x", MaxLineBytes), testOpts)
	assert.Check(t, !v.Allowed)
	assert.Check(t, is.Contains(v.Reason, "too long"))
}

func TestLongCommandShortened(t *testing.T) {
	v := Check("sudo echo "+strings.Repeat("x", 1000), testOpts)
	assert.Check(t, !v.Allowed)
	assert.Check(t, len(v.Command) < 300)
}

func TestBuiltinsListed(t *testing.T) {
	names := map[string]bool{}
	for _, b := range Builtins() {
		assert.Check(t, b.Name != "" && b.Description != "" && b.Suggestion != "", b.Name)
		assert.Check(t, !names[b.Name], "duplicate %s", b.Name)
		names[b.Name] = true
	}
	// Every rule must be exercised by the dangerous corpus.
	used := map[string]bool{}
	for _, d := range dangerous {
		used[d.rule] = true
	}
	for n := range names {
		assert.Check(t, used[n], "no dangerous line is denied by %s", n)
	}
}

// TestRulesMarkdown keeps RULES.md equal to the rule list; go test -run RulesMarkdown
// -update (gotest.tools' golden flag) rewrites it.
func TestRulesMarkdown(t *testing.T) {
	abs, err := filepath.Abs("RULES.md")
	assert.NilError(t, err)
	golden.Assert(t, rulesHeader+MarkdownTable(), abs)
	got, err := os.ReadFile(abs)
	assert.NilError(t, err)
	for _, b := range Builtins() {
		assert.Check(t, is.Contains(string(got), "| `"+b.Name+"` |"))
	}
}

const rulesHeader = `# Built-in command rules

Before ` + "`run_in_terminal`" + ` or ` + "`run_code`" + ` (language bash) runs, the command line is parsed
with a real shell parser and every simple command in it is checked: in pipelines, lists
(` + "`;` `&&` `||`" + `), subshells, if/for/while/case and function bodies, ` + "`$(...)`" + `, backquotes,
` + "`<(...)`" + `, strings run again by a shell (` + "`bash -c`, `sh -c`, `su -c`, `eval`, `env -S`, `watch`" + `, a
here-document or an ` + "`echo`/`printf`" + ` piped into a shell, the expansion of an ` + "`alias`" + ` defined earlier in the
line or script) and the payload of wrappers (` + "`nohup`, `env`, `timeout`, `nice`, `xargs`, `parallel`,\n`find -exec`" + `, ...). ` + "`xargs`" + ` and ` + "`parallel`" + ` are checked as their command with one more argument, the
input, whose location is inside the workspace only when the previous stage of the pipeline
lists paths there (` + "`find .`, `ls src`, `git ls-files`" + `), outside it when that stage lists
paths outside (` + "`find /`" + `), and unknown otherwise.

A task's ` + "`command_rules`" + ` are checked first, against each simple command's words joined by
single spaces; the first match decides that command, so an ` + "`allow`" + ` rule can deliberately
override a built-in rule for it. Then this list applies, in this order. Paths are resolved
lexically against the working directory (following ` + "`cd`" + `) and variables are followed when
the line sets them to literal values, split on ` + "`IFS`" + ` as the shell would (a name reference,
` + "`declare -n`" + `, is unknown). The check is one
layer; the sandbox is the next.

This file is generated: ` + "`go test ./runner/policy/command -run RulesMarkdown -update`" + `.

`
