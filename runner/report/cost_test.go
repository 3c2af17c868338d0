package report

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/result"
)

// costRun is fixedRun with a priced model, a judge, and one model of unknown price.
func costRun() result.Run {
	run := fixedRun()
	usd, judge := 0.0123, 0.002
	for i := range run.Scenarios {
		run.Scenarios[i].Cost = &result.Cost{USD: &usd, Prices: "2025-09-01"}
	}
	run.Scenarios[0].Cost.JudgeUSD = &judge
	run.Scenarios[1].Cost = &result.Cost{Prices: "2025-09-01"} // unknown
	return run
}

func TestReportsShowCostWithThePriceDateAndUnknownNeverZero(t *testing.T) {
	run := costRun()
	n := len(run.Scenarios)
	want := result.FormatUSD(ptrTo(0.0123 * float64(n-1)))

	var console bytes.Buffer
	assert.NilError(t, replay(NewConsole(&console, ConsoleOptions{}), run))
	assert.Assert(t, strings.Contains(console.String(), "cost: "+want+" + unknown for 1, judges $0.0020 (prices of 2025-09-01)"), console.String())

	var js bytes.Buffer
	assert.NilError(t, WriteJSON(&js, run))
	var doc struct {
		Totals struct {
			Cost result.CostTotal `json:"cost"`
		} `json:"totals"`
	}
	assert.NilError(t, json.Unmarshal(js.Bytes(), &doc))
	assert.Equal(t, doc.Totals.Cost.Unknown, 1)
	assert.Equal(t, doc.Totals.Cost.Prices, "2025-09-01")

	var junit bytes.Buffer
	assert.NilError(t, WriteJUnit(&junit, run, JUnitOptions{}))
	assert.Assert(t, strings.Contains(junit.String(), `<property name="cost_usd" value="`+strconv.FormatFloat(run.Cost().USD, 'f', -1, 64)+`"></property>`), junit.String())
	assert.Assert(t, strings.Contains(junit.String(), `<property name="cost_unknown_scenarios" value="1"></property>`))
	assert.Assert(t, strings.Contains(junit.String(), "cost: unknown (prices of 2025-09-01)"))
	assert.Assert(t, strings.Contains(junit.String(), "cost: $0.01, judge $0.0020 (prices of 2025-09-01)"))

	var summary bytes.Buffer
	assert.NilError(t, WriteSummary(&summary, run, "", ""))
	assert.Assert(t, strings.Contains(summary.String(), "Cost: **"+cell(want, 0)+" + unknown for 1"), summary.String())
}

func ptrTo(f float64) *float64 { return &f }
