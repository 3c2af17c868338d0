package result

import "fmt"

// Cost is what a scenario's model calls cost under the run's price table (see
// runner/model/price): usage times price, in US dollars.
type Cost struct {
	// USD is the agent's model calls; nil when the model's price is unknown (never 0 for
	// unknown).
	USD *float64 `json:"usd"`
	// JudgeUSD is the judge assertions' calls, apart from the agent's; nil when there were
	// none or a judge model's price is unknown (JudgeUnknown then says so).
	JudgeUSD     *float64 `json:"judge_usd,omitempty"`
	JudgeUnknown bool     `json:"judge_unknown,omitempty"`
	// Prices is the date of the price table used.
	Prices string `json:"prices"`
}

// FormatUSD renders a cost for people: "$0.0123", or "unknown" for nil.
func FormatUSD(usd *float64) string {
	if usd == nil {
		return "unknown"
	}
	switch v := *usd; {
	case v == 0:
		return "$0"
	case v < 0.01:
		return fmt.Sprintf("$%.4f", v)
	default:
		return fmt.Sprintf("$%.2f", v)
	}
}

// CostTotal sums the cost of scenarios: the known part and how many were unknown.
type CostTotal struct {
	USD      float64 `json:"usd"`
	JudgeUSD float64 `json:"judge_usd,omitempty"`
	// Unknown counts scenarios whose agent cost is unknown: USD then leaves them out.
	Unknown int `json:"unknown,omitempty"`
	// JudgeUnknown counts scenarios with a judge cost that is unknown.
	JudgeUnknown int `json:"judge_unknown,omitempty"`
	// Prices is the price table's date.
	Prices string `json:"prices,omitempty"`
}

// Add counts one scenario's cost; one that never ran (no Cost) adds nothing.
func (t *CostTotal) Add(c *Cost) {
	if c == nil {
		return
	}
	t.Prices = c.Prices
	if c.USD == nil {
		t.Unknown++
	} else {
		t.USD += *c.USD
	}
	if c.JudgeUSD != nil {
		t.JudgeUSD += *c.JudgeUSD
	}
	if c.JudgeUnknown {
		t.JudgeUnknown++
	}
}

// String renders a total for people: "$1.23", "$1.23 + unknown for 2", "unknown".
func (t CostTotal) String() string {
	known := t.USD
	switch {
	case t.Unknown == 0:
		return FormatUSD(&known)
	case known == 0:
		return "unknown"
	default:
		return fmt.Sprintf("%s + unknown for %d", FormatUSD(&known), t.Unknown)
	}
}

// Cost totals the scenarios' costs.
func (r Run) Cost() CostTotal {
	var t CostTotal
	for i := range r.Scenarios {
		t.Add(r.Scenarios[i].Cost)
	}
	return t
}
