package scenario

import (
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
)

// costOf prices a finished scenario's usage: the agent's model, and the judges' apart.
func costOf(res result.Scenario, prices *price.Table) *result.Cost {
	if prices == nil {
		prices = price.Default()
	}
	c := &result.Cost{Prices: prices.Date}
	if p, ok := prices.Lookup(res.Model); ok {
		usd := p.Cost(price.Usage{
			PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens,
			CachedPromptTokens: res.Usage.CachedPromptTokens, ModelTime: res.ModelTime.Duration(),
		})
		c.USD = &usd
	}
	var judge float64
	judged := false
	for _, a := range res.Assertions {
		if a.Judge == nil {
			continue
		}
		p, ok := prices.Lookup(a.Judge.Model)
		if !ok {
			c.JudgeUnknown = true
			continue
		}
		judged = true
		judge += p.Cost(price.Usage{PromptTokens: a.Judge.Usage.PromptTokens, CompletionTokens: a.Judge.Usage.CompletionTokens})
	}
	if judged && !c.JudgeUnknown {
		c.JudgeUSD = &judge
	}
	return c
}

// SetCase copies a task's case (vars:, matrix: or dataset:) into a result: every
// result made from a task, run or not, says which case it is.
func SetCase(t *task.Task, res *result.Scenario) {
	if t.Case != nil {
		res.Task, res.Case, res.Vars = t.Case.Task, t.Case.Label, t.Case.Vars
	}
}
