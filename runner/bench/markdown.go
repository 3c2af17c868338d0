package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/report/markdown"
)

// WriteMarkdown writes bench.md: the leaderboard, the model x scenario grid, the models'
// probe data and, with a baseline, the comparison. It is what CI job summaries show.
func WriteMarkdown(w io.Writer, r *Report, cmp *Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark: %d model(s) x %d scenario(s) x %d repeat(s)\n\n", len(r.Models), len(r.Tasks), r.Repeat)
	fmt.Fprintf(&b, "runner %s on %s (%s/%s, %d CPUs), %s, took %s.\n\n",
		cell(r.Runner), cell(r.Host.Name), cell(r.Host.OS), cell(r.Host.Arch), r.Host.CPUs, r.Started.UTC().Format(time.RFC3339), r.Duration.Duration().Round(time.Millisecond))
	if cmp != nil {
		writeVerdict(&b, cmp)
	}
	writeLeaderboard(&b, r, cmp)
	writeGrid(&b, r)
	writeModels(&b, r)
	if r.Machine != nil {
		fmt.Fprintf(&b, "\nMachine (from the %s): %s.\n", cell(r.Machine.Source), cell(gpuNames(r)))
	}
	writeTime(&b, r.Models)
	if cmp != nil {
		writeRows(&b, cmp)
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", cell(w))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLeaderboard is bench.md's table of the models, best first, with the comparison's
// column when there is a baseline, then the costs.
func writeLeaderboard(b *strings.Builder, r *Report, cmp *Comparison) {
	k := r.Repeat
	b.WriteString("## Leaderboard\n\n")
	vsHead, vsRule := "", ""
	if cmp != nil {
		vsHead, vsRule = " vs baseline |", "---|"
	}
	fmt.Fprintf(b, "| # | model | pass rate [95%% CI] |%s pass@1 | pass@%d | pass^%d | flaky | steps (mean / p95) | tokens in / out (mean) | wall s (mean / p95) | tok/s | tool errors | denials | errors | not run |\n", vsHead, k, k)
	b.WriteString("|---|---|---|" + vsRule + "---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, m := range Ranked(r) {
		s := m.Summary
		vs := ""
		if cmp != nil {
			vs = " " + vsBaseline(cmp, m.Label()) + " |"
		}
		if m.Status != ModelRan {
			fmt.Fprintf(b, "| %d | %s | %s: %s |%s | | | | | | | | | | %d | %d |\n", i+1, cell(m.Label()), cell(m.Status), cell(m.Reason), vs, s.Errored, s.NotRun)
			continue
		}
		fmt.Fprintf(b, "| %d | %s | %s |%s %s | %s | %s | %d | %.1f / %.0f | %.0f / %.0f | %.2f / %.2f | %s | %d | %d | %d | %d |\n",
			i+1, cell(m.Label()), RateWithInterval(s), vs, pct(s.PassAtK, 1), pct(s.PassAtK, k), pct(s.PassHatK, k), s.Flaky,
			s.Steps.Mean, s.Steps.P95, s.PromptTokens.Mean, s.CompletionTokens.Mean, s.WallMS.Mean/1000, s.WallMS.P95/1000,
			tps(s), s.ToolErrors, s.Denials, s.Errored, s.NotRun)
	}
	b.WriteString("\nPass rate: passed / (passed + failed) runs; errors (infrastructure) and runs not run are counted apart, never as failures. pass@k (Chen et al. 2021) and pass^k (tau-bench) are means over scenarios.\n\n")
	writeCosts(b, r.Models)

}

// writeGrid is bench.md's model x scenario grid, a task with cases pooled above them.
func writeGrid(b *strings.Builder, r *Report) {
	b.WriteString("## Grid (passed / measured runs: ✓ all passed, ✗ none, ~ some)\n\n| scenario |")
	for _, m := range r.Models {
		fmt.Fprintf(b, " %s |", cell(m.Label()))
	}
	b.WriteString("\n|---|")
	for range r.Models {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	cases := casesPerFile(r.Tasks)
	for i, t := range r.Tasks {
		if n := cases[t.File]; n > 1 && (i == 0 || r.Tasks[i-1].File != t.File) {
			// A task with a matrix or dataset: its cases pooled, then each case.
			fmt.Fprintf(b, "| **%s** (%d cases) |", cell(taskOf(t.Name)), n)
			for _, m := range r.Models {
				fmt.Fprintf(b, " **%s** |", cell(GridCell(m.pooled(t.File))))
			}
			b.WriteString("\n")
		}
		name := t.Name
		if cases[t.File] > 1 {
			name = "↳ " + name
		}
		fmt.Fprintf(b, "| %s |", cell(name))
		for _, m := range r.Models {
			fmt.Fprintf(b, " %s |", cell(GridCell(m.find(t.Name))))
		}
		b.WriteString("\n")
	}

}

// writeModels is bench.md's table of the models' probe data, placement and loads.
func writeModels(b *strings.Builder, r *Report) {
	b.WriteString("\n## Models\n\n| model | status | family | parameters | quantization | context | digest | server | placement | size | warm-up | loads (ms) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range r.Models {
		status := m.Status
		if m.Reason != "" {
			status += ": " + m.Reason
		}
		if p := m.Probe; p != nil {
			digest := p.Digest
			if len(digest) > 12 {
				digest = digest[:12]
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(m.Label()), cell(status), cell(p.Family), cell(p.ParameterSize), cell(p.Quantization),
				contextText(p.ContextLength, p.LoadedContext), cell(digest), cell(p.ServerVersion), cell(placementText(r, m)), sizeText(m),
				m.WarmUp.Duration().Round(time.Millisecond), loadsText(m))
		} else {
			fmt.Fprintf(b, "| %s | %s | | | | | | | | | | |\n", cell(m.Label()), cell(status))
		}
	}
}

// Ranked returns the models best first: benchmarked models by pass rate, then by the
// lower bound of the interval, then by name; skipped models last.
func Ranked(r *Report) []ModelResult {
	out := append([]ModelResult(nil), r.Models...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Status == ModelRan) != (b.Status == ModelRan) {
			return a.Status == ModelRan
		}
		if a.Summary.PassRate != b.Summary.PassRate {
			return a.Summary.PassRate > b.Summary.PassRate
		}
		if a.Summary.Interval[0] != b.Summary.Interval[0] {
			return a.Summary.Interval[0] > b.Summary.Interval[0]
		}
		return a.Label() < b.Label()
	})
	return out
}

func (m *ModelResult) find(scenario string) *ScenarioResult {
	for i := range m.Scenarios {
		if m.Scenarios[i].Name == scenario {
			return &m.Scenarios[i]
		}
	}
	return nil
}

// casesPerFile counts the scenarios of each task file: more than one is a task's cases
// (matrix: or dataset:).
func casesPerFile(tasks []TaskFile) map[string]int {
	n := map[string]int{}
	for _, t := range tasks {
		n[t.File]++
	}
	return n
}

// taskOf is a case's task name: "count-words[one-line]" -> "count-words".
func taskOf(caseName string) string {
	if i := strings.IndexByte(caseName, '['); i > 0 {
		return caseName[:i]
	}
	return caseName
}

// pooled is the model's cells of one task file summed into one: the task over its cases.
func (m *ModelResult) pooled(file string) *ScenarioResult {
	var out *ScenarioResult
	for i := range m.Scenarios {
		c := &m.Scenarios[i]
		if c.File != file {
			continue
		}
		if out == nil {
			out = &ScenarioResult{File: file}
		}
		out.Stats.Planned += c.Stats.Planned
		out.Stats.Passed += c.Stats.Passed
		out.Stats.Failed += c.Stats.Failed
		out.Stats.Errored += c.Stats.Errored
		out.Stats.NotRun += c.Stats.NotRun
	}
	return out
}

// RateWithInterval is "80% [49–94%] (8/10)".
func RateWithInterval(s Stats) string {
	n := s.Passed + s.Failed
	if n == 0 {
		return "not measured"
	}
	return fmt.Sprintf("%.0f%% [%.0f–%.0f%%] (%d/%d)", 100*s.PassRate, 100*s.Interval[0], 100*s.Interval[1], s.Passed, n)
}

// GridCell is one (model, scenario) cell as text: "4/5 flaky", "5/5", "not run", ...
func GridCell(c *ScenarioResult) string {
	if c == nil {
		return "–"
	}
	s := c.Stats
	n := s.Passed + s.Failed
	var parts []string
	if n > 0 {
		// A mark as well as the counts: the verdict is readable without the colours.
		mark := "~"
		switch s.Passed {
		case n:
			mark = "✓"
		case 0:
			mark = "✗"
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d", mark, s.Passed, n))
	}
	if c.Flaky {
		parts = append(parts, "flaky")
	}
	if s.Errored > 0 {
		parts = append(parts, fmt.Sprintf("%d error", s.Errored))
	}
	if s.NotRun > 0 {
		parts = append(parts, fmt.Sprintf("%d not run", s.NotRun))
	}
	return strings.Join(parts, " ")
}

func pct(v []Ratio, k int) string {
	if k < 1 || k > len(v) || !v[k-1].Known() {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(v[k-1]))
}

func tps(s Stats) string {
	if s.TokensPerSecond.Mean == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", s.TokensPerSecond.Mean)
}

func contextText(max, loaded int) string {
	switch {
	case max > 0 && loaded > 0:
		return fmt.Sprintf("%d (loaded %d)", max, loaded)
	case max > 0:
		return fmt.Sprint(max)
	}
	return ""
}

// placementText is where the model ran, marked when a reader could take CPU time for a
// slower model.
func placementText(r *Report, m ModelResult) string {
	p := m.Placement
	if p == nil {
		return ""
	}
	text := p.Processor()
	if p.ContextLength > 0 {
		text += fmt.Sprintf(", context %d", p.ContextLength)
	}
	if cpuPlacement(r, m) != "" {
		text = "⚠ " + text
	}
	return text
}

// sizeText is the loaded model's size in memory.
func sizeText(m ModelResult) string {
	if m.Placement == nil || m.Placement.Size <= 0 {
		return ""
	}
	if size := float64(m.Placement.Size); size < 1e9 {
		return fmt.Sprintf("%.1f MB", size/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(m.Placement.Size)/1e9)
}

// loadsText is how many times the server loaded the model, and how long that took.
func loadsText(m ModelResult) string {
	if m.Status != ModelRan {
		return ""
	}
	text := fmt.Sprintf("%d (%.0f)", m.LoadCount, m.Load.Ms())
	if m.CellLoads > 0 {
		text += fmt.Sprintf(", %d while cells ran", m.CellLoads)
	}
	if m.LoggedLoads != nil {
		text += fmt.Sprintf(", log: %d", *m.LoggedLoads)
	}
	return text
}

// writeTime says how each model's cells ran at once and where their time went, so a
// parallel run's waits are not read as a slower model.
func writeTime(b *strings.Builder, models []ModelResult) {
	lines := timeLines(models)
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n## Time\n\n")
	for _, l := range lines {
		fmt.Fprintf(b, "- %s.\n", cell(l))
	}
	b.WriteString("\n" + timeNote + "\n")
}

const timeNote = "Wall and cell times exclude the server's loads (counted in the models table), so a reload is not read as a slower model; waiting is requests queued at the server for a slot, or for their turn in a batch shared with other requests. Ollama keeps num_ctx tokens of context per slot: more slots, more memory."

// timeLines are the Time section's lines, one per model that ran, as plain text.
func timeLines(models []ModelResult) []string {
	var lines []string
	for _, m := range models {
		p := m.Parallel
		if m.Status != ModelRan || p.Cells == 0 {
			continue
		}
		slots := "unknown: give the server's log with --ollama-log"
		if p.Slots > 0 {
			slots = fmt.Sprint(p.Slots)
		}
		line := fmt.Sprintf("%s: up to %d cell(s) at once (server slots: %s); the cells took %.2f s of wall time for %.2f s of their own (%.2f at once on average), loads excluded",
			m.Label(), p.Cells, slots, p.Wall.Seconds(), p.CellTime.Seconds(), p.Concurrency())
		if p.Requests > 0 && p.PromptEval+p.Eval > 0 {
			n := float64(p.Requests)
			line += fmt.Sprintf("; per request, on the server: prompt %.1f ms, generation %.1f ms, scheduling %.1f ms, waiting %.1f ms",
				p.PromptEval.Ms()/n, p.Eval.Ms()/n, p.Schedule.Ms()/n, p.Wait.Ms()/n)
		}
		lines = append(lines, line)
	}
	return lines
}

// cell escapes text for a markdown table cell (markdown.Cell): scenario and model names,
// reasons and probe data come from task files, agents and servers, and none of it may be
// a live link, image or HTML in bench.md.
func cell(s string) string { return markdown.Cell(s, 0) }

// writeVerdict is bench.md's first section with a baseline: the regressions that gate,
// then the improvements, then what could not be seen at this sample size.
func writeVerdict(b *strings.Builder, cmp *Comparison) {
	b.WriteString("## Verdict\n\n")
	if len(cmp.Setup) > 0 {
		b.WriteString("⚠ The benches ran on different setups; the pass rates compare, the times may not:\n\n")
		for _, d := range cmp.Setup {
			fmt.Fprintf(b, "- %s\n", cell(d))
		}
		b.WriteString("\n")
	}
	regs, ups := cmp.Regressions(), cmp.Improvements()
	if len(cmp.Missing) > 0 && !cmp.AllowMissing {
		fmt.Fprintf(b, "**%d row(s) of the baseline not measured now**, which fails the comparison (`--allow-missing` accepts them): %s.\n\n",
			len(cmp.Missing), cell(strings.Join(cmp.Missing, ", ")))
	}
	switch len(regs) {
	case 0:
		b.WriteString("**No significant regression** from the baseline.\n\n")
	default:
		fmt.Fprintf(b, "**%d significant regression(s)** from the baseline:\n\n", len(regs))
		for _, d := range regs {
			fmt.Fprintf(b, "- %s\n", change(d, d.P, d.Adjusted))
		}
		b.WriteString("\n")
	}
	if len(ups) > 0 {
		b.WriteString("Significant improvements:\n\n")
		for _, d := range ups {
			fmt.Fprintf(b, "- %s\n", change(d, d.PUp, d.AdjustedUp))
		}
		b.WriteString("\n")
	}
	if exp := cmp.Exploratory(); len(exp) > 0 {
		b.WriteString("Lower per scenario (exploratory: significant among the scenarios' own tests, not gating; `--gate scenarios` makes them gate):\n\n")
		for _, d := range exp {
			fmt.Fprintf(b, "- %s\n", change(d, d.P, d.Adjusted))
		}
		b.WriteString("\n")
	}
	for _, d := range cmp.Rows {
		if d.Family == FamilyModels {
			fmt.Fprintf(b, "%s: %s.\n", cell(d.Model), d.detectable())
		}
	}
	fmt.Fprintf(b, "\nOne-sided Fisher exact tests on the pass counts, Holm-corrected at alpha %.2f within each family: the models' totals (gating) and the scenarios (exploratory).\n\n", cmp.Alpha)
}

// writeRows lists every compared row with its change.
func writeRows(b *strings.Builder, cmp *Comparison) {
	b.WriteString("\n## Against the baseline\n\n| row | family | baseline | now | change | p (drop) | adjusted | p (rise) | adjusted |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range cmp.Rows {
		base, cur := d.Rates()
		fmt.Fprintf(b, "| %s | %s | %d/%d (%.0f%%) | %d/%d (%.0f%%) | %s | %.4f | %.4f | %.4f | %.4f |\n", cell(d.label()), d.Family,
			d.BasePassed, d.BaseRuns, 100*base, d.NewPassed, d.NewRuns, 100*cur, significance(d), d.P, d.Adjusted, d.PUp, d.AdjustedUp)
	}
	if len(cmp.Changed) > 0 {
		fmt.Fprintf(b, "\nChanged since the baseline (task file SHA-256 differs): %s.\n", cell(strings.Join(cmp.Changed, ", ")))
	}
	if len(cmp.Missing) > 0 {
		fmt.Fprintf(b, "\nIn the baseline, not measured now: %s.\n", cell(strings.Join(cmp.Missing, ", ")))
	}
}

// change is one verdict line: both rates, the change in points and the p-values.
func change(d Delta, p, adjusted float64) string {
	base, cur := d.Rates()
	return fmt.Sprintf("%s: %d/%d (%.0f%%) → %d/%d (%.0f%%), %s (p = %.4f, adjusted %.4f)",
		cell(d.label()), d.BasePassed, d.BaseRuns, 100*base, d.NewPassed, d.NewRuns, 100*cur, Points(d.Change), p, adjusted)
}

// significance is a row's change and whether it is significant.
func significance(d Delta) string {
	switch {
	case d.Regression || d.Improvement:
		return Points(d.Change) + ", significant"
	case d.Change != 0:
		return Points(d.Change) + ", not significant"
	}
	return Points(d.Change)
}

// vsBaseline is a leaderboard row's change from the baseline.
func vsBaseline(cmp *Comparison, model string) string {
	d, ok := cmp.Model(model)
	if !ok {
		return "not in the baseline"
	}
	return significance(d)
}

// writeCosts is a line of what each model's cells cost, when any has a price: the agent's
// calls with unknown prices counted apart, the judges' apart, and the price table's date.
func writeCosts(b *strings.Builder, models []ModelResult) {
	var parts []string
	date := ""
	for _, m := range models {
		if c := m.Summary.Cost; c != nil {
			parts = append(parts, cell(m.Label())+" "+cell(c.String()))
			date = c.Prices
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, "Cost: %s (prices of %s).\n\n", strings.Join(parts, " · "), cell(date))
	}
}
