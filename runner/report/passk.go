package report

import (
	"fmt"
	"math"

	"github.com/agentrunner/runner/runner/bench/stats"
	"github.com/agentrunner/runner/runner/result"
)

// Repeated is one scenario run several times (run --repeat N): its runs' outcomes and
// pass@k and pass^k for k = 1..Repeats, computed as bench computes them (runner/bench/
// stats, over the measured runs: errors are infrastructure, left out as bench leaves
// them out). An entry is null where it cannot be computed (k above the measured runs).
type Repeated struct {
	File string `json:"file"`
	Name string `json:"name"`
	// Repeats is the runs planned; Passed, Failed and Errored count them (errored
	// includes interrupted and not run).
	Repeats int `json:"repeats"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
	// PassAtK[k-1] is pass@k and PassHatK[k-1] pass^k: the chance that at least one, or
	// all, of k runs pass. pass@1 is the pass rate.
	PassAtK  []*float64 `json:"pass_at_k"`
	PassHatK []*float64 `json:"pass_hat_k"`
}

// repeatedOf groups a run's scenarios by task (file and name, a case on its own) in
// first-seen order, with their pass@k: the tasks that ran more than once; nil if none did.
func repeatedOf(run result.Run) []Repeated {
	index := map[string]int{}
	var out []Repeated
	k := 0
	for _, s := range run.Scenarios {
		k = max(k, s.Repeats)
		key := s.File + "\x00" + s.Name
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, Repeated{File: s.File, Name: s.Name})
		}
		r := &out[i]
		r.Repeats = max(r.Repeats, s.Repeats)
		switch verdict(s) {
		case result.Passed:
			r.Passed++
		case result.Failed:
			r.Failed++
		default:
			r.Errored++
		}
	}
	if k <= 1 {
		return nil
	}
	kept := out[:0]
	for _, r := range out {
		// A merged run may mix tasks run once with repeated ones: only the latter have a k.
		if r.Repeats = max(r.Repeats, r.Passed+r.Failed+r.Errored); r.Repeats > 1 {
			kept = append(kept, r)
		}
	}
	out = kept
	for i := range out {
		r := &out[i]
		n := r.Passed + r.Failed
		r.PassAtK, r.PassHatK = make([]*float64, r.Repeats), make([]*float64, r.Repeats)
		for k := 1; k <= r.Repeats; k++ {
			r.PassAtK[k-1] = known(stats.PassAtK(n, r.Passed, k))
			r.PassHatK[k-1] = known(stats.PassHatK(n, r.Passed, k))
		}
	}
	return out
}

// meanAt is the mean over the tasks of their pass@k (hat: pass^k) where it is known, as
// bench's model summary averages its scenarios; nil when none is.
func meanAt(rs []Repeated, k int, hat bool) *float64 {
	sum, n := 0.0, 0
	for _, r := range rs {
		vs := r.PassAtK
		if hat {
			vs = r.PassHatK
		}
		if k <= len(vs) && vs[k-1] != nil {
			sum += *vs[k-1]
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return known(sum / float64(n))
}

func known(f float64) *float64 {
	if math.IsNaN(f) {
		return nil
	}
	return &f
}

// percent is a ratio as the console shows it: "67%", "–" when unknown.
func percent(f *float64) string {
	if f == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100**f)
}

// writeRepeated prints the console's pass@k table: one line per task run more than
// once, then the means.
func (c *Console) writeRepeated(rs []Repeated) {
	k := maxRepeats(rs)
	c.printf("\npass@k over %d runs of each (pass@1: the pass rate; pass@%d: at least one of %d passed; pass^%d: all %d did; errors left out):\n", k, k, k, k, k)
	c.printf("  %-*s %7s %7s %7s %7s\n", nameColumn, "scenario", "passed", "pass@1", fmt.Sprintf("pass@%d", k), fmt.Sprintf("pass^%d", k))
	for _, r := range rs {
		passed := fmt.Sprintf("%d/%d", r.Passed, r.Passed+r.Failed)
		if r.Errored > 0 {
			passed += fmt.Sprintf(" (%d error)", r.Errored)
		}
		c.printf("  %-*s %7s %7s %7s %7s\n", nameColumn, oneLine(r.Name, 0), passed,
			percent(at(r.PassAtK, 1)), percent(at(r.PassAtK, k)), percent(at(r.PassHatK, k)))
	}
	c.printf("  %-*s %7s %7s %7s %7s\n", nameColumn, fmt.Sprintf("mean of %d", len(rs)), "",
		percent(meanAt(rs, 1, false)), percent(meanAt(rs, k, false)), percent(meanAt(rs, k, true)))
}

func maxRepeats(rs []Repeated) int {
	k := 0
	for _, r := range rs {
		k = max(k, r.Repeats)
	}
	return k
}

func at(vs []*float64, k int) *float64 {
	if k < 1 || k > len(vs) {
		return nil
	}
	return vs[k-1]
}
