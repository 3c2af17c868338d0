package budget_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/budget"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/result"
)

// fixed answers every call with the same usage and counts its calls.
type fixed struct {
	name  string
	usage model.Usage
	mu    sync.Mutex
	calls int
}

func (f *fixed) Name() string { return f.name }
func (f *fixed) Step(context.Context, *model.Request) (*model.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return &model.Response{Content: "ok", Usage: f.usage}, nil
}

func prices(t *testing.T) *price.Table {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prices.yaml")
	assert.NilError(t, os.WriteFile(path, []byte("models:\n  fake:priced: {input: 1.0, output: 2.0}\n"), 0o644))
	tb, err := price.Load(path)
	assert.NilError(t, err)
	return tb
}

// Each call is charged at its model's price as it is answered; the first call after the
// spend reaches the budget is refused unsent, for every model of the run, and the suite
// admits no more scenarios. A negative count or a negative prior cost gives nothing back.
func TestCallsAreChargedAndRefusedOnceSpent(t *testing.T) {
	b := budget.New(1.0, prices(t))
	// $0.40 a call: 200,000 prompt tokens at $1/M and 100,000 completion tokens at $2/M.
	m := &fixed{name: "fake:priced", usage: model.Usage{PromptTokens: 200_000, CompletionTokens: 100_000}}
	other := &fixed{name: "fake:priced", usage: model.Usage{PromptTokens: -5_000_000}}
	wm, wo := b.Wrap(m), b.Wrap(other)
	ctx := context.Background()
	for range 3 {
		assert.Assert(t, b.Admit())
		_, err := wo.Step(ctx, &model.Request{}) // -5M tokens: counts 0
		assert.NilError(t, err)
		_, err = wm.Step(ctx, &model.Request{})
		assert.NilError(t, err)
	}
	assert.Check(t, b.Spent(), "$1.20 of $1.00")
	_, err := wo.Step(ctx, &model.Request{})
	assert.Check(t, errors.Is(err, model.ErrBudgetSpent), "%v", err)
	var spent *budget.SpentError
	assert.Assert(t, errors.As(err, &spent))
	assert.Check(t, is.Contains(err.Error(), "spent $1.2000 of its budget of $1.00"))
	assert.Equal(t, m.calls, 3)
	assert.Equal(t, other.calls, 3, "the refused call was never sent")
	assert.Check(t, !b.Admit())
	assert.Check(t, b.Refused())

	neg := -10.0
	b2 := budget.New(1.0, prices(t))
	b2.AddPrior(result.Scenario{Cost: &result.Cost{USD: &neg}})
	assert.Check(t, !b2.Spent(), "a negative prior cost is data: it gives nothing back")
	pos := 1.5
	b2.AddPrior(result.Scenario{Cost: &result.Cost{USD: &pos}})
	assert.Check(t, b2.Spent(), "a reused result's cost counts")
}

// No budget wraps nothing; a model of unknown price is charged nothing.
func TestNoBudgetAndUnknownPrices(t *testing.T) {
	var none *budget.Budget
	m := &fixed{name: "fake:priced"}
	assert.Equal(t, none.Wrap(m), model.Model(m))
	assert.Check(t, none.Admit() && !none.Spent() && !none.Refused())
	assert.Check(t, budget.New(0, nil) == nil)

	b := budget.New(0.01, prices(t))
	free := b.Wrap(&fixed{name: "fake:unpriced", usage: model.Usage{PromptTokens: 1 << 30}})
	_, err := free.Step(context.Background(), &model.Request{})
	assert.NilError(t, err)
	assert.Check(t, !b.Spent())
}
