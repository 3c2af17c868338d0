package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// WriteMarkdown writes bench.md: the leaderboard, the model x scenario grid, the models'
// probe data and, with a baseline, the comparison. It is what CI job summaries show.
func WriteMarkdown(w io.Writer, r *Report, cmp *Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark: %d model(s) x %d scenario(s) x %d repeat(s)\n\n", len(r.Models), len(r.Tasks), r.Repeat)
	fmt.Fprintf(&b, "runner %s on %s (%s/%s, %d CPUs), %s, took %s.\n\n",
		r.Runner, r.Host.Name, r.Host.OS, r.Host.Arch, r.Host.CPUs, r.Started.UTC().Format(time.RFC3339), r.Duration.Round(time.Millisecond))
	k := r.Repeat
	b.WriteString("## Leaderboard\n\n")
	fmt.Fprintf(&b, "| # | model | pass rate [95%% CI] | pass@1 | pass@%d | pass^%d | flaky | steps (mean / p95) | tokens in / out (mean) | wall s (mean / p95) | tok/s | tool errors | denials | errors | not run |\n", k, k)
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, m := range Ranked(r) {
		s := m.Summary
		if m.Status != ModelRan {
			fmt.Fprintf(&b, "| %d | %s | %s: %s | | | | | | | | | | | %d | %d |\n", i+1, cell(m.Name), m.Status, cell(m.Reason), s.Errored, s.NotRun)
			continue
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %d | %.1f / %.0f | %.0f / %.0f | %.2f / %.2f | %s | %d | %d | %d | %d |\n",
			i+1, cell(m.Name), RateWithInterval(s), pct(s.PassAtK, 1), pct(s.PassAtK, k), pct(s.PassHatK, k), s.Flaky,
			s.Steps.Mean, s.Steps.P95, s.PromptTokens.Mean, s.CompletionTokens.Mean, s.WallSeconds.Mean, s.WallSeconds.P95,
			tps(s), s.ToolErrors, s.Denials, s.Errored, s.NotRun)
	}
	b.WriteString("\nPass rate: passed / (passed + failed) runs; errors (infrastructure) and runs not run are counted apart, never as failures. pass@k (Chen et al. 2021) and pass^k (tau-bench) are means over scenarios.\n\n")

	b.WriteString("## Grid (passed / measured runs)\n\n| scenario |")
	for _, m := range r.Models {
		fmt.Fprintf(&b, " %s |", cell(m.Name))
	}
	b.WriteString("\n|---|")
	for range r.Models {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, t := range r.Tasks {
		fmt.Fprintf(&b, "| %s |", cell(t.Name))
		for _, m := range r.Models {
			fmt.Fprintf(&b, " %s |", GridCell(m.find(t.Name)))
		}
		b.WriteString("\n")
	}

	b.WriteString("\n## Models\n\n| model | status | family | parameters | quantization | context | digest | warm-up | reloads (load ms) |\n|---|---|---|---|---|---|---|---|---|\n")
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
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d (%.0f) |\n", cell(m.Name), cell(status), cell(p.Family), p.ParameterSize, p.Quantization,
				contextText(p.ContextLength, p.LoadedContext), digest, m.WarmUp.Round(time.Millisecond), m.Reloads, m.LoadMS)
		} else {
			fmt.Fprintf(&b, "| %s | %s | | | | | | | |\n", cell(m.Name), cell(status))
		}
	}
	if cmp != nil {
		b.WriteString("\n## Against the baseline\n\n")
		fmt.Fprintf(&b, "One-sided Fisher exact test on pass counts per model and per (model, scenario), Holm-corrected over %d comparisons, alpha %.2f.\n\n", len(cmp.Rows), cmp.Alpha)
		regs := cmp.Regressions()
		if len(regs) == 0 {
			b.WriteString("No significant drop.\n")
		} else {
			b.WriteString("| regression | baseline | now | p | adjusted p |\n|---|---|---|---|---|\n")
			for _, d := range regs {
				base, cur := d.Rates()
				fmt.Fprintf(&b, "| %s | %d/%d (%.0f%%) | %d/%d (%.0f%%) | %.4f | %.4f |\n", cell(d.label()), d.BasePassed, d.BaseRuns, 100*base, d.NewPassed, d.NewRuns, 100*cur, d.P, d.Adjusted)
			}
		}
		if len(cmp.Changed) > 0 {
			fmt.Fprintf(&b, "\nChanged since the baseline (task file SHA-256 differs): %s.\n", cell(strings.Join(cmp.Changed, ", ")))
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
		return a.Name < b.Name
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
		parts = append(parts, fmt.Sprintf("%d/%d", s.Passed, n))
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

// cell escapes text for a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}
