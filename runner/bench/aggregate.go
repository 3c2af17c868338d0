package bench

import (
	"math"
	"time"

	"github.com/agentrunner/runner/runner/bench/stats"
	"github.com/agentrunner/runner/runner/result"
)

// cellStatus is one planned run's outcome as the grid shows it.
func cellStatus(s result.Scenario) string {
	switch {
	case s.Status == result.Passed:
		return RunPassed
	case s.Status == result.Failed:
		return RunFailed
	case s.Stop == result.StopNotRun:
		return RunNotRun
	}
	return RunError
}

// Aggregate groups a model's results by scenario (in first-seen order, which is the
// suite's task order) and computes each cell's statistics and the model's summary.
// repeat is the planned number of runs per scenario, the k range of pass@k.
func Aggregate(results []result.Scenario, repeat int) (summary Stats, cells []ScenarioResult) {
	index := map[string]int{}
	var groups [][]result.Scenario
	for _, s := range results {
		key := s.File + "\x00" + s.Name
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
			cells = append(cells, ScenarioResult{Name: s.Name, File: s.File})
		}
		groups[i] = append(groups[i], s)
	}
	for i, g := range groups {
		cells[i].Stats = compute(g, repeat)
		for _, s := range g {
			cells[i].Runs = append(cells[i].Runs, cellStatus(s))
		}
		cells[i].Flaky = cells[i].Stats.Passed > 0 && cells[i].Stats.Failed > 0
	}
	summary = compute(results, repeat)
	// A model's pass@k is the mean over its scenarios, not pass@k of pooled runs.
	summary.PassAtK, summary.PassHatK = make([]Ratio, repeat), make([]Ratio, repeat)
	for k := 1; k <= repeat; k++ {
		var at, hat []float64
		for _, c := range cells {
			if v := c.Stats.PassAtK[k-1]; v.Known() {
				at = append(at, float64(v))
				hat = append(hat, float64(c.Stats.PassHatK[k-1]))
			}
		}
		summary.PassAtK[k-1], summary.PassHatK[k-1] = nanMean(at), nanMean(hat)
	}
	for _, c := range cells {
		if c.Flaky {
			summary.Flaky++
		}
	}
	return summary, cells
}

func nanMean(xs []float64) Ratio {
	if len(xs) == 0 {
		return Ratio(math.NaN())
	}
	return Ratio(stats.Mean(xs))
}

// compute is the statistics of one group of runs.
func compute(runs []result.Scenario, repeat int) Stats {
	var st Stats
	var steps, prompt, completion, wall, tps []float64
	var evalTokens int
	var evalTime time.Duration
	var cost result.CostTotal
	for _, s := range runs {
		st.Planned++
		cost.Add(s.Cost)
		switch cellStatus(s) {
		case RunPassed:
			st.Passed++
		case RunFailed:
			st.Failed++
		case RunNotRun:
			st.NotRun++
			continue
		default:
			st.Errored++
			continue
		}
		steps = append(steps, float64(s.Steps))
		prompt = append(prompt, float64(s.Usage.PromptTokens))
		completion = append(completion, float64(s.Usage.CompletionTokens))
		// A load the cell waited for is the server's doing, not the model's speed.
		wall = append(wall, (s.Duration - s.LoadTime).Ms())
		if s.Usage.TokensPerSecond > 0 {
			tps = append(tps, s.Usage.TokensPerSecond)
		}
		if s.Usage.EvalTime > 0 {
			evalTokens += s.Usage.CompletionTokens
			evalTime += s.Usage.EvalTime.Duration()
		}
		st.ToolErrors += s.ToolErrors
		st.Denials += s.Denied
	}
	n := st.Passed + st.Failed
	if n > 0 {
		st.PassRate = float64(st.Passed) / float64(n)
	}
	st.Interval[0], st.Interval[1] = stats.Wilson(st.Passed, n, stats.Z95)
	st.PassAtK, st.PassHatK = make([]Ratio, repeat), make([]Ratio, repeat)
	for k := 1; k <= repeat; k++ {
		st.PassAtK[k-1] = Ratio(stats.PassAtK(n, st.Passed, k))
		st.PassHatK[k-1] = Ratio(stats.PassHatK(n, st.Passed, k))
	}
	st.Steps, st.PromptTokens, st.CompletionTokens = dist(steps), dist(prompt), dist(completion)
	st.WallMS, st.TokensPerSecond = dist(wall), dist(tps)
	if evalTime > 0 {
		// Rates of requests of 2-5 tokens ranged 5 to 2,371 tokens/s on one machine: their
		// mean says little. Total tokens over total generation time is the speed.
		st.TokensPerSecond.Mean = float64(evalTokens) / evalTime.Seconds()
	}
	if cost.Prices != "" {
		st.Cost = &cost
	}
	return st
}

func dist(xs []float64) Dist { return Dist{Mean: stats.Mean(xs), P95: stats.P95(xs)} }
