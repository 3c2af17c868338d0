// Package budget keeps a run's --budget-usd at every model call. A scenario does not
// have to finish before its spend counts: every call the built-in loop makes, every
// request an external agent sends through runner's endpoint and every judge's call goes
// through the scenario's model, which Wrap wraps, so the one check here refuses the next
// call of every running scenario once the run has spent the budget, and the suite starts
// no more scenarios (Admit). A call already in flight finishes, so the run overshoots by
// at most the calls running at that moment (one per parallel scenario).
package budget

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/result"
)

// Budget is one run's spend against its limit. Safe for concurrent use; a nil *Budget is
// no budget at all.
type Budget struct {
	usd    float64
	prices *price.Table
	now    func() time.Time

	mu      sync.Mutex
	spent   float64
	refused bool // a scenario not started, or a call refused
}

// New returns the budget of usd dollars under prices (nil: the shipped table), or nil for
// usd <= 0 (no limit).
func New(usd float64, prices *price.Table) *Budget {
	if usd <= 0 {
		return nil
	}
	if prices == nil {
		prices = price.Default()
	}
	return &Budget{usd: usd, prices: prices, now: time.Now}
}

// USD is the limit.
func (b *Budget) USD() float64 { return b.usd }

// SpentError is a call refused because the budget is spent.
type SpentError struct {
	USD, Spent float64
}

func (e *SpentError) Error() string {
	return fmt.Sprintf("budget: the run has spent $%.4f of its budget of $%.2f: runner sends no more model requests", e.Spent, e.USD)
}

// Unwrap makes errors.Is(err, model.ErrBudgetSpent) true.
func (e *SpentError) Unwrap() error { return model.ErrBudgetSpent }

// check refuses a call once the budget is spent.
func (b *Budget) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent >= b.usd {
		b.refused = true
		return &SpentError{USD: b.usd, Spent: b.spent}
	}
	return nil
}

// charge adds one call's cost.
func (b *Budget) charge(usd float64) {
	if usd <= 0 { // never negative: a server's counts are clamped, and NaN adds nothing
		return
	}
	b.mu.Lock()
	b.spent += usd
	b.mu.Unlock()
}

// Spent reports whether the budget is used up.
func (b *Budget) Spent() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent >= b.usd
}

// Admit is suite.Options.Admit: false once the budget is spent, and remembered.
func (b *Budget) Admit() bool {
	if b == nil {
		return true
	}
	return b.check() == nil
}

// Refused reports whether the budget kept a scenario from starting or refused a call.
func (b *Budget) Refused() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// AddPrior counts a result this run reuses instead of running it (--resume,
// --rerun-failed): its model calls were made by an earlier run, but count against this
// one's budget as they would have.
func (b *Budget) AddPrior(s result.Scenario) {
	if b == nil || s.Cost == nil {
		return
	}
	// A cost read back from an earlier result is data: a negative one must not give the
	// budget money back.
	for _, usd := range []*float64{s.Cost.USD, s.Cost.JudgeUSD} {
		if usd != nil && *usd > 0 {
			b.charge(*usd)
		}
	}
}

// Wrap returns m with every call checked against the budget before it is sent and
// charged, at m's price, once it is answered; m itself when b is nil. A model whose
// price is unknown is charged nothing (runner refuses a budget over an agent's model of
// unknown price before the run; a judge's unknown price is reported in its result).
func (b *Budget) Wrap(m model.Model) model.Model {
	if b == nil || m == nil {
		return m
	}
	p, ok := b.prices.Lookup(m.Name())
	return &charged{Model: m, b: b, price: p, priced: ok}
}

// charged is a model whose calls the budget sees.
type charged struct {
	model.Model
	b      *Budget
	price  price.Price
	priced bool
}

// Step refuses the call once the budget is spent, else makes it and charges what it
// cost (its tokens, and its time where the price is per hour).
func (c *charged) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := c.b.check(); err != nil {
		return nil, err
	}
	start := c.b.now()
	resp, err := c.Model.Step(ctx, req)
	if resp != nil && c.priced {
		u := resp.Usage.Clamped()
		c.b.charge(c.price.Cost(price.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
			CachedPromptTokens: u.CachedPromptTokens, ModelTime: c.b.now().Sub(start)}))
	}
	return resp, err
}

// Unwrap returns the wrapped model (for checks that look for what it implements).
func (c *charged) Unwrap() model.Model { return c.Model }

// Ready waits for the wrapped model's pre-flight check, when it has one.
func (c *charged) Ready(ctx context.Context) error {
	if r, ok := c.Model.(interface{ Ready(context.Context) error }); ok {
		return r.Ready(ctx)
	}
	return nil
}
