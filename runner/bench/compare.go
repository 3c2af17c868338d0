package bench

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/agentrunner/runner/runner/bench/stats"
)

// Alpha is the family-wise significance level of a baseline comparison.
const Alpha = 0.05

// Families of tests. Each model's totals are the primary family, Holm-corrected across
// models only: with the scenarios in the same family, a model that fell from 57/57 to
// 50/57 (p = 0.006) was "not significant" next to 57 per-scenario tests, none of which
// can ever reach significance with 3 repeats. The per-scenario tests are a second,
// exploratory family, corrected among themselves, shown but gating only when asked.
const (
	FamilyModels    = "models"
	FamilyScenarios = "scenarios"
)

// Comparison is a new bench set against a baseline.
type Comparison struct {
	Alpha float64 `json:"alpha"`
	// GateScenarios makes significant per-scenario drops fail the comparison too
	// (--gate scenarios); by default only models' totals gate.
	GateScenarios bool `json:"gate_scenarios,omitempty"`
	// Rows are every model and every (model, scenario) measured in both, in the new
	// report's order; a model row has Scenario "".
	Rows []Delta `json:"rows"`
	// Missing lists the models and scenarios the baseline measured and the new report did
	// not (absent, renamed, not pulled, or every run errored): they fail the comparison
	// unless AllowMissing, since a gate that compared nothing must not pass.
	Missing []string `json:"missing,omitempty"`
	// AllowMissing lets baseline rows be missing (--allow-missing): they are listed, and
	// the comparison stands on the rows measured in both.
	AllowMissing bool `json:"allow_missing,omitempty"`
	// Changed lists task files whose content differs from the baseline's (SHA-256): their
	// rows compare different tasks.
	Changed []string `json:"changed,omitempty"`
	// Setup lists what differs in where the two benches ran (GPUs, placement, context,
	// server version, slots), said before any verdict: a model that spilled to CPU is
	// not a model that got worse.
	Setup []string `json:"setup_changed,omitempty"`
}

// Delta compares one model, or one of its scenarios, with the baseline.
type Delta struct {
	Model    string `json:"model"`
	Scenario string `json:"scenario,omitempty"`
	// Family is FamilyModels for a model's totals, FamilyScenarios for a scenario.
	Family string `json:"family"`
	// BasePassed of BaseRuns and NewPassed of NewRuns are the measured runs' passes.
	BasePassed int `json:"base_passed"`
	BaseRuns   int `json:"base_runs"`
	NewPassed  int `json:"new_passed"`
	NewRuns    int `json:"new_runs"`
	// Change is the new pass rate minus the baseline's, in percentage points.
	Change float64 `json:"change_pts"`
	// P is the one-sided Fisher exact test's p-value for a drop; Adjusted is after
	// Holm's correction within the row's family. PUp and AdjustedUp are the same for a rise.
	P          float64 `json:"p"`
	Adjusted   float64 `json:"p_adjusted"`
	PUp        float64 `json:"p_up"`
	AdjustedUp float64 `json:"p_up_adjusted"`
	// Regression is true when the drop is significant at Alpha after the correction;
	// Improvement, when the rise is.
	Regression  bool `json:"regression"`
	Improvement bool `json:"improvement"`
	// MinDrop is the smallest drop, in points, that these sample sizes could show as
	// significant (at the family's most lenient Holm threshold, alpha / rows); unknown
	// (null) when no drop could.
	MinDrop Ratio `json:"min_detectable_drop_pts"`
}

// Rates returns the base and new pass rates.
func (d Delta) Rates() (base, new float64) {
	return rate(d.BasePassed, d.BaseRuns), rate(d.NewPassed, d.NewRuns)
}

func rate(p, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(p) / float64(n)
}

// Regressions returns the rows whose significant drop fails the comparison: the models'
// totals, and with GateScenarios the scenarios too.
func (c Comparison) Regressions() []Delta {
	return c.rows(func(r Delta) bool { return r.Regression && (r.Family == FamilyModels || c.GateScenarios) })
}

// Fails reports whether the comparison fails its gate: a significant drop that gates,
// or a baseline row not measured now unless AllowMissing.
func (c Comparison) Fails() bool {
	return len(c.Regressions()) > 0 || len(c.Missing) > 0 && !c.AllowMissing
}

// Exploratory returns the significant per-scenario drops that do not gate.
func (c Comparison) Exploratory() []Delta {
	return c.rows(func(r Delta) bool { return r.Regression && r.Family == FamilyScenarios && !c.GateScenarios })
}

// Improvements returns the rows with a significant rise.
func (c Comparison) Improvements() []Delta {
	return c.rows(func(r Delta) bool { return r.Improvement })
}

// Model returns the model's totals row, if it was compared.
func (c Comparison) Model(name string) (Delta, bool) {
	for _, r := range c.Rows {
		if r.Family == FamilyModels && r.Model == name {
			return r, true
		}
	}
	return Delta{}, false
}

func (c Comparison) rows(keep func(Delta) bool) []Delta {
	var out []Delta
	for _, r := range c.Rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// Compare tests, for each model and each (model, scenario) measured in both reports,
// whether the pass rate dropped or rose: one-sided Fisher exact tests on the pass counts
// of the measured runs (errors and runs not run left out), with Holm's correction within
// each family (see FamilyModels) at family-wise level alpha. Identical or
// noisy-but-insignificant results are neither.
func Compare(base, cur *Report, alpha float64) Comparison {
	c := Comparison{Alpha: alpha, Setup: setupChanges(base, cur)}
	baseModels := map[string]*ModelResult{}
	for i := range base.Models {
		baseModels[base.Models[i].Label()] = &base.Models[i]
	}
	seen := map[string]bool{}
	for _, m := range cur.Models {
		bm := baseModels[m.Label()]
		if bm == nil {
			continue
		}
		seen[m.Label()] = true
		c.add(m.Label(), "", bm.Summary, m.Summary)
		baseCells := map[string]Stats{}
		for _, s := range bm.Scenarios {
			baseCells[s.Name] = s.Stats
		}
		for _, s := range m.Scenarios {
			if bs, ok := baseCells[s.Name]; ok {
				c.add(m.Label(), s.Name, bs, s.Stats)
				delete(baseCells, s.Name)
			}
		}
		for name, bs := range baseCells {
			if bs.Passed+bs.Failed > 0 {
				c.Missing = append(c.Missing, m.Label()+" / "+name)
			}
		}
	}
	for _, bm := range base.Models {
		if !seen[bm.Label()] && bm.Summary.Passed+bm.Summary.Failed > 0 {
			c.Missing = append(c.Missing, bm.Label())
		}
	}
	baseHash := map[string]string{}
	for _, t := range base.Tasks {
		baseHash[t.Name] = t.definition()
	}
	for _, t := range cur.Tasks {
		if h, ok := baseHash[t.Name]; ok && h != "" && t.definition() != "" && h != t.definition() {
			c.Changed = append(c.Changed, t.Name)
		}
	}
	c.correct(FamilyModels)
	c.correct(FamilyScenarios)
	return c
}

// correct applies Holm's method to one family's rows, for drops and rises apart.
func (c *Comparison) correct(family string) {
	var idx []int
	for i, r := range c.Rows {
		if r.Family == family {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	down, up := make([]float64, len(idx)), make([]float64, len(idx))
	for j, i := range idx {
		down[j], up[j] = c.Rows[i].P, c.Rows[i].PUp
	}
	dropped, adjDown := stats.Holm(down, c.Alpha)
	rose, adjUp := stats.Holm(up, c.Alpha)
	for j, i := range idx {
		r := &c.Rows[i]
		r.Adjusted, r.AdjustedUp = adjDown[j], adjUp[j]
		r.Regression = dropped[j] && r.Change < 0
		r.Improvement = rose[j] && r.Change > 0
		r.MinDrop = minDetectableDrop(r.BasePassed, r.BaseRuns, r.NewRuns, c.Alpha/float64(len(idx)))
	}
}

// minDetectableDrop is the smallest drop from the baseline's rate, in points, whose
// one-sided Fisher p-value reaches threshold with these sample sizes (NaN: none does).
func minDetectableDrop(basePassed, baseN, newN int, threshold float64) Ratio {
	baseRate := rate(basePassed, baseN)
	for k := int(baseRate * float64(newN)); k >= 0; k-- {
		if stats.FisherDrop(basePassed, baseN, k, newN) <= threshold {
			return Ratio(100 * (baseRate - float64(k)/float64(newN)))
		}
	}
	return Ratio(math.NaN())
}

func (c *Comparison) add(model, scenario string, base, cur Stats) {
	bn, nn := base.Passed+base.Failed, cur.Passed+cur.Failed
	switch {
	case bn == 0:
		return // nothing measured in the baseline: nothing to hold the new report to
	case nn == 0:
		// Present but unmeasured (every run errored or not run) is as missing as absent.
		label := model
		if scenario != "" {
			label += " / " + scenario
		}
		c.Missing = append(c.Missing, label)
		return
	}
	family := FamilyScenarios
	if scenario == "" {
		family = FamilyModels
	}
	c.Rows = append(c.Rows, Delta{
		Model: model, Scenario: scenario, Family: family,
		BasePassed: base.Passed, BaseRuns: bn, NewPassed: cur.Passed, NewRuns: nn,
		Change: 100 * (rate(cur.Passed, nn) - rate(base.Passed, bn)),
		P:      stats.FisherDrop(base.Passed, bn, cur.Passed, nn),
		PUp:    stats.FisherDrop(cur.Passed, nn, base.Passed, bn),
	})
}

// WriteText prints the comparison for a console: the gating regressions, the exploratory
// drops, the improvements, the drops within the noise, the smallest detectable drop, then
// a one-line verdict.
func (c Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, d := range c.Setup {
		fmt.Fprintf(&b, "warning: the benches ran on different setups: %s\n", d)
	}
	regs := c.Regressions()
	for _, r := range regs {
		fmt.Fprintf(&b, "REGRESSION %s: %s\n", r.label(), r.describe())
	}
	for _, r := range c.Exploratory() {
		fmt.Fprintf(&b, "lower (exploratory, per scenario; --gate scenarios to fail on it): %s: %s\n", r.label(), r.describe())
	}
	for _, r := range c.Improvements() {
		fmt.Fprintf(&b, "IMPROVEMENT %s: %s\n", r.label(), r.describeUp())
	}
	for _, r := range c.Rows {
		if r.Change < 0 && !r.Regression {
			fmt.Fprintf(&b, "lower, not significant: %s: %s\n", r.label(), r.describe())
		}
	}
	for _, m := range c.Missing {
		if c.AllowMissing {
			fmt.Fprintf(&b, "not measured now (in the baseline; --allow-missing): %s\n", m)
		} else {
			fmt.Fprintf(&b, "MISSING %s: measured in the baseline, not now (renamed, not pulled, or every run errored); --allow-missing to accept\n", m)
		}
	}
	for _, t := range c.Changed {
		fmt.Fprintf(&b, "warning: task %s changed since the baseline (its file's SHA-256 differs)\n", t)
	}
	for _, r := range c.Rows {
		if r.Family == FamilyModels {
			fmt.Fprintf(&b, "%s: %s\n", r.Model, r.detectable())
		}
	}
	gate := "models' totals"
	if c.GateScenarios {
		gate += " and scenarios"
	}
	missing := ""
	if len(c.Missing) > 0 && !c.AllowMissing {
		missing = fmt.Sprintf(", %d baseline row(s) not measured", len(c.Missing))
	}
	fmt.Fprintf(&b, "compared %d rows with the baseline (one-sided Fisher exact tests, Holm-corrected per family, alpha %.2f, gating on %s): %d significant drop(s), %d improvement(s)%s\n",
		len(c.Rows), c.Alpha, gate, len(regs), len(c.Improvements()), missing)
	_, err := io.WriteString(w, b.String())
	return err
}

// detectable states the smallest drop the row's sample sizes can show.
func (d Delta) detectable() string {
	if !d.MinDrop.Known() {
		return fmt.Sprintf("no drop could be significant with %d and %d runs", d.BaseRuns, d.NewRuns)
	}
	return fmt.Sprintf("the smallest drop these %d and %d runs can show is %.0f pts", d.BaseRuns, d.NewRuns, float64(d.MinDrop))
}

// Points is a change in percentage points, signed: "-12 pts", "+3 pts", "±0 pts".
func Points(change float64) string {
	switch r := math.Round(change); {
	case r > 0:
		return fmt.Sprintf("+%.0f pts", r)
	case r < 0:
		return fmt.Sprintf("%.0f pts", r)
	}
	return "±0 pts"
}

func (d Delta) describeUp() string {
	base, cur := d.Rates()
	return fmt.Sprintf("%d/%d (%.0f%%) -> %d/%d (%.0f%%), %s, p = %.4f, adjusted %.4f",
		d.BasePassed, d.BaseRuns, 100*base, d.NewPassed, d.NewRuns, 100*cur, Points(d.Change), d.PUp, d.AdjustedUp)
}

func (d Delta) label() string {
	if d.Scenario == "" {
		return d.Model
	}
	return d.Model + " / " + d.Scenario
}

func (d Delta) describe() string {
	base, cur := d.Rates()
	return fmt.Sprintf("%d/%d (%.0f%%) -> %d/%d (%.0f%%), %s, p = %.4f, adjusted %.4f",
		d.BasePassed, d.BaseRuns, 100*base, d.NewPassed, d.NewRuns, 100*cur, Points(d.Change), d.P, d.Adjusted)
}
