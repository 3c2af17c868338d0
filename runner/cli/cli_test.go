package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/bench"
	"github.com/agentrunner/runner/runner/result"
)

// invoke runs the command line with captured streams.
func invoke(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), append([]string{"runner"}, args...), IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

// writeTask writes a task file into dir and returns its path.
func writeTask(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	assert.NilError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

const passingTask = `name: hello
prompt: Write hello to out.txt.
tools: [write_file]
sandbox: none
assert:
  - completed: true
  - file_contains: {path: out.txt, text: hello}
reference:
  - write_file: {path: out.txt, content: "hello\n"}
  - task_complete: {summary: Wrote hello.}
`

const failingTask = `name: wrong
prompt: Write hello to out.txt.
tools: [write_file]
sandbox: none
assert:
  - file_contains: {path: out.txt, text: hello}
reference:
  - write_file: {path: out.txt, content: "goodbye\n"}
  - task_complete: {summary: Wrote goodbye.}
`

const erroringTask = `name: broken-setup
prompt: p
sandbox: none
workspace:
  setup: ["exit 3"]
assert:
  - completed: true
reference:
  - task_complete: {summary: done}
`

func TestToolsJSON(t *testing.T) {
	code, stdout, stderr := invoke(t, "tools", "--format", "json")
	assert.Equal(t, code, ExitOK, stderr)
	var listed []struct {
		Name        string         `json:"name"`
		Risk        string         `json:"risk"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	assert.NilError(t, json.Unmarshal([]byte(stdout), &listed))
	assert.Equal(t, len(listed), 16)
	assert.Equal(t, listed[0].Name, "read_file")
	assert.Equal(t, listed[15].Name, "task_complete")
	for _, tool := range listed {
		assert.Assert(t, tool.Description != "" && tool.Risk != "", tool.Name)
		assert.Equal(t, tool.Parameters["type"], "object", tool.Name)
	}

	// Names after the flag, and an alias, select tools.
	code, stdout, _ = invoke(t, "tools", "read_file", "search_code", "--format", "json")
	assert.Equal(t, code, ExitOK)
	assert.NilError(t, json.Unmarshal([]byte(stdout), &listed))
	assert.Equal(t, len(listed), 2)
	assert.Equal(t, listed[1].Name, "grep_search")
}

func TestToolsFormats(t *testing.T) {
	for _, format := range []string{"openai", "anthropic", "gemini", "ollama"} {
		code, stdout, stderr := invoke(t, "tools", "-f", format)
		assert.Equal(t, code, ExitOK, stderr)
		assert.Assert(t, json.Valid([]byte(stdout)), format)
		assert.Assert(t, is.Contains(stdout, "replace_string_in_file"), format)
	}
	code, stdout, _ := invoke(t, "tools")
	assert.Equal(t, code, ExitOK)
	assert.Assert(t, is.Contains(stdout, "list_dir"))
	assert.Assert(t, is.Contains(stdout, "list_directory list_files"), "text lists aliases")

	code, _, stderr := invoke(t, "tools", "--format", "yaml")
	assert.Equal(t, code, ExitUsage)
	assert.Assert(t, is.Contains(stderr, `unknown format "yaml"`))
	code, _, stderr = invoke(t, "tools", "no_such_tool")
	assert.Equal(t, code, ExitUsage)
	assert.Assert(t, is.Contains(stderr, `unknown tool "no_such_tool"`))
}

func TestToolExitCodes(t *testing.T) {
	ws := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644))

	code, stdout, stderr := invoke(t, "tool", "read_file", "--workspace", ws, "--args", `{"path":"a.txt"}`)
	assert.Equal(t, code, ExitOK, stderr)
	var res struct {
		Success bool   `json:"success"`
		Output  string `json:"output"`
		Error   *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	assert.NilError(t, json.Unmarshal([]byte(stdout), &res))
	assert.Assert(t, res.Success)
	assert.Assert(t, is.Contains(res.Output, "alpha"))

	code, stdout, _ = invoke(t, "tool", "read_file", "-w", ws, "-a", `{"path":"missing.txt"}`)
	assert.Equal(t, code, ExitFailed)
	assert.NilError(t, json.Unmarshal([]byte(stdout), &res), "a tool error still prints the result")
	assert.Assert(t, !res.Success)
	assert.Equal(t, res.Error.Code, "FILE_NOT_FOUND")

	code, stdout, _ = invoke(t, "tool", "write_file", "-w", ws, "-a", `{"path":"../escape.txt","content":"x"}`)
	assert.Equal(t, code, ExitFailed)
	assert.NilError(t, json.Unmarshal([]byte(stdout), &res))
	assert.Equal(t, res.Error.Code, "INVALID_PATH")

	usage := []struct {
		args []string
		msg  string
	}{
		{[]string{"tool"}, "want a tool name and at most one JSON object of arguments, got 0"},
		{[]string{"tool", "read_file", "list_dir", "-w", ws}, "the arguments are not valid JSON: list_dir"},
		{[]string{"tool", "read_file", "{}", "{}", "-w", ws}, "got 3 arguments"},
		{[]string{"tool", "read_file", "{}", "-a", "{}", "-w", ws}, "arguments given twice"},
		{[]string{"tool", "read_file", "-w", ws, "--approval", "rules"}, `--approval "rules": want agent, read-only or auto`},
		{[]string{"tool", "no_such_tool", "-w", ws}, `unknown tool "no_such_tool"`},
		{[]string{"tool", "read_file", "-w", ws, "--args", `{"path":`}, "the arguments are not valid JSON"},
		{[]string{"tool", "read_file", "-w", filepath.Join(ws, "a.txt")}, "is not a directory"},
		{[]string{"tool", "read_file", "-w", ws, "--sandbox", "jail"}, `unknown sandbox mode "jail"`},
		{[]string{"tool", "read_file", "--bogus"}, "unknown flag --bogus"},
	}
	for _, u := range usage {
		code, stdout, stderr := invoke(t, u.args...)
		assert.Equal(t, code, ExitUsage, "%v", u.args)
		assert.Assert(t, is.Contains(stderr, u.msg), "%v", u.args)
		if !strings.Contains(u.msg, "flag provided") {
			assert.Equal(t, stdout, "", "%v: nothing ran", u.args)
		}
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	bad := writeTask(t, dir, "bad.yaml", "name: bad\nprompt: hi\nbogus_key: 1\nmax_steps: many\n")
	code, stdout, stderr := invoke(t, "validate", bad)
	assert.Equal(t, code, ExitUsage)
	assert.Equal(t, stdout, "")
	assert.Assert(t, is.Contains(stderr, bad+":3:1: bogus_key: unknown field"))
	assert.Assert(t, is.Contains(stderr, bad+":4:12: max_steps:"), "every problem is listed: %s", stderr)

	good := writeTask(t, dir, "good.yaml", passingTask)
	code, stdout, stderr = invoke(t, "validate", good)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Equal(t, stdout, "1 task file valid\n")
	matrix := writeTask(t, dir, "matrix.yaml", matrixTask)
	code, stdout, stderr = invoke(t, "validate", good, matrix)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Equal(t, stdout, "2 task files (3 cases) valid\n", "files and cases counted apart")

	code, _, stderr = invoke(t, "validate")
	assert.Equal(t, code, ExitUsage)
	assert.Assert(t, is.Contains(stderr, "no task files given"))
}

func TestValidateOracle(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the oracle run's build cache
	dir := t.TempDir()
	good := writeTask(t, dir, "good.yaml", passingTask)
	code, stdout, stderr := invoke(t, "validate", good, "--oracle")
	assert.Equal(t, code, ExitOK, stderr)
	assert.Assert(t, is.Contains(stdout, "every reference solution passes"))

	wrong := writeTask(t, dir, "wrong.yaml", failingTask)
	code, _, stderr = invoke(t, "validate", "--oracle", good, wrong)
	assert.Equal(t, code, ExitUsage)
	assert.Assert(t, is.Contains(stderr, "1 of 2 tasks do not pass"))
	assert.Assert(t, is.Contains(stderr, "\n"+wrong+":6:5: reference solution failed: file_contains:"), stderr)

	// A matrix's cases share the file's lines: the failing case is named.
	matrix := writeTask(t, dir, "matrix.yaml", matrixTask)
	code, _, stderr = invoke(t, "validate", "--oracle", matrix)
	assert.Equal(t, code, ExitUsage)
	assert.Assert(t, is.Contains(stderr, matrix+":9:5: greet[word=bye]: reference solution failed: file_contains:"), stderr)
	assert.Assert(t, !strings.Contains(stderr, "word=hello"), "the passing case is not a problem: %s", stderr)
}

// matrixTask expands into two cases; the reference of word=bye writes the wrong word.
const matrixTask = `name: greet
matrix:
  word: [hello, bye]
prompt: Write {{.word}} to out.txt.
tools: [write_file]
sandbox: none
assert:
  - completed: true
  - file_contains: {path: out.txt, text: "{{.word}}"}
reference:
  - write_file: {path: out.txt, content: "hello\n"}
  - task_complete: {summary: done}
`

func runArgs(out string, rest ...string) []string {
	return append([]string{"run", "--sandbox", "none", "--cache-dir", "", "--out", out}, rest...)
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	pass := writeTask(t, dir, "hello.yaml", passingTask)
	fail := writeTask(t, dir, "wrong.yaml", failingTask)
	broken := writeTask(t, dir, "broken.yaml", erroringTask)

	t.Run("passing", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		report := filepath.Join(t.TempDir(), "report.json")
		// Flags after the path, as people type them.
		code, stdout, stderr := invoke(t, "run", pass, "--out", out, "--sandbox", "none", "--cache-dir", "", "--json", report)
		assert.Equal(t, code, ExitOK, "%s%s", stdout, stderr)
		assert.Assert(t, is.Contains(stdout, "1 passed"))

		b, err := os.ReadFile(filepath.Join(out, "hello", "result.json"))
		assert.NilError(t, err)
		var s result.Scenario
		assert.NilError(t, json.Unmarshal(b, &s))
		assert.Equal(t, s.Status, result.Passed)
		assert.Equal(t, s.Model, "oracle")
		_, err = os.Stat(filepath.Join(out, "hello", "transcript.jsonl"))
		assert.NilError(t, err)
		b, err = os.ReadFile(report)
		assert.NilError(t, err)
		assert.Assert(t, json.Valid(b))
		assert.Assert(t, is.Contains(string(b), `"hello"`))
	})
	t.Run("failing", func(t *testing.T) {
		code, stdout, stderr := invoke(t, runArgs(t.TempDir(), pass, fail)...)
		assert.Equal(t, code, ExitFailed, "%s%s", stdout, stderr)
		assert.Assert(t, is.Contains(stdout, "wrong"))
		assert.Assert(t, is.Contains(stdout, "1 failed"))
	})
	t.Run("errored", func(t *testing.T) {
		code, stdout, stderr := invoke(t, runArgs(t.TempDir(), pass, broken)...)
		assert.Equal(t, code, ExitErrored, "%s%s", stdout, stderr)
	})
	t.Run("failed wins over errored", func(t *testing.T) {
		code, _, _ := invoke(t, runArgs(t.TempDir(), broken, fail)...)
		assert.Equal(t, code, ExitFailed)
	})
	t.Run("approval override", func(t *testing.T) {
		code, stdout, _ := invoke(t, runArgs(t.TempDir(), pass, "--approval", "read-only")...)
		assert.Equal(t, code, ExitFailed, stdout)
	})
	t.Run("filter", func(t *testing.T) {
		code, stdout, _ := invoke(t, runArgs(t.TempDir(), pass, fail, "--filter", "^hel")...)
		assert.Equal(t, code, ExitOK, stdout)
		assert.Assert(t, !strings.Contains(stdout, "wrong"))
	})
	t.Run("max-steps override", func(t *testing.T) {
		code, stdout, _ := invoke(t, runArgs(t.TempDir(), pass, "--max-steps", "1")...)
		assert.Equal(t, code, ExitFailed, stdout)
		assert.Assert(t, is.Contains(stdout, "task_complete was not called (the agent stopped after 1 step)"))
	})

	usage := []struct {
		args []string
		msg  string
	}{
		{[]string{"run"}, "no task files given"},
		{runArgs(t.TempDir(), pass, "--parallel", "0"), "--parallel and --repeat must be at least 1"},
		{runArgs(t.TempDir(), pass, "--approval", "sometimes"), `--approval: unknown approval mode "sometimes"`},
		{[]string{"run", pass, "--sandbox", "jail"}, `--sandbox: unknown sandbox mode "jail"`},
		{runArgs(t.TempDir(), pass, "--filter", "nomatch"), "matches no scenario"},
		{runArgs(t.TempDir(), pass, "--filter", "("), "--filter"},
		{runArgs(t.TempDir(), filepath.Join(dir, "missing.yaml")), "missing.yaml"},
	}
	for _, u := range usage {
		code, _, stderr := invoke(t, u.args...)
		assert.Equal(t, code, ExitUsage, "%v: %s", u.args, stderr)
		assert.Assert(t, is.Contains(stderr, u.msg), "%v", u.args)
	}
}

func TestSchema(t *testing.T) {
	code, stdout, stderr := invoke(t, "schema")
	assert.Equal(t, code, ExitOK, stderr)
	var schema map[string]any
	assert.NilError(t, json.Unmarshal([]byte(stdout), &schema))
	props, ok := schema["properties"].(map[string]any)
	assert.Assert(t, ok, "the schema has properties")
	for _, key := range []string{"prompt", "assert", "workspace", "approval", "reference"} {
		assert.Assert(t, props[key] != nil, key)
	}
}

func TestPolicyCheck(t *testing.T) {
	task := writeTask(t, t.TempDir(), "policy.yaml", `prompt: p
approval:
  mode: rules
  default: deny
  rules:
    - {tool: read_file, action: allow, reason: reading is fine}
`)
	code, stdout, stderr := invoke(t, "policy", "check", task, "--tool", "read_file", "--args", `{"path":"a.txt"}`)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Assert(t, strings.HasPrefix(stdout, "allowed by approval.rules[0]"), stdout)
	assert.Assert(t, is.Contains(stdout, "reason: reading is fine"))

	code, stdout, _ = invoke(t, "policy", "check", task, "-t", "delete_file", "-a", `{"path":"a.txt"}`, "--json")
	assert.Equal(t, code, ExitFailed)
	var d map[string]any
	assert.NilError(t, json.Unmarshal([]byte(stdout), &d))
	assert.Equal(t, d["allowed"], false)
	assert.Equal(t, d["source"], "default")

	code, _, stderr = invoke(t, "policy", "check", task)
	assert.Equal(t, code, ExitUsage)
	assert.Assert(t, is.Contains(stderr, "tool"), "--tool is required: %s", stderr)
}

// run and bench print a broken task file's problems as validate does: every one as a
// file:line:col: line an editor links (no "runner: " in front), then the count, exit 2.
func TestRunPrintsLoadProblemsAsValidateDoes(t *testing.T) {
	dir := t.TempDir()
	bad := writeTask(t, dir, "bad.yaml", "name: bad\nprompt: hi\nbogus_key: 1\nmax_steps: many\n")
	vcode, vout, vstderr := invoke(t, "validate", bad)
	assert.Equal(t, vcode, ExitUsage)
	assert.Equal(t, vout, "")
	assert.Assert(t, is.Contains(vstderr, "runner: 2 problems in 1 file\n"))
	for _, args := range [][]string{
		runArgs(t.TempDir(), bad),
		{"bench", "--model", "oracle", "--out", t.TempDir(), bad},
	} {
		code, stdout, stderr := invoke(t, args...)
		assert.Equal(t, code, ExitUsage, "%v: %s", args, stderr)
		assert.Equal(t, stdout, "", "%v: nothing ran", args)
		assert.Equal(t, stderr, vstderr, "%v", args)
		assert.Assert(t, strings.HasPrefix(stderr, bad+":"), "%v: %s", args, stderr)
	}
}

// TestReportOnStandardOutput: --json - and --junit - write the report to standard output
// (it once wrote a file named "-"), and the console goes to standard error.
func TestReportOnStandardOutput(t *testing.T) {
	dir := t.TempDir()
	pass := writeTask(t, dir, "hello.yaml", passingTask)
	t.Chdir(dir)
	code, stdout, stderr := invoke(t, runArgs(filepath.Join(dir, "out"), "--json", "-", pass)...)
	assert.Equal(t, code, ExitOK, stderr)
	var rep struct {
		Totals struct{ Passed int } `json:"totals"`
	}
	assert.NilError(t, json.Unmarshal([]byte(stdout), &rep), "standard output is the JSON report alone: %s", stdout)
	assert.Equal(t, rep.Totals.Passed, 1)
	assert.Check(t, is.Contains(stderr, "1 scenario: 1 passed"))
	_, err := os.Stat(filepath.Join(dir, "-"))
	assert.Assert(t, os.IsNotExist(err), "no file named -")

	code, stdout, stderr = invoke(t, runArgs(filepath.Join(dir, "out2"), "--junit", "-", pass)...)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Assert(t, strings.HasPrefix(stdout, "<?xml"), stdout)
	code, _, stderr = invoke(t, runArgs(filepath.Join(dir, "out3"), "--junit", "-", "--json", "-", pass)...)
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(stderr, "only one report can go to standard output"))
}

// TestInterruptedRunExitsItsOwnCode: a run stopped before it was done exits 130, not 3
// like a model that could not be reached, and says how much did not finish.
func TestInterruptedRunExitsItsOwnCode(t *testing.T) {
	dir := t.TempDir()
	pass := writeTask(t, dir, "hello.yaml", passingTask)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := Run(ctx, append([]string{"runner"}, runArgs(filepath.Join(dir, "out"), pass)...), IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut})
	assert.Equal(t, code, ExitInterrupted, "%s%s", out.String(), errOut.String())
	assert.Check(t, is.Contains(errOut.String(), "runner: run: interrupted: 1 of 1 scenarios did not finish"))
}

// TestRunRepeatShowsPassAtK: run --repeat 4 shows each scenario's pass@k and pass^k on
// the console and in --json, the numbers bench computes for the same runs (one
// implementation, runner/bench/stats); a single run shows none.
func TestRunRepeatShowsPassAtK(t *testing.T) {
	dir := t.TempDir()
	pass := writeTask(t, dir, "hello.yaml", passingTask)
	other := writeTask(t, dir, "other.yaml", strings.Replace(passingTask, "name: hello", "name: other", 1))
	report := filepath.Join(dir, "report.json")
	// The seeded oracle gives up some runs: a mix of passes and failures per scenario.
	code, stdout, stderr := invoke(t, runArgs(filepath.Join(dir, "out"), "--repeat", "4", "-m", "oracle:fail=0.5,seed=3", "--json", report, pass, other)...)
	assert.Assert(t, code == ExitOK || code == ExitFailed, "%s%s", stdout, stderr)
	b, err := os.ReadFile(report)
	assert.NilError(t, err)
	var rep struct {
		Scenarios []result.Scenario `json:"scenarios"`
		Repeated  []struct {
			Name                    string
			Repeats, Passed, Failed int
			PassAtK                 []*float64 `json:"pass_at_k"`
			PassHatK                []*float64 `json:"pass_hat_k"`
		} `json:"repeated"`
		Totals struct {
			PassAtK  []*float64 `json:"pass_at_k"`
			PassHatK []*float64 `json:"pass_hat_k"`
		} `json:"totals"`
	}
	assert.NilError(t, json.Unmarshal(b, &rep))
	summary, cells := bench.Aggregate(rep.Scenarios, 4)
	assert.Equal(t, len(rep.Repeated), 2)
	mixed := false
	for i, r := range rep.Repeated {
		c := cells[i]
		assert.Equal(t, r.Name, c.Name)
		assert.Equal(t, r.Repeats, 4)
		assert.Equal(t, [2]int{r.Passed, r.Failed}, [2]int{c.Stats.Passed, c.Stats.Failed})
		mixed = mixed || r.Passed > 0 && r.Failed > 0
		for k := 1; k <= 4; k++ {
			assert.Equal(t, *r.PassAtK[k-1], float64(c.Stats.PassAtK[k-1]), "%s pass@%d", r.Name, k)
			assert.Equal(t, *r.PassHatK[k-1], float64(c.Stats.PassHatK[k-1]), "%s pass^%d", r.Name, k)
		}
		line := fmt.Sprintf("  %-28s %7s %6.0f%% %6.0f%% %6.0f%%\n", r.Name, fmt.Sprintf("%d/%d", r.Passed, r.Passed+r.Failed),
			100**r.PassAtK[0], 100**r.PassAtK[3], 100**r.PassHatK[3])
		assert.Check(t, is.Contains(stdout, line), stdout)
	}
	assert.Assert(t, mixed, "the seed gives a scenario both passes and failures: %+v", rep.Repeated)
	for k := 1; k <= 4; k++ {
		assert.Equal(t, *rep.Totals.PassAtK[k-1], float64(summary.PassAtK[k-1]), "mean pass@%d", k)
		assert.Equal(t, *rep.Totals.PassHatK[k-1], float64(summary.PassHatK[k-1]), "mean pass^%d", k)
	}
	assert.Check(t, is.Contains(stdout, "pass@k over 4 runs of each"), stdout)

	code, stdout, stderr = invoke(t, runArgs(filepath.Join(dir, "out1"), "--json", report, pass)...)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, !strings.Contains(stdout, "pass@"), "a single run has no pass@k: %s", stdout)
	b, err = os.ReadFile(report)
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(string(b), "pass_at_k"))
}

// TestReusedOutHoldsOneRun: a second run into the same --out moves the first aside to
// OUT.prev, so the index, the reports and merge show the second run alone (a failure of
// the first once stayed on the index and in merge); --rerun-failed continues the run in
// its directory; a directory runner did not write is refused, nothing in it touched.
func TestReusedOutHoldsOneRun(t *testing.T) {
	dir := t.TempDir()
	pass := writeTask(t, dir, "hello.yaml", passingTask)
	fail := writeTask(t, dir, "wrong.yaml", failingTask)
	out := filepath.Join(dir, "out")

	code, _, stderr := invoke(t, runArgs(out, pass, fail)...)
	assert.Equal(t, code, ExitFailed, stderr)
	code, stdout, stderr := invoke(t, runArgs(out, pass)...)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, is.Contains(stderr, "runner: "+out+" held an earlier run: moved to "+out+".prev"))
	assert.Check(t, is.Contains(stdout, "1 scenario: 1 passed"))
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(string(index), "wrong"), "the earlier run's failure is not on this run's index")
	assert.Check(t, is.Contains(string(index), "1 scenarios"))
	code, stdout, _ = invoke(t, "merge", out)
	assert.Equal(t, code, ExitOK)
	assert.Check(t, is.Contains(stdout, "1 scenario: 1 passed"), "merge reports this run alone: %s", stdout)
	prev, err := os.ReadFile(filepath.Join(out+".prev", "index.html"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(prev), "wrong"), "the earlier run is kept whole beside it")

	// A third run replaces .prev: one earlier run is kept, not one per run.
	code, _, stderr = invoke(t, runArgs(out, fail)...)
	assert.Equal(t, code, ExitFailed, stderr)
	code, stdout, _ = invoke(t, "merge", out+".prev")
	assert.Equal(t, code, ExitOK)
	assert.Check(t, is.Contains(stdout, "1 scenario: 1 passed"), stdout)

	// --rerun-failed continues the run in its directory: not moved, the union reported.
	code, stdout, stderr = invoke(t, runArgs(out, "--rerun-failed", out, pass, fail)...)
	assert.Equal(t, code, ExitFailed, stderr)
	assert.Check(t, !strings.Contains(stderr, "moved to"), stderr)
	assert.Check(t, is.Contains(stdout, "2 scenarios: 1 passed, 1 failed"), stdout)

	// Files runner did not write are neither mixed with nor moved: refused, untouched.
	mine := filepath.Join(dir, "mine")
	assert.NilError(t, os.MkdirAll(mine, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("keep"), 0o644))
	code, _, stderr = invoke(t, runArgs(mine, pass)...)
	assert.Equal(t, code, ExitUsage, stderr)
	assert.Check(t, is.Contains(stderr, "runner: run: --out: "+mine+" is not empty and holds no runner output"), stderr)
	entries, err := os.ReadDir(mine)
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 1, "nothing written into it")
	_, err = os.Stat(mine + ".prev")
	assert.Assert(t, os.IsNotExist(err), "nothing moved")
}
