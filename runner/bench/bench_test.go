package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
)

// runs builds a model's results: for each scenario, its repeats' statuses in order
// ("p" passed, "f" failed, "e" error, "n" not run), laid out in suite order (repeat-major).
func runs(model string, cells map[string]string, order ...string) []result.Scenario {
	var out []result.Scenario
	repeat := len(cells[order[0]])
	for rep := 0; rep < repeat; rep++ {
		for _, name := range order {
			s := result.Scenario{Name: name, File: name + ".yaml", Model: model, Repeat: rep, Repeats: repeat,
				Steps: 2 + rep, Usage: result.Usage{PromptTokens: 100, CompletionTokens: 10, TokensPerSecond: 50},
				Duration: result.Millis(time.Second)}
			switch cells[name][rep] {
			case 'p':
				s.Status, s.Stop = result.Passed, result.StopCompleted
			case 'f':
				s.Status, s.Stop = result.Failed, result.StopCompleted
			case 'e':
				s.Status, s.Stop = result.Errored, result.StopError
			case 'n':
				s.Status, s.Stop = result.Errored, result.StopNotRun
			}
			out = append(out, s)
		}
	}
	return out
}

func TestAggregate(t *testing.T) {
	sum, cells := Aggregate(runs("m", map[string]string{"a": "ppppp", "b": "pfpff", "c": "ppepn"}, "a", "b", "c"), 5)
	assert.Equal(t, len(cells), 3)
	assert.DeepEqual(t, cells[1].Runs, []string{"passed", "failed", "passed", "failed", "failed"})
	assert.Assert(t, !cells[0].Flaky && cells[1].Flaky && !cells[2].Flaky)

	b := cells[1].Stats
	assert.Equal(t, [4]int{b.Passed, b.Failed, b.Errored, b.NotRun}, [4]int{2, 3, 0, 0})
	assert.Equal(t, b.PassRate, 0.4)
	assert.Assert(t, math.Abs(float64(b.PassAtK[1])-0.7) < 1e-12, "pass@2 of 2/5 = 1 - C(3,2)/C(5,2)")
	assert.Assert(t, math.Abs(float64(b.PassHatK[1])-0.1) < 1e-12, "pass^2 of 2/5 = C(2,2)/C(5,2)")

	c := cells[2].Stats // an error and a run not run: neither a pass nor a failure, still planned
	assert.Equal(t, [5]int{c.Planned, c.Passed, c.Failed, c.Errored, c.NotRun}, [5]int{5, 3, 0, 1, 1})
	assert.Equal(t, c.PassRate, 1.0)
	assert.Assert(t, !c.PassAtK[3].Known() && !c.PassAtK[4].Known(), "pass@4 of 3 measured runs is unknown")

	assert.Equal(t, [5]int{sum.Planned, sum.Passed, sum.Failed, sum.Errored, sum.NotRun}, [5]int{15, 10, 3, 1, 1})
	assert.Equal(t, sum.Flaky, 1)
	assert.Assert(t, math.Abs(sum.PassRate-10.0/13) < 1e-12)
	// pass@1 of the model is the mean over scenarios: (1 + 0.4 + 1) / 3
	assert.Assert(t, math.Abs(float64(sum.PassAtK[0])-2.4/3) < 1e-12)
	// pass@5: only a and b have 5 measured runs: (1 + 1) / 2
	assert.Equal(t, float64(sum.PassAtK[4]), 1.0)
	assert.Equal(t, sum.Steps.P95, 6.0)
	assert.Equal(t, sum.TokensPerSecond.Mean, 50.0)
}

func report(model string, cells map[string]string, order ...string) *Report {
	repeat := len(cells[order[0]])
	r := &Report{Version: FormatVersion, Repeat: repeat}
	for _, n := range order {
		r.Tasks = append(r.Tasks, TaskFile{Name: n, File: n + ".yaml"})
	}
	m := ModelResult{Name: model, Status: ModelRan}
	m.Summary, m.Scenarios = Aggregate(runs(model, cells, order...), repeat)
	r.Models = append(r.Models, m)
	return r
}

func TestCompare(t *testing.T) {
	good := report("ollama:m", map[string]string{"a": "pppppppp", "b": "pppppppp"}, "a", "b")

	same := Compare(good, good, Alpha)
	assert.Equal(t, len(same.Rows), 3)
	assert.Equal(t, len(same.Regressions()), 0, "identical results never fail")

	noisy := report("ollama:m", map[string]string{"a": "ppppppfp", "b": "pppppfpp"}, "a", "b")
	assert.Equal(t, len(Compare(good, noisy, Alpha).Regressions()), 0, "one failure in eight is noise")

	better := Compare(noisy, good, Alpha)
	assert.Equal(t, len(better.Regressions()), 0, "an improvement is no regression")

	// b drops from 8/8 to 1/8: p = C(9,1)C(7,7)/C(16,8) = 9/12870, significant after Holm
	// over the 2 scenario rows; the model's 9/16 against 16/16 is significant too. The
	// model gates; the scenario is exploratory unless scenarios gate.
	bad := report("ollama:m", map[string]string{"a": "pppppppp", "b": "fpffffff"}, "a", "b")
	cmp := Compare(good, bad, Alpha)
	regs := cmp.Regressions()
	assert.Equal(t, len(regs), 1, "%+v", cmp.Rows)
	assert.Equal(t, regs[0].Scenario, "")
	assert.Equal(t, regs[0].Change, -43.75)
	exp := cmp.Exploratory()
	assert.Equal(t, len(exp), 1)
	assert.Equal(t, exp[0].Scenario, "b")
	assert.Assert(t, math.Abs(exp[0].P-9.0/12870) < 1e-12)
	var out bytes.Buffer
	assert.NilError(t, cmp.WriteText(&out))
	assert.Assert(t, is.Contains(out.String(), "REGRESSION ollama:m: 16/16 (100%) -> 9/16 (56%), -44 pts"))
	assert.Assert(t, is.Contains(out.String(), "lower (exploratory, per scenario; --gate scenarios to fail on it): ollama:m / b: 8/8 (100%) -> 1/8 (12%)"))
	cmp.GateScenarios = true
	assert.Equal(t, len(cmp.Regressions()), 2)
	assert.Equal(t, len(cmp.Exploratory()), 0)

	// The other way round, it is an improvement, listed as one.
	up := Compare(bad, good, Alpha)
	assert.Equal(t, len(up.Regressions()), 0)
	assert.Equal(t, len(up.Improvements()), 2)
	out.Reset()
	assert.NilError(t, up.WriteText(&out))
	assert.Assert(t, is.Contains(out.String(), "IMPROVEMENT ollama:m: 9/16 (56%) -> 16/16 (100%), +44 pts"))

	// A task whose file changed since the baseline is named.
	edited := report("ollama:m", map[string]string{"a": "pppppppp", "b": "pppppppp"}, "a", "b")
	good.Tasks[1].SHA256, edited.Tasks[1].SHA256 = "1111", "2222"
	ch := Compare(good, edited, Alpha)
	assert.DeepEqual(t, ch.Changed, []string{"b"})
	out.Reset()
	assert.NilError(t, ch.WriteText(&out))
	assert.Assert(t, is.Contains(out.String(), "warning: task b changed since the baseline"))
	// So is one whose suite file (runner.yaml) changed, the task file unchanged.
	edited.Tasks[1].SHA256 = "1111"
	good.Tasks[0].SHA256, edited.Tasks[0].SHA256 = "3333", "3333"
	good.Tasks[0].SuiteSHA256, edited.Tasks[0].SuiteSHA256 = "aaaa", "bbbb"
	assert.DeepEqual(t, Compare(good, edited, Alpha).Changed, []string{"a"})

	// A model not measured now is listed, not silently passed: with no row compared, the
	// comparison fails and names it, unless missing rows are allowed.
	other := report("ollama:x", map[string]string{"a": "pppppppp"}, "a")
	gone := Compare(good, other, Alpha)
	assert.DeepEqual(t, gone.Missing, []string{"ollama:m"})
	assert.Equal(t, len(gone.Rows), 0)
	assert.Assert(t, gone.Fails(), "a gate that compared nothing must not pass")
	out.Reset()
	assert.NilError(t, gone.WriteText(&out))
	assert.Assert(t, is.Contains(out.String(), "MISSING ollama:m: measured in the baseline, not now"))
	assert.Assert(t, is.Contains(out.String(), "compared 0 rows"), out.String())
	assert.Assert(t, is.Contains(out.String(), "0 significant drop(s), 0 improvement(s), 1 baseline row(s) not measured"))
	gone.AllowMissing = true
	assert.Assert(t, !gone.Fails(), "--allow-missing accepts it")

	// A scenario dropped from the suite, and a model whose every run errored, are as
	// missing as a model that is gone.
	fewer := report("ollama:m", map[string]string{"a": "pppppppp"}, "a")
	assert.DeepEqual(t, Compare(good, fewer, Alpha).Missing, []string{"ollama:m / b"})
	assert.Assert(t, Compare(good, fewer, Alpha).Fails())
	errored := report("ollama:m", map[string]string{"a": "eeeeeeee", "b": "eeeeeeee"}, "a", "b")
	assert.DeepEqual(t, Compare(good, errored, Alpha).Missing, []string{"ollama:m", "ollama:m / a", "ollama:m / b"})
}

// TestModelDropGatesDespiteManyScenarios is issue 17's real case: 19 scenarios x 3
// repeats, 57/57 -> 50/57 (one-sided Fisher p = 0.006). Corrected together with 57
// per-scenario tests it was "not significant"; as its own family it is a regression, and
// no scenario alone could be one with 3 repeats.
func TestModelDropGatesDespiteManyScenarios(t *testing.T) {
	cells, order := map[string]string{}, []string{}
	worse := map[string]string{}
	for i := range 19 {
		name := fmt.Sprintf("s%02d", i)
		order = append(order, name)
		cells[name], worse[name] = "ppp", "ppp"
		if i < 7 {
			worse[name] = "ppf"
		}
	}
	cmp := Compare(report("ollama:m", cells, order...), report("ollama:m", worse, order...), Alpha)
	regs := cmp.Regressions()
	assert.Equal(t, len(regs), 1)
	assert.Equal(t, regs[0].Model, "ollama:m")
	assert.Assert(t, math.Abs(regs[0].P-0.0064) < 0.0005, "p = %v", regs[0].P)
	assert.Equal(t, len(cmp.Exploratory()), 0)
	for _, r := range cmp.Rows {
		if r.Family == FamilyScenarios {
			assert.Assert(t, !r.MinDrop.Known(), "3 vs 3 runs cannot show any drop")
		}
	}
	// 57 runs each at 100%: the smallest drop this run could show.
	assert.Assert(t, regs[0].MinDrop.Known() && regs[0].MinDrop > 5 && regs[0].MinDrop < 13, "%v", regs[0].MinDrop)

	var b bytes.Buffer
	assert.NilError(t, WriteMarkdown(&b, report("ollama:m", worse, order...), &cmp))
	md := b.String()
	verdict, leaderboard := strings.Index(md, "## Verdict"), strings.Index(md, "## Leaderboard")
	assert.Assert(t, verdict > 0 && verdict < leaderboard, md)
	assert.Assert(t, is.Contains(md, "ollama:m: 57/57 (100%) → 50/57 (88%), -12 pts"), md)
	assert.Assert(t, is.Contains(md, "| -12 pts, significant |"), md)
	assert.Assert(t, is.Contains(md, "smallest drop"), md)
}

func TestMarkdown(t *testing.T) {
	r := report("ollama:m", map[string]string{"a": "ppppp", "b": "pfpff"}, "a", "b")
	r.Models = append(r.Models, ModelResult{Name: "ollama:gone", Status: ModelSkipped, Reason: "not pulled"})
	var b bytes.Buffer
	assert.NilError(t, WriteMarkdown(&b, r, nil))
	md := b.String()
	assert.Assert(t, is.Contains(md, "| 1 | ollama:m | 70% [40–89%] (7/10) | 70% |"), md)
	assert.Assert(t, is.Contains(md, "| 2 | ollama:gone | skipped: not pulled |"))
	// Raw Markdown: the tilde is escaped (GitHub reads ~text~ as strikethrough); it renders as ~.
	assert.Assert(t, is.Contains(md, "| b | \\~ 2/5 flaky | – |"))
	assert.Assert(t, is.Contains(md, "| a | ✓ 5/5 |"))
	assert.Equal(t, strings.Count(md, "| a |"), 1)
}

func TestSlug(t *testing.T) {
	assert.Equal(t, Slug("ollama:qwen3:4b"), "ollama-qwen3-4b")
	assert.Equal(t, Slug("openai:gpt/4o mini"), "openai-gpt-4o-mini")
	assert.Equal(t, Slug(".."), "model")
}

// Issue 16 D: a scenario name with raw `<img onerror>` and `<a href>` reached bench.md as
// live HTML, and a model's skip reason or a warning could carry a link or a tracking
// image. Rendered as GitHub renders Markdown, bench.md holds none of them.
func TestBenchMarkdownHostileNamesAreNotLiveMarkup(t *testing.T) {
	names := []string{`<img src=x onerror="alert(1)">`, `<a href="https://evil.example">run me</a>`, "[Approve](https://evil.example/a)"}
	cells := map[string]string{}
	for _, n := range names {
		cells[n] = "pf"
	}
	r := report("ollama:m", cells, names...)
	r.Models = append(r.Models, ModelResult{Name: "ollama:![t](https://evil.example/t.png)", Status: ModelSkipped, Reason: "![](https://evil.example/track.png)"})
	r.Host.Name = "<b>host</b>"
	r.Warnings = []string{"# [click](https://evil.example) <img src=x>"}
	var b bytes.Buffer
	assert.NilError(t, WriteMarkdown(&b, r, nil))
	var page bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	assert.NilError(t, gm.Convert(b.Bytes(), &page))
	for _, live := range []string{"<img", "<a ", "<b>", "<h1>click"} {
		assert.Assert(t, !strings.Contains(page.String(), live), "%s is live in bench.md:\n%s\n\nfrom:\n%s", live, page.String(), b.String())
	}
	assert.Assert(t, is.Contains(page.String(), "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"), "shown as text")
}

// TestWallTimeIsMillisecondsAndShownInSeconds: bench.json keeps each run's wall time in
// milliseconds (wall_ms), and bench.md and bench.html still show seconds.
func TestWallTimeIsMillisecondsAndShownInSeconds(t *testing.T) {
	cells := runs("m", map[string]string{"a": "pp", "b": "pf"}, "a", "b")
	cells[3].Duration = result.Millis(3 * time.Second) // b's failed repeat
	sum, _ := Aggregate(cells, 2)
	assert.Equal(t, sum.WallMS, Dist{Mean: 1500, P95: 3000})
	b, err := json.Marshal(sum)
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(b), `"wall_ms":{"mean":1500,"p95":3000}`))

	r := report("m", map[string]string{"a": "pp"}, "a")
	r.Models[0].Summary = sum
	var md, page bytes.Buffer
	assert.NilError(t, WriteMarkdown(&md, r, nil))
	assert.Assert(t, is.Contains(md.String(), "| 1.50 / 3.00 |"), md.String())
	assert.NilError(t, WriteHTML(&page, r, nil))
	assert.Assert(t, is.Contains(page.String(), "<td>1.50 / 3.00</td>"))
}

// TestReadsAVersion1Baseline: a bench.json written before every duration became *_ms
// (version 1: duration_ns, time_ns, warm_up_ns, wall_seconds) still reads as a --baseline,
// with the same times.
func TestReadsAVersion1Baseline(t *testing.T) {
	old := `{"version": 1, "runner": "v0.1.0", "started": "2026-11-23T18:26:18Z", "duration_ns": 1104068983,
	  "host": {"name": "h", "os": "linux", "arch": "amd64", "cpus": 2}, "repeat": 1,
	  "budget": {"time_ns": 60000000000}, "tasks": [{"name": "a", "file": "a.yaml", "sha256": "x"}],
	  "models": [{"name": "ollama:m", "status": "ran", "warm_up_ns": 2849438, "load_ms": 12.5, "reloads": 0, "out_dir": "o",
	    "summary": {"planned": 1, "passed": 1, "failed": 0, "errored": 0, "not_run": 0, "pass_rate": 1, "interval": [0.2, 1],
	      "pass_at_k": [1], "pass_hat_k": [1], "steps": {"mean": 2, "p95": 2}, "prompt_tokens": {"mean": 1, "p95": 1},
	      "completion_tokens": {"mean": 1, "p95": 1}, "wall_seconds": {"mean": 0.0164, "p95": 0.0474},
	      "tokens_per_second": {"mean": 240, "p95": 240}, "tool_errors": 0, "policy_denials": 0},
	    "scenarios": []}]}`
	path := filepath.Join(t.TempDir(), "bench.json")
	assert.NilError(t, os.WriteFile(path, []byte(old), 0o644))
	r, err := ReadFile(path)
	assert.NilError(t, err)
	assert.Equal(t, r.Duration.Duration(), 1104068983*time.Nanosecond)
	assert.Equal(t, r.Budget.Time.Duration(), time.Minute)
	m := r.Models[0]
	assert.Equal(t, m.WarmUp.Duration(), 2849438*time.Nanosecond)
	assert.Equal(t, m.Load.Duration(), 12500*time.Microsecond)
	assert.Assert(t, math.Abs(m.Summary.WallMS.Mean-16.4) < 1e-9 && math.Abs(m.Summary.WallMS.P95-47.4) < 1e-9, "%+v", m.Summary.WallMS)

	assert.NilError(t, os.WriteFile(path, []byte(strings.Replace(old, `"version": 1`, `"version": 9`, 1)), 0o644))
	_, err = ReadFile(path)
	assert.ErrorContains(t, err, "format version 9")
}

// TestMarkdownGroupsATasksCases: the cases of one task file (matrix: or dataset:) are
// pooled in a row of their own, each case under it.
func TestMarkdownGroupsATasksCases(t *testing.T) {
	r := report("ollama:m", map[string]string{"w[x]": "ppp", "w[y]": "pff", "solo": "ppp"}, "w[x]", "w[y]", "solo")
	for i := range r.Tasks {
		if strings.HasPrefix(r.Tasks[i].Name, "w[") {
			r.Tasks[i].File = "w.yaml"
		}
	}
	for i := range r.Models[0].Scenarios {
		if c := &r.Models[0].Scenarios[i]; strings.HasPrefix(c.Name, "w[") {
			c.File = "w.yaml"
		}
	}
	var b bytes.Buffer
	assert.NilError(t, WriteMarkdown(&b, r, nil))
	md := b.String()
	group := strings.Index(md, "| **w** (2 cases) | **\\~ 4/6** |")
	assert.Assert(t, group > 0, md)
	x, y := strings.Index(md, "| ↳ w\\[x\\] | ✓ 3/3 |"), strings.Index(md, "| ↳ w\\[y\\] | \\~ 1/3 flaky |")
	assert.Assert(t, x > group && y > x, md)
	assert.Assert(t, is.Contains(md, "| solo | ✓ 3/3 |"), "a task without cases is one row")
	assert.Equal(t, strings.Count(md, "(2 cases)"), 1)
}
