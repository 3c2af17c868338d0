package scenario_test

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
)

// TestScriptedRunCostIsTokensTimesTheTable: the cost of a run is its usage priced by the
// table, cached prompt tokens at the cached price, and a model with no price is unknown.
func TestScriptedRunCostIsTokensTimesTheTable(t *testing.T) {
	tk := parseTask(t, "prompt: Write hello.\ntools: [write_file]\nassert:\n  - completed: true\n")
	step := &model.Response{ToolCalls: []model.ToolCall{complete},
		Usage: model.Usage{PromptTokens: 12000, CompletionTokens: 3000, CachedPromptTokens: 2000}}
	m := &scriptModel{responses: []*model.Response{step}, name: "openai:gpt-4o-mini-2024-07-18"}
	opts := runOptions(t, m)
	res := run(t, tk, opts)
	assert.Equal(t, res.Status, result.Passed, res.Reason)
	p, ok := price.Default().Lookup("openai:gpt-4o-mini")
	assert.Assert(t, ok)
	want := (10000*p.Input + 2000**p.CachedInput + 3000*p.Output) / 1e6
	assert.Assert(t, res.Cost != nil && res.Cost.USD != nil)
	assert.Equal(t, *res.Cost.USD, want)
	assert.Equal(t, res.Cost.Prices, price.Default().Date)
	assert.Equal(t, res.Usage.CachedPromptTokens, 2000)

	// A price file overrides the table; a model it does not know is unknown, never $0.
	path := filepath.Join(t.TempDir(), "prices.yaml")
	assert.NilError(t, os.WriteFile(path, []byte("date: \"2026-11-01\"\nmodels:\n  acme:small: {input: 1, output: 2}\n"), 0o644))
	tab, err := price.Load(path)
	assert.NilError(t, err)
	opts = runOptions(t, &scriptModel{responses: []*model.Response{step}, name: "acme:small"})
	opts.Prices = tab
	res = run(t, tk, opts)
	assert.Equal(t, *res.Cost.USD, (12000*1.0+3000*2.0)/1e6)
	assert.Equal(t, res.Cost.Prices, "2026-11-01")

	opts.Model = func(*task.Task, int) (model.Model, error) {
		return &scriptModel{responses: []*model.Response{step}, name: "acme:large"}, nil
	}
	res = run(t, tk, opts)
	assert.Assert(t, res.Cost.USD == nil)
	assert.Equal(t, result.FormatUSD(res.Cost.USD), "unknown")
}
