package report

import (
	"fmt"

	"github.com/agentrunner/runner/runner/result"
)

// costLine is one scenario's cost for people: the agent's, and the judges' apart.
func costLine(c *result.Cost) string {
	line := result.FormatUSD(c.USD)
	switch {
	case c.JudgeUnknown:
		line += ", judge unknown"
	case c.JudgeUSD != nil:
		line += ", judge " + result.FormatUSD(c.JudgeUSD)
	}
	return line
}

// totalLine is a run's cost for people, with the price table's date.
func totalLine(t result.CostTotal) string {
	line := t.String()
	if t.JudgeUSD > 0 || t.JudgeUnknown > 0 {
		judge := t.JudgeUSD
		line += ", judges " + result.FormatUSD(&judge)
		if t.JudgeUnknown > 0 {
			line += fmt.Sprintf(" + unknown for %d", t.JudgeUnknown)
		}
	}
	return line + " (prices of " + t.Prices + ")"
}
