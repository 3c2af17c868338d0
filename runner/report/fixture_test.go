package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/result"
)

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// fixedRun is a run with one scenario of each shape the reports must handle.
func fixedRun() result.Run {
	run := result.Run{
		Started:  t0,
		Duration: result.Millis(83*time.Second + 400*time.Millisecond),
		Scenarios: []result.Scenario{
			{
				Name: "rename-function", File: "scenarios/rename.yaml", Tags: []string{"refactor", "go"}, Model: "oracle",
				Status: result.Passed, Stop: result.StopCompleted, Summary: "Renamed OldName to NewName in 2 files",
				Steps: 3, ToolCalls: 3, Usage: result.Usage{PromptTokens: 1200, CompletionTokens: 340, TokensPerSecond: 41.5},
				Started: t0, Duration: result.Millis(1234 * time.Millisecond), ModelTime: result.Millis(900 * time.Millisecond), ToolTime: result.Millis(210 * time.Millisecond),
				Assertions: []result.Assertion{
					{Kind: "completed", Line: 20, Column: 5, Passed: true, Message: "task_complete was called"},
					{Kind: "file_matches", Line: 21, Column: 5, Passed: true, Message: `main.go matches /func NewName\(/: "func NewName("`},
				},
				Transcript: "runner-out/rename-function/transcript.jsonl", Sandbox: "landlock",
			},
			{
				Name: "edit-config", File: "scenarios/config.yaml", Model: "oracle",
				Status: result.Failed, Stop: result.StopCompleted, Reason: "2 of 3 assertions failed",
				Summary: "Set the port", Steps: 5, ToolCalls: 6, Denied: 1,
				Usage:   result.Usage{PromptTokens: 2000, CompletionTokens: 500},
				Started: t0.Add(2 * time.Second), Duration: result.Millis(12*time.Second + 345*time.Millisecond),
				Assertions: []result.Assertion{
					{Kind: "completed", Line: 14, Column: 5, Passed: true, Message: "task_complete was called"},
					{Kind: "file_equals", Line: 15, Column: 5, Message: "config.json differs from the expected content (want 37 bytes, got 37); first difference at line 2:\n    \"{\"\n  - \"  \\\"port\\\": 9090,\"\n  + \"  \\\"port\\\": 8080,\""},
					{Kind: "denied_at_most", Line: 16, Column: 5, Message: "1 call denied (at most 0 allowed)"},
				},
				Transcript: "runner-out/edit-config/transcript.jsonl",
			},
			{
				Name: "never-finishes", File: "scenarios/loop.yaml", Model: "ollama:qwen3:4b",
				Status: result.Failed, Stop: result.StopMaxSteps, Reason: "stopped at max_steps (20) without calling task_complete", Line: 9,
				Steps: 20, ToolCalls: 20, Usage: result.Usage{PromptTokens: 30000, CompletionTokens: 2100},
				Started: t0.Add(3 * time.Second), Duration: result.Millis(65*time.Second + 500*time.Millisecond),
				Transcript: "runner-out/never-finishes/transcript.jsonl",
			},
			{
				Name: "fetch-docs", File: "scenarios/docs.yaml", Model: "ollama:qwen3:4b",
				Status: result.Errored, Stop: result.StopError,
				Reason:  "model ollama:qwen3:4b: 127.0.0.1:11434 unreachable after 5 attempts: connection refused",
				Started: t0.Add(4 * time.Second), Duration: result.Millis(7 * time.Second),
			},
			{
				Name: "rename-function", File: "scenarios/rename.yaml", Model: "oracle", Repeat: 1, Repeats: 2,
				Status: result.Passed, Stop: result.StopCompleted, Summary: "Renamed",
				Steps: 3, ToolCalls: 3, Started: t0.Add(5 * time.Second), Duration: result.Millis(980 * time.Millisecond),
				Assertions: []result.Assertion{{Kind: "completed", Line: 20, Column: 5, Passed: true, Message: "task_complete was called"}},
			},
		},
	}
	for i := range run.Scenarios {
		run.Scenarios[i].Index, run.Scenarios[i].RunnerVersion = i, "v0.1.0"
	}
	return run
}

// xsdPath is the shared JUnit schema, <repo>/../shared/junit/junit-10.xsd (tests run in
// <repo>/runner/report), or the repo's copy of it where there is no shared/ beside the
// checkout (GitHub Actions).
var xsdPath = func() string {
	shared := filepath.Join("..", "..", "..", "shared", "junit", "junit-10.xsd")
	if _, err := os.Stat(shared); err == nil {
		return shared
	}
	return filepath.Join("..", "..", "tests", "testdata", "junit-10.xsd")
}()

// xmllint validates doc against the JUnit schema. It skips only outside CI when
// xmllint is missing; in CI (CI set) a missing xmllint is a failure.
func xmllint(t *testing.T, doc []byte) {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("xmllint not installed (Debian: apt-get install libxml2-utils); CI runs this check")
		}
		t.Fatalf("CI must validate JUnit reports, but xmllint is missing: %v", err)
	}
	_, err = os.Stat(xsdPath)
	assert.NilError(t, err, "the JUnit schema must sit at ../shared/junit beside the repo, or in tests/testdata")
	f := filepath.Join(t.TempDir(), "junit.xml")
	assert.NilError(t, os.WriteFile(f, doc, 0o644))
	out, err := exec.Command(bin, "--noout", "--schema", xsdPath, f).CombinedOutput()
	assert.NilError(t, err, "xmllint rejected the report:\n%s\n--- report:\n%s", out, doc)
}
