package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/result"
)

// datasetTask is an oracle task over a dataset whose `claimed` column is what the
// reference writes and `words` what the assertion wants: a row where they differ is a
// case the oracle must fail, so each case's verdict is its own.
const datasetTask = `name: count
model: oracle
sandbox: none
dataset: rows.csv
prompt: Write {{.words}} into count.txt.
tools: [write_file]
assert:
  - file_matches: {path: count.txt, regex: '^{{.words}}$'}
reference:
  - write_file: {path: count.txt, content: "{{.claimed}}"}
  - task_complete: {summary: done}
`

const datasetRows = "id,words,claimed\nr1,4,4\nr2,3,7\nr3,2,2\nr4,9,9\n"

func writeDataset(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "count.yaml"), []byte(datasetTask), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "rows.csv"), []byte(datasetRows), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "matrix.yaml"), []byte(`name: m
model: oracle
sandbox: none
matrix: {a: [x, y], b: ["1", "2"], exclude: [{a: y, b: "2"}]}
prompt: Write {{.a}}{{.b}}.
tools: [write_file]
assert:
  - file_contains: {path: out.txt, text: "{{.a}}{{.b}}"}
reference:
  - write_file: {path: out.txt, content: "{{.a}}{{.b}}"}
  - task_complete: {summary: done}
`), 0o644))
	return dir
}

// TestDatasetAndMatrixCasesEachGetTheirOwnVerdict: a case per row and per cell, each with
// its own result, the one wrong row failing alone, and reports that group cases by task.
func TestDatasetAndMatrixCasesEachGetTheirOwnVerdict(t *testing.T) {
	t.Parallel()
	dir := writeDataset(t)
	out := filepath.Join(t.TempDir(), "out")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	o := runner(t, run{Args: []string{"run", "--out", out, "--junit", junit, dir}})
	assert.Equal(t, o.Code, 1, "one row fails")
	assert.Check(t, is.Contains(o.Stdout, "7 scenarios: 6 passed, 1 failed"))
	for name, want := range map[string]result.Status{
		"count[r1]": result.Passed, "count[r2]": result.Failed, "count[r3]": result.Passed, "count[r4]": result.Passed,
		"m[a=x,b=1]": result.Passed, "m[a=x,b=2]": result.Passed, "m[a=y,b=1]": result.Passed,
	} {
		// Output directories hold only safe characters; the name is in the file.
		res := readResult(t, filepath.Join(out, result.Scenario{Name: name}.DirName(), "result.json"))
		assert.Equal(t, res.Status, want, name)
		assert.Equal(t, res.Name, name)
		if strings.HasPrefix(name, "count") {
			assert.Equal(t, res.Task, "count")
			assert.Equal(t, res.Case, strings.TrimSuffix(strings.TrimPrefix(name, "count["), "]"))
			assert.Equal(t, res.Vars["words"] != nil, true)
		}
	}
	x, err := os.ReadFile(junit)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(x), `name="count[r2]" classname="`+filepath.Join(dir, "count")+`"`), "cases are grouped by their task file")
}

// TestTemplateMistakeIsAPositionedLoadError: run and validate both refuse a template that
// names an unknown variable, at its line and column, and nothing runs.
func TestTemplateMistakeIsAPositionedLoadError(t *testing.T) {
	t.Parallel()
	path := writeTask(t, "bad", "vars: {who: world}\nprompt: |\n  Hello\n  {{.whom}}\nreference:\n  - task_complete: {summary: x}\n")
	for _, args := range [][]string{{"run", "--out", t.TempDir()}, {"validate"}} {
		verb := args[0]
		o := runner(t, run{Args: append(args, path)})
		assert.Equal(t, o.Code, 2, verb)
		assert.Check(t, is.Contains(o.Stderr+o.Stdout, path+`:4:1: prompt: template: no variable "whom"; known: who`), verb)
	}
	o := runner(t, run{Args: []string{"run", "--out", t.TempDir(), "--var", "whoo=x", writeTask(t, "ok", "vars: {who: world}\nprompt: hi {{.who}}\n")}})
	assert.Equal(t, o.Code, 2)
	assert.Check(t, is.Contains(o.Stderr, `--var/--vars: variable "whoo" is set but no task declares it; did you mean "who"?`))
}

// TestShardsSplitCases: every case is in exactly one shard.
func TestShardsSplitCases(t *testing.T) {
	t.Parallel()
	dir := writeDataset(t)
	var all []string
	for _, shard := range []string{"1/2", "2/2"} {
		js := filepath.Join(t.TempDir(), "r.json")
		runner(t, run{Args: []string{"run", "--out", t.TempDir(), "--shard", shard, "--json", js, dir}})
		var rep struct{ Scenarios []result.Scenario }
		b, err := os.ReadFile(js)
		assert.NilError(t, err)
		assert.NilError(t, json.Unmarshal(b, &rep))
		assert.Assert(t, len(rep.Scenarios) > 0 && len(rep.Scenarios) < 7, "shard %s has %d", shard, len(rep.Scenarios))
		for _, s := range rep.Scenarios {
			all = append(all, s.Name)
		}
	}
	sort.Strings(all)
	assert.DeepEqual(t, all, []string{"count[r1]", "count[r2]", "count[r3]", "count[r4]", "m[a=x,b=1]", "m[a=x,b=2]", "m[a=y,b=1]"})
}

// TestVarsFromTheCommandLineAndLimit: --var wins over vars:, --vars reads a file, and
// --limit runs the first cases.
func TestVarsFromTheCommandLineAndLimit(t *testing.T) {
	t.Parallel()
	task := writeTask(t, "v", `model: oracle
sandbox: none
vars: {text: from-file, n: 1}
prompt: Write {{.text}}.
tools: [write_file]
assert:
  - file_contains: {path: out.txt, text: "{{.text}} {{.n}}"}
reference:
  - write_file: {path: out.txt, content: "{{.text}} {{.n}}"}
  - task_complete: {summary: done}
`)
	varsFile := filepath.Join(t.TempDir(), "vars.yaml")
	assert.NilError(t, os.WriteFile(varsFile, []byte("n: 42\ntext: from-vars-file\n"), 0o644))
	out := filepath.Join(t.TempDir(), "out")
	o := runner(t, run{Args: []string{"run", "--out", out, "--vars", varsFile, "--var", "text=from-flag,with a comma", task}})
	assert.Equal(t, o.Code, 0)
	b, err := os.ReadFile(filepath.Join(out, "v", "transcript.jsonl"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), "Write from-flag,with a comma."), "a comma is part of the value")
	res := readResult(t, filepath.Join(out, "v", "result.json"))
	assert.DeepEqual(t, res.Vars, map[string]any{"text": "from-flag,with a comma", "n": float64(42)})

	o = runner(t, run{Args: []string{"run", "--out", t.TempDir(), "--limit", "2", writeDataset(t)}})
	assert.Check(t, is.Contains(o.Stdout, "4 scenarios"), "two cases of each task")
}

// TestCostEqualsTokensTimesTheTableAndTheBudgetStops: a scripted OpenAI model's tokens
// priced by the shipped table, in result.json and the console; --budget-usd stops
// starting scenarios once spent, the rest not run, exit 3; an unpriced model cannot
// have a budget.
func TestCostEqualsTokensTimesTheTableAndTheBudgetStops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var routes []fakellm.Route
	for _, name := range []string{"a1", "a2", "a3"} {
		body := "name: " + name + "\nprompt: Write " + name + ".\ntools: [write_file]\nassert:\n  - completed: true\n"
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
		done := fakellm.ToolCall("task_complete", map[string]any{"summary": "ok"})
		done.Usage = &fakellm.Usage{PromptTokens: 100000, CompletionTokens: 20000}
		routes = append(routes, fakellm.Route{Match: "Write " + name + ".", Replies: []fakellm.Reply{done}, Repeat: true})
	}
	srv := fakellm.Start(fakellm.Script{Routes: routes})
	defer srv.Close()
	env := []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-test"}
	p, ok := price.Default().Lookup("openai:gpt-4o-mini")
	assert.Assert(t, ok)
	perScenario := (100000*p.Input + 20000*p.Output) / 1e6

	out := filepath.Join(t.TempDir(), "out")
	o := runner(t, run{Args: []string{"run", "--out", out, "--sandbox", "none", "-j", "1", "--model", "openai:gpt-4o-mini", dir}, Env: env})
	assert.Equal(t, o.Code, 0)
	res := readResult(t, filepath.Join(out, "a1", "result.json"))
	assert.Assert(t, res.Cost != nil && res.Cost.USD != nil)
	assert.Equal(t, *res.Cost.USD, perScenario)
	assert.Equal(t, res.Cost.Prices, price.Default().Date)
	total := 3 * perScenario
	assert.Check(t, is.Contains(o.Stdout, "cost: "+result.FormatUSD(&total)+" (prices of "+price.Default().Date+")"))

	o = runner(t, run{Args: []string{"run", "--out", t.TempDir(), "--sandbox", "none", "-j", "1", "--model", "openai:gpt-4o-mini",
		"--budget-usd", "0.001", dir}, Env: env})
	assert.Equal(t, o.Code, 3, "a budget that left scenarios not run is an incomplete run")
	assert.Check(t, is.Contains(o.Stdout, "3 scenarios: 1 passed, 2 errored"))
	assert.Check(t, is.Contains(o.Stderr, "budget-usd of $0.00 was spent"))

	o = runner(t, run{Args: []string{"run", "--out", t.TempDir(), "--model", "openai:acme-1", "--budget-usd", "1", dir}, Env: env})
	assert.Equal(t, o.Code, 2)
	assert.Check(t, is.Contains(o.Stderr, "the price of openai:acme-1 is unknown"))
}

// TestNegativeTokenCountsCannotLowerTheCost performs issue 24's attack on cost: a server
// reports +1,000,000 prompt tokens for one answer and -1,000,000 for the next, to the
// agent and to the judge (whose first answer has no verdict, so it is asked again). Each
// answer's counts are clamped before they are added, so every provider's run costs what
// its positive answers cost, and --budget-usd still stops the run at the call after the
// one that spent it.
func TestNegativeTokenCountsCannotLowerTheCost(t *testing.T) {
	t.Parallel()
	const prompt, completion = 1_000_000, 200_000
	with := func(r fakellm.Reply, sign int) fakellm.Reply {
		r.Usage = &fakellm.Usage{PromptTokens: sign * prompt, CompletionTokens: sign * completion}
		return r
	}
	script := fakellm.Script{
		Routes: []fakellm.Route{{Match: "## Rubric", Replies: []fakellm.Reply{
			with(fakellm.Text("Let me think about it."), 1),
			with(fakellm.ToolCall("verdict", map[string]any{"score": 0.9, "reasoning": "fine"}), -1),
		}, Repeat: true}},
		Replies: []fakellm.Reply{
			with(fakellm.ToolCall("write_file", map[string]any{"path": "poem.txt", "content": "Red leaves\n"}), 1),
			with(fakellm.ToolCall("task_complete", map[string]any{"summary": "done"}), -1),
		},
	}
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	var table strings.Builder
	table.WriteString("models:\n")
	names := []string{"ollama", "openai", "openai-responses", "anthropic", "gemini"}
	for _, name := range names {
		fmt.Fprintf(&table, "  %s:fake-model: {input: 1.0, output: 2.0}\n  %s:judge-model: {input: 1.0, output: 2.0}\n", name, name)
	}
	assert.NilError(t, os.WriteFile(prices, []byte(table.String()), 0o644))
	want := (prompt*1.0 + completion*2.0) / 1e6 // $1.40 for each positive answer
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.Start(script)
			defer srv.Close()
			path := writeTask(t, "judged", judgeTaskWith(name+":judge-model"))
			sr := runScenario(t, provider{Name: name}, srv, path, "judged", "--prices", prices)
			assert.Equal(t, sr.Code, 0, sr.Stdout)
			assert.Equal(t, sr.Result.Usage.PromptTokens, prompt)
			assert.Equal(t, sr.Result.Usage.CompletionTokens, completion)
			assert.DeepEqual(t, sr.Result.JudgeUsage, &result.Usage{PromptTokens: prompt, CompletionTokens: completion})
			assert.Assert(t, sr.Result.Cost != nil && sr.Result.Cost.USD != nil && sr.Result.Cost.JudgeUSD != nil)
			assert.Equal(t, *sr.Result.Cost.USD, want)
			assert.Equal(t, *sr.Result.Cost.JudgeUSD, want)
		})
	}

	t.Run("budget", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		var routes []fakellm.Route
		for _, name := range []string{"a1", "a2"} {
			body := "name: " + name + "\nprompt: Write " + name + ".\ntools: [write_file]\nassert:\n  - completed: true\n"
			assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
			routes = append(routes, fakellm.Route{Match: "Write " + name + ".", Replies: []fakellm.Reply{
				with(fakellm.ToolCall("write_file", map[string]any{"path": name, "content": "x"}), 1),
				with(fakellm.ToolCall("task_complete", map[string]any{"summary": "ok"}), -1),
			}})
		}
		srv := fakellm.Start(fakellm.Script{Routes: routes})
		defer srv.Close()
		args, env := provider{Name: "openai"}.args(srv)
		o := runner(t, run{Args: append([]string{"run", "--out", t.TempDir(), "--sandbox", "none", "-j", "1", "--prices", prices,
			"--budget-usd", "1", dir}, args...), Env: env})
		assert.Equal(t, o.Code, 3, "the first answer spent the budget: the next call is refused, the second scenario not run")
		assert.Check(t, is.Contains(o.Stdout, "2 scenarios: 0 passed, 2 errored"), o.Stdout)
		assert.Check(t, is.Contains(o.Stdout, "budget: the run has spent $1.4000 of its budget of $1.00"), "the -$1.40 answer gave nothing back")
	})
}
