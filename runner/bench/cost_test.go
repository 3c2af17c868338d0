package bench

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/result"
)

// TestMarkdownShowsEachModelsCost: what each model's cells cost, unknown never 0, with
// the price table's date; no line when nothing has a price.
func TestMarkdownShowsEachModelsCost(t *testing.T) {
	var b strings.Builder
	writeCosts(&b, []ModelResult{
		{Name: "openai:gpt-4o-mini", Summary: Stats{Cost: &result.CostTotal{USD: 0.25, Prices: "2025-09-01"}}},
		{Name: "acme:x", Summary: Stats{Cost: &result.CostTotal{Unknown: 3, Prices: "2025-09-01"}}},
	})
	assert.Equal(t, b.String(), "Cost: openai:gpt-4o-mini \\$0.25 · acme:x unknown (prices of 2025-09-01).\n\n")
	b.Reset()
	writeCosts(&b, []ModelResult{{Name: "ollama:m"}})
	assert.Equal(t, b.String(), "")
}
