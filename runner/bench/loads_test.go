package bench

import (
	"bytes"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
)

// TestReloadsReported: issue 17, 2.5: load time and reloads per model reach bench.json's
// fields, a warning, and bench.md's model table.
func TestReloadsReported(t *testing.T) {
	cells := []result.Scenario{
		{Name: "a", Status: result.Passed, LoadTime: result.Millis(1500 * time.Millisecond), Reloads: 1},
		{Name: "b", Status: result.Passed, LoadTime: result.Millis(300 * time.Microsecond)},
		{Name: "c", Status: result.Passed, LoadTime: result.Millis(1200 * time.Millisecond), Reloads: 1},
	}
	m := ModelResult{Name: "ollama:bigram", Status: ModelRan, Probe: &model.Info{Family: "llama"}}
	m.Load, m.Reloads = loads(cells)
	assert.Equal(t, m.Reloads, 2)
	assert.Equal(t, m.Load.Ms(), 2700.3)
	w := reloadWarnings(m.Name, m)
	assert.Equal(t, len(w), 1)
	assert.Check(t, is.Contains(w[0], "reloaded the model 2 time(s)"))
	assert.Check(t, is.Contains(w[0], "2700 ms"))
	assert.Equal(t, len(reloadWarnings(m.Name, ModelResult{})), 0)

	var md bytes.Buffer
	m.Summary, m.Scenarios = Aggregate(cells, 1)
	assert.NilError(t, WriteMarkdown(&md, &Report{Repeat: 1, Models: []ModelResult{m}}, nil))
	assert.Check(t, is.Contains(md.String(), "reloads (load ms)"))
	assert.Check(t, is.Contains(md.String(), "| 2 (2700) |"))
}

// TestTokensPerSecondIsTotalOverTotal: issue 17, 2.7: a run of two 2-token requests at
// wildly different rates and one long one is reported at its total rate, not the mean.
func TestTokensPerSecondIsTotalOverTotal(t *testing.T) {
	cells := []result.Scenario{
		{Name: "a", Status: result.Passed, Usage: result.Usage{CompletionTokens: 2, EvalTime: result.Millis(time.Millisecond), TokensPerSecond: 2000}},
		{Name: "b", Status: result.Passed, Usage: result.Usage{CompletionTokens: 2, EvalTime: result.Millis(400 * time.Millisecond), TokensPerSecond: 5}},
		{Name: "c", Status: result.Failed, Usage: result.Usage{CompletionTokens: 96, EvalTime: result.Millis(599 * time.Millisecond), TokensPerSecond: 160}},
	}
	sum, _ := Aggregate(cells, 1)
	assert.Equal(t, sum.TokensPerSecond.Mean, 100.0)
}
