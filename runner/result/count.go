package result

import "math"

// AddCount adds counts a model server reported (tokens): a negative operand counts as 0
// and the sum stops at math.MaxInt instead of wrapping, so no answer can lower a total, or
// make it negative, and with it a cost or a budget.
func AddCount(a, b int) int {
	a, b = max(a, 0), max(b, 0)
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// AddMillis adds durations a server reported, as AddCount adds counts.
func AddMillis(a, b Millis) Millis { return Millis(AddCount(int(a), int(b))) }

// Add totals another record's usage into u, as AddCount does (the judges' tokens of a
// scenario, a run's totals).
func (u *Usage) Add(o Usage) {
	u.PromptTokens = AddCount(u.PromptTokens, o.PromptTokens)
	u.CompletionTokens = AddCount(u.CompletionTokens, o.CompletionTokens)
	u.CachedPromptTokens = AddCount(u.CachedPromptTokens, o.CachedPromptTokens)
	u.EvalTime = AddMillis(u.EvalTime, o.EvalTime)
}
