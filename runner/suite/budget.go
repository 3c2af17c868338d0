package suite

import (
	"sync"

	"github.com/agentrunner/runner/runner/result"
)

// CostBudget admits scenarios until the finished ones have cost USD (0: no limit). A
// scenario already running when the budget is spent finishes; the rest are not run.
type CostBudget struct {
	USD float64

	mu      sync.Mutex
	spent   float64
	refused bool
}

// Add counts a finished scenario's cost (the agent's and the judges').
func (b *CostBudget) Add(s result.Scenario) {
	if b == nil || s.Cost == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// A cost is never negative or NaN from runner's own pricing; one read back from an
	// earlier result (--resume) is data, and must not give the budget money back.
	for _, usd := range []*float64{s.Cost.USD, s.Cost.JudgeUSD} {
		if usd != nil && *usd > 0 {
			b.spent += *usd
		}
	}
}

// Spent reports whether the budget is used up.
func (b *CostBudget) Spent() bool {
	if b == nil || b.USD <= 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent >= b.USD
}

// Admit is suite.Options.Admit: false once the budget is spent, and remembered.
func (b *CostBudget) Admit() bool {
	if !b.Spent() {
		return true
	}
	b.mu.Lock()
	b.refused = true
	b.mu.Unlock()
	return false
}

// Refused reports whether the budget kept a scenario from starting.
func (b *CostBudget) Refused() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}
