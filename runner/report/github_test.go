package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/agentrunner/runner/runner/result"
)

// githubRun is the fixed run plus a scenario whose every field needs escaping.
func githubRun() result.Run {
	run := fixedRun()
	run.Scenarios = append(run.Scenarios, result.Scenario{
		Name: "tricky: a,b 100%", File: "scenarios/odd,name: x.yaml", Model: "openai:gpt|4",
		Status: result.Failed, Stop: result.StopCompleted, Reason: "file_contains: 50% done\r\nnext | <b>bold</b>", Line: 7,
		Started: t0.Add(6 * time.Second), Duration: 2 * time.Second, Sandbox: "bwrap",
		Assertions: []result.Assertion{
			{Kind: "file_contains", Line: 7, Column: 5, Message: "50% done\r\nnext | <b>bold</b>"},
			{Kind: "command", Line: 9, Column: 5, Passed: true, Message: "exit 0"},
		},
	})
	return run
}

func TestGitHubAnnotationsGolden(t *testing.T) {
	var out bytes.Buffer
	assert.NilError(t, WriteAnnotations(&out, githubRun()))
	golden.Assert(t, out.String(), "github-annotations.golden")
	// Every command is one line: the escaping kept CR and LF out of it.
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		assert.Assert(t, strings.HasPrefix(line, "::error file="), "%q", line)
	}
}

func TestGitHubSummaryGolden(t *testing.T) {
	var out bytes.Buffer
	assert.NilError(t, WriteSummary(&out, githubRun(), "https://github.com/o/r/actions/runs/42#artifacts", "runner-out"))
	golden.Assert(t, out.String(), "github-summary.golden")
}

func TestGitHubEscaping(t *testing.T) {
	assert.Equal(t, escapeData("a%b\r\nc:d,e"), "a%25b%0D%0Ac:d,e")
	assert.Equal(t, escapeProperty("a%b\r\nc:d,e"), "a%25b%0D%0Ac%3Ad%2Ce")
	assert.Equal(t, cell("a|b\n<i>&`", 0), "a\\|b \\<i\\>\\&\\`")
}

func TestGitHubFromEnv(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "summary.md")
	assert.NilError(t, os.WriteFile(summary, []byte("earlier step output\n"), 0o644))
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary,
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "42",
	}
	var cmds bytes.Buffer
	r, ok := GitHubFromEnv(func(k string) string { return env[k] }, &cmds, "runner-out")
	assert.Assert(t, ok)
	r.Start(1)
	assert.NilError(t, r.Finish(fixedRun()))
	assert.Check(t, is.Contains(cmds.String(), "::error file=scenarios/config.yaml,line=15,title=edit-config::file_equals: config.json differs"))
	assert.Check(t, is.Contains(cmds.String(), "::error file=scenarios/loop.yaml,line=9,title=never-finishes::stopped at max_steps"))
	b, err := os.ReadFile(summary)
	assert.NilError(t, err)
	assert.Check(t, strings.HasPrefix(string(b), "earlier step output\n## runner: 2 passed, 2 failed, 1 errored"), "the summary is appended")
	assert.Check(t, is.Contains(string(b), "(https://github.com/o/r/actions/runs/42#artifacts)"))

	// Absolute task paths under GITHUB_WORKSPACE are annotated by their repository path.
	env["GITHUB_WORKSPACE"] = "/home/runner/work/repo"
	run := fixedRun()
	run.Scenarios[1].File = "/home/runner/work/repo/scenarios/config.yaml"
	cmds.Reset()
	r, _ = GitHubFromEnv(func(k string) string { return env[k] }, &cmds, "")
	assert.NilError(t, r.Finish(run))
	assert.Check(t, is.Contains(cmds.String(), "::error file=scenarios/config.yaml,line=15,"))

	_, ok = GitHubFromEnv(func(string) string { return "" }, &cmds, "")
	assert.Assert(t, !ok, "off outside GitHub Actions")
}
