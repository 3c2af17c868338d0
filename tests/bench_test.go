package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/bench"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/oracle"
)

// benchTasks are two small scenarios: write a file with the right content.
func benchTasks(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"alpha", "beta"} {
		body := "name: " + name + "\nprompt: Write " + name + ".txt containing " + name + "-ok.\n" +
			"tools: [write_file]\nassert:\n  - file_contains: {path: " + name + ".txt, text: " + name + "-ok}\n"
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
	}
	return dir
}

// solve and give up are the two ways a scripted model answers a scenario.
func solve(name string) []fakellm.Reply {
	return []fakellm.Reply{
		fakellm.ToolCall("write_file", map[string]any{"path": name + ".txt", "content": name + "-ok\n"}),
		fakellm.ToolCall("task_complete", map[string]any{"summary": "wrote it"}),
	}
}

// giveUp writes the wrong content. It takes two steps like solve: the fake knows a new
// conversation by its assistant turns going down.
func giveUp(name string) []fakellm.Reply {
	return []fakellm.Reply{
		fakellm.ToolCall("write_file", map[string]any{"path": name + ".txt", "content": "not yet\n"}),
		fakellm.ToolCall("task_complete", map[string]any{"summary": "could not"}),
	}
}

// benchScript scripts models "good" (always solves) and "flaky" (solves alpha in 2 of
// every 8 tries when flaky is true, else always); "missing" is not pulled.
func benchScript(flaky bool) fakellm.Script {
	s := fakellm.Script{Models: map[string][]string{"good": {"completion", "tools"}, "flaky": {"completion", "tools"}}}
	for _, m := range []string{"good", "flaky"} {
		for _, task := range []string{"alpha", "beta"} {
			r := fakellm.Route{Model: m, Match: "Write " + task, Replies: solve(task)}
			if flaky && m == "flaky" && task == "alpha" {
				r.Cycle = [][]fakellm.Reply{solve(task), giveUp(task), solve(task), giveUp(task), giveUp(task), giveUp(task), giveUp(task), giveUp(task)}
			}
			s.Routes = append(s.Routes, r)
		}
	}
	return s
}

func runBench(t *testing.T, srv *fakellm.Server, out string, extra ...string) outcome {
	t.Helper()
	// -j 1: the fake tells conversations apart by their opening, so repeats of one
	// scenario must not overlap for the flaky model's cycle to be played in order.
	args := append([]string{"bench", "--out", out, "--sandbox", "none", "-j", "1", "--repeat", "8", "--retries", "1"}, extra...)
	return runner(t, run{Args: args, Env: []string{"OLLAMA_HOST=" + srv.URL()}})
}

// TestBenchEndToEnd runs `runner bench` against a fake Ollama with three models: one that
// always solves the suite, one that solves a scenario only some of the time, and one that
// is not pulled; the reports must show exactly that, and a baseline from a good run must
// flag the flaky model's drop.
func TestBenchEndToEnd(t *testing.T) {
	t.Parallel()
	tasks := benchTasks(t)

	// The baseline: both models always solve.
	goodSrv := fakellm.Start(benchScript(false))
	defer goodSrv.Close()
	baseDir := filepath.Join(t.TempDir(), "base")
	o := runBench(t, goodSrv, baseDir, "--models", "ollama:good,ollama:flaky", tasks)
	assert.Equal(t, o.Code, 0, "stdout:\n%s\nstderr:\n%s", o.Stdout, o.Stderr)

	srv := fakellm.Start(benchScript(true))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "new")
	o = runBench(t, srv, out, "--model", "ollama:good", "--model", "ollama:flaky", "--model", "ollama:missing", tasks)
	assert.Equal(t, o.Code, 3, "a model that is not pulled leaves cells unmeasured\nstdout:\n%s\nstderr:\n%s", o.Stdout, o.Stderr)

	rep, err := bench.ReadFile(filepath.Join(out, bench.JSONFile))
	assert.NilError(t, err)
	assert.Equal(t, rep.Version, bench.FormatVersion)
	assert.Equal(t, rep.Repeat, 8)
	assert.Equal(t, len(rep.Tasks), 2)
	assert.Equal(t, len(rep.Tasks[0].SHA256), 64)
	assert.Equal(t, len(rep.Models), 3)
	good, flaky, missing := rep.Models[0], rep.Models[1], rep.Models[2]

	assert.Equal(t, good.Name, "ollama:good")
	assert.Equal(t, good.Status, bench.ModelRan)
	assert.Equal(t, [3]int{good.Summary.Passed, good.Summary.Failed, good.Summary.Errored}, [3]int{16, 0, 0})
	assert.Equal(t, good.Summary.PassRate, 1.0)
	assert.Equal(t, good.Summary.Flaky, 0)
	assert.Assert(t, good.Probe != nil && good.Probe.Tools && good.Probe.ParameterSize == "1B" &&
		good.Probe.Quantization == "Q4_K_M" && good.Probe.ContextLength == 4096 && len(good.Probe.Digest) == 64, "%+v", good.Probe)
	assert.Assert(t, good.WarmUp > 0)
	assert.Assert(t, good.Summary.TokensPerSecond.Mean > 0, "Ollama's eval counts and durations give tokens per second")

	assert.Equal(t, flaky.Name, "ollama:flaky")
	assert.Equal(t, [3]int{flaky.Summary.Passed, flaky.Summary.Failed, flaky.Summary.Flaky}, [3]int{10, 6, 1})
	alpha := flaky.Scenarios[0]
	assert.Equal(t, alpha.Name, "alpha")
	assert.Assert(t, alpha.Flaky)
	assert.DeepEqual(t, alpha.Runs, []string{"passed", "failed", "passed", "failed", "failed", "failed", "failed", "failed"})
	assert.Equal(t, float64(alpha.Stats.PassAtK[0]), 0.25)
	assert.Assert(t, !flaky.Scenarios[1].Flaky)

	assert.Equal(t, missing.Name, "ollama:missing", "a model that is not pulled keeps its name")
	assert.Equal(t, missing.Status, bench.ModelSkipped)
	assert.Assert(t, is.Contains(missing.Reason, "ollama pull missing"))
	assert.Equal(t, missing.Summary.NotRun, 16, "its cells are not run, never dropped")

	// Every cell has its own directory under the model's, named "name.rK", and holds
	// "repeat": K: one numbering, from 1, as the reports' "name #K".
	for dir, k := range map[string]int{"ollama-good/alpha.r1": 1, "ollama-good/beta.r8": 8, "ollama-flaky/alpha.r2": 2} {
		r := readResult(t, filepath.Join(out, dir, "result.json"))
		assert.Assert(t, strings.HasPrefix(r.Model, "ollama:"))
		assert.Equal(t, r.Repeat, k, dir)
		assert.Equal(t, r.DisplayName(), strings.Split(filepath.Base(dir), ".")[0]+" #"+strconv.Itoa(k))
	}

	// The files a run wrote validate against the schemas `runner schema` serves.
	validate(t, "bench", filepath.Join(out, bench.JSONFile))
	validate(t, "result", filepath.Join(out, "ollama-flaky", "alpha.r2", "result.json"))
	validate(t, "transcript", filepath.Join(out, "ollama-flaky", "alpha.r2", "transcript.jsonl"))

	md, err := os.ReadFile(filepath.Join(out, bench.MarkdownFile))
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(md), "| 1 | ollama:good | 100% [81–100%] (16/16) |"))
	assert.Assert(t, is.Contains(string(md), "| 2 | ollama:flaky | 62% [39–82%] (10/16) |"))
	assert.Assert(t, is.Contains(string(md), "| alpha | ✓ 8/8 | \\~ 2/8 flaky | 8 not run |"))
	assert.Assert(t, is.Contains(string(md), "| 3 | ollama:missing | skipped: "))

	// The baseline from the good run flags the flaky model's drop, and only that: its
	// totals gate, its scenario alpha is exploratory unless --gate scenarios.
	prComment := filepath.Join(t.TempDir(), "comment.md")
	o = runner(t, run{Args: []string{"bench", "compare", "--markdown", prComment, filepath.Join(baseDir, bench.JSONFile), filepath.Join(out, bench.JSONFile)}})
	assert.Equal(t, o.Code, 1, "stdout:\n%s\nstderr:\n%s", o.Stdout, o.Stderr)
	assert.Assert(t, is.Contains(o.Stdout, "REGRESSION ollama:flaky: 16/16 (100%) -> 10/16 (62%), -38 pts"))
	assert.Assert(t, is.Contains(o.Stdout, "lower (exploratory, per scenario; --gate scenarios to fail on it): ollama:flaky / alpha: 8/8 (100%) -> 2/8 (25%)"))
	assert.Assert(t, !strings.Contains(o.Stdout, "REGRESSION ollama:good"), o.Stdout)
	assert.Assert(t, !strings.Contains(o.Stdout, "beta"), o.Stdout)
	comment, err := os.ReadFile(prComment)
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(strings.SplitN(string(comment), "## ", 2)[1], "Verdict"), string(comment))
	assert.Assert(t, is.Contains(string(comment), "ollama:flaky: 16/16 (100%) → 10/16 (62%), -38 pts"))
	o = runner(t, run{Args: []string{"bench", "compare", "--gate", "scenarios", filepath.Join(baseDir, bench.JSONFile), filepath.Join(out, bench.JSONFile)}})
	assert.Equal(t, o.Code, 1)
	assert.Assert(t, is.Contains(o.Stdout, "REGRESSION ollama:flaky / alpha: 8/8 (100%) -> 2/8 (25%)"))

	// Identical results never fail.
	o = runner(t, run{Args: []string{"bench", "compare", filepath.Join(baseDir, bench.JSONFile), filepath.Join(baseDir, bench.JSONFile)}})
	assert.Equal(t, o.Code, 0, "stdout:\n%s\nstderr:\n%s", o.Stdout, o.Stderr)

	// A baseline model missing from the new bench (renamed, or its pull failed) fails the
	// gate by name: "compared 0 rows ... 0 significant drops" once exited 0. --allow-missing
	// accepts it.
	baseJSON, err := os.ReadFile(filepath.Join(baseDir, bench.JSONFile))
	assert.NilError(t, err)
	renamed := filepath.Join(t.TempDir(), bench.JSONFile)
	assert.NilError(t, os.WriteFile(renamed, bytes.ReplaceAll(baseJSON, []byte(`"ollama:`), []byte(`"ollama:renamed-`)), 0o644))
	o = runner(t, run{Args: []string{"bench", "compare", filepath.Join(baseDir, bench.JSONFile), renamed}})
	assert.Equal(t, o.Code, 1, "stdout:\n%s\nstderr:\n%s", o.Stdout, o.Stderr)
	assert.Assert(t, is.Contains(o.Stdout, "MISSING ollama:good: measured in the baseline, not now"), o.Stdout)
	assert.Assert(t, is.Contains(o.Stdout, "compared 0 rows"), o.Stdout)
	o = runner(t, run{Args: []string{"bench", "compare", "--allow-missing", filepath.Join(baseDir, bench.JSONFile), renamed}})
	assert.Equal(t, o.Code, 0, "stdout:\n%s\nstderr:\n%s", o.Stdout, o.Stderr)
	assert.Assert(t, is.Contains(o.Stdout, "not measured now (in the baseline; --allow-missing): ollama:good"), o.Stdout)

	// --baseline gates a run the same way: exit 1 on the drop.
	srv2 := fakellm.Start(benchScript(true))
	defer srv2.Close()
	o = runBench(t, srv2, filepath.Join(t.TempDir(), "gated"), "--models", "ollama:good,ollama:flaky",
		"--baseline", filepath.Join(baseDir, bench.JSONFile), tasks)
	assert.Equal(t, o.Code, 1, "stdout:\n%s\nstderr:\n%s", o.Stdout, o.Stderr)
	assert.Assert(t, is.Contains(o.Stdout, "REGRESSION ollama:flaky: 16/16"))
}

func TestBenchUsage(t *testing.T) {
	t.Parallel()
	tasks := benchTasks(t)
	for _, args := range [][]string{
		{"bench", tasks},                    // no model
		{"bench", "--model", "nope", tasks}, // no provider
		{"bench", "--model", "oracle"},      // no tasks
		{"bench", "--model", "oracle", "--repeat", "0", tasks},
		{"bench", "compare", "only-one.json"},
		{"bench", "compare", "missing-a.json", "missing-b.json"},
		{"bench", "compare", "--gate", "everything", "a.json", "b.json"},
		{"bench", "--model", "oracle", "--gate", "everything", tasks},
	} {
		o := runner(t, run{Args: args})
		assert.Equal(t, o.Code, 2, "%v\nstderr:\n%s", args, o.Stderr)
	}
}

// validate checks a file written by a run against `runner schema NAME`: a JSON file
// whole, a .jsonl file line by line (each line is also decoded through its Go type).
func validate(t *testing.T, name, file string) {
	t.Helper()
	o := runner(t, run{Args: []string{"schema", name}})
	assert.Equal(t, o.Code, 0, o.Stderr)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(o.Stdout))
	assert.NilError(t, err)
	c := jsonschema.NewCompiler()
	assert.NilError(t, c.AddResource(name+".json", doc))
	schema, err := c.Compile(name + ".json")
	assert.NilError(t, err)
	data, err := os.ReadFile(file)
	assert.NilError(t, err)
	lines := []string{string(data)}
	if strings.HasSuffix(file, ".jsonl") {
		lines = strings.Split(strings.TrimSpace(string(data)), "\n")
		for _, e := range readTranscript(t, file) {
			_, err := e.Payload()
			assert.NilError(t, err, "%s event of %s", e.Type, file)
		}
	}
	for i, line := range lines {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		assert.NilError(t, err)
		assert.NilError(t, schema.Validate(inst), "%s line %d", file, i+1)
	}
}

// TestBenchSeededOracle: `runner bench` can be tried with no model server. The oracle with
// fail=0.5,seed=7 gives up exactly the runs its seed picks (the same in parallel and on
// every run), and the plain oracle passes them all.
func TestBenchSeededOracle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"alpha", "beta"} {
		body := "name: " + name + "\nprompt: Write " + name + ".txt containing " + name + "-ok.\n" +
			"tools: [write_file]\nassert:\n  - file_contains: {path: " + name + ".txt, text: " + name + "-ok}\n" +
			"reference:\n  - write_file: {path: " + name + ".txt, content: " + name + "-ok}\n  - task_complete: {summary: done}\n"
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
	}
	flaky := oracle.Flaky{Fail: 0.5, Seed: 7}
	for range 2 { // a second bench gives the same runs
		out := filepath.Join(t.TempDir(), "out")
		o := runner(t, run{Args: []string{"bench", "--out", out, "--sandbox", "none", "-j", "2", "--repeat", "8",
			"--models", "oracle,oracle:fail=0.5,seed=7", dir}})
		assert.Equal(t, o.Code, 0, "stdout:\n%s\nstderr:\n%s", o.Stdout, o.Stderr)
		rep, err := bench.ReadFile(filepath.Join(out, bench.JSONFile))
		assert.NilError(t, err)
		assert.Equal(t, len(rep.Models), 2)
		assert.Equal(t, rep.Models[0].Name, "oracle")
		assert.Equal(t, rep.Models[0].Summary.Passed, 16)
		m := rep.Models[1]
		assert.Equal(t, m.Name, "oracle:fail=0.5,seed=7")
		for _, s := range m.Scenarios {
			want := make([]string, 8)
			for k := range want {
				want[k] = "passed"
				if flaky.GivesUp(s.Name, k+1) { // runs are numbered from 1
					want[k] = "failed"
				}
			}
			assert.DeepEqual(t, s.Runs, want)
		}
		assert.Assert(t, m.Summary.Passed > 0 && m.Summary.Failed > 0, "%+v", m.Summary)
	}
}
