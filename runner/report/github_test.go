package report

import (
	"bytes"
	"fmt"
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
		Started: t0.Add(6 * time.Second), Duration: result.Millis(2 * time.Second), Sandbox: "bwrap",
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
	ws := t.TempDir()
	t.Chdir(ws)
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary, "GITHUB_WORKSPACE": ws, "GITHUB_SHA": "abc123",
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
	assert.Check(t, is.Contains(string(b), "[scenarios/loop.yaml:9](https://github.com/o/r/blob/abc123/scenarios/loop.yaml#L9)"))

	// Absolute task paths under GITHUB_WORKSPACE are annotated by their repository path.
	env["GITHUB_WORKSPACE"] = "/home/runner/work/repo"
	run := fixedRun()
	run.Scenarios[1].File = "/home/runner/work/repo/scenarios/config.yaml"
	cmds.Reset()
	r, _ = GitHubFromEnv(func(k string) string { return env[k] }, &cmds, "")
	assert.NilError(t, r.Finish(run))
	assert.Check(t, is.Contains(cmds.String(), "::error file=scenarios/config.yaml,line=15,"))

	// Run from a subdirectory, with the task named relative to it: annotated by its
	// repository path all the same, from GITHUB_WORKSPACE or else from the git root.
	sub := filepath.Join(ws, "scenarios")
	assert.NilError(t, os.MkdirAll(sub, 0o755))
	t.Chdir(sub)
	run = fixedRun()
	run.Scenarios[1].File = "config.yaml"
	for _, workspace := range []string{ws, ""} {
		env["GITHUB_WORKSPACE"] = workspace
		if workspace == "" {
			assert.NilError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
		}
		cmds.Reset()
		r, _ = GitHubFromEnv(func(k string) string { return env[k] }, &cmds, "")
		assert.NilError(t, r.Finish(run))
		assert.Check(t, is.Contains(cmds.String(), "::error file=scenarios/config.yaml,line=15,"), "workspace %q", workspace)
	}

	_, ok = GitHubFromEnv(func(string) string { return "" }, &cmds, "")
	assert.Assert(t, !ok, "off outside GitHub Actions")
}

// TestOneAnnotationPerScenario: GitHub shows ten annotations per step, so each failed
// scenario gets one, at its first failure's line, with the other failures in its text.
func TestOneAnnotationPerScenario(t *testing.T) {
	run := result.Run{}
	for i := range 12 {
		run.Scenarios = append(run.Scenarios, result.Scenario{Name: fmt.Sprintf("s%d", i), File: "t.yaml", Status: result.Failed, Assertions: []result.Assertion{
			{Kind: "command", Line: 10, Message: "exit 1"}, {Kind: "file_exists", Line: 12, Message: "no out.txt"}, {Kind: "completed", Line: 14, Passed: true},
		}})
	}
	var b bytes.Buffer
	assert.NilError(t, WriteAnnotations(&b, run))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	assert.Equal(t, len(lines), 12)
	assert.Check(t, is.Contains(lines[0], "line=10,title=s0::command: exit 1%0A%0AAlso failed:%0A- file_exists: no out.txt (line 12)"))
}

// TestSummaryFoldsLongReasons: a Go panic in a reason is shortened in its cell, the
// whole text one click away, escaped.
func TestSummaryFoldsLongReasons(t *testing.T) {
	panicText := "command: `go test` failed:\npanic: boom <script>x</script>\n" + strings.Repeat("\tmain.go:12 +0x1d\n", 50)
	run := result.Run{Scenarios: []result.Scenario{
		{Name: "ok", Status: result.Passed},
		{Name: "bad", Status: result.Failed, Reason: panicText},
	}}
	var b bytes.Buffer
	assert.NilError(t, WriteSummary(&b, run, "", ""))
	out := b.String()
	assert.Check(t, strings.Index(out, "| bad |") < strings.Index(out, "| ok |"), "failures first:\n%s", out)
	assert.Check(t, is.Contains(out, "<details><summary>command: \\`go test\\` failed: panic: boom \\<script\\>x\\</script\\>"))
	assert.Check(t, !strings.Contains(out, "<script>"))
	row := out[strings.Index(out, "| bad |"):]
	row = row[:strings.Index(row, "\n")]
	assert.Check(t, is.Contains(row, "main.go:12 +0x1d<br>"), "the full text is in the row")
}
