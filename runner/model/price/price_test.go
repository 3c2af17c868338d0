package price

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestShippedTableIsDatedAndPricesKnownModels(t *testing.T) {
	tab := Default()
	assert.Assert(t, tab.Date != "")
	_, err := time.Parse("2006-01-02", tab.Date)
	assert.NilError(t, err, "the date is a day")
	p, ok := tab.Lookup("openai:gpt-4o-mini")
	assert.Assert(t, ok)
	assert.Equal(t, p.Input, 0.15)
	assert.Equal(t, p.Output, 0.60)
}

func TestLookup(t *testing.T) {
	tab := Default()
	for name, want := range map[string]float64{
		"openai:gpt-4o-mini-2024-07-18":      0.15, // a dated snapshot: the longest entry it extends
		"openai:gpt-4o-2024-08-06":           2.50,
		"openai-responses:gpt-4o-mini":       0.15, // the same models through the Responses API
		"anthropic:claude-sonnet-4-20250514": 3.00,
		"ollama:qwen3:4b":                    0, // local: free unless priced
		"oracle":                             0,
	} {
		p, ok := tab.Lookup(name)
		assert.Assert(t, ok, name)
		assert.Equal(t, p.Input, want, name)
	}
	for _, unknown := range []string{"openai:gpt-4omni", "mistral:large", "openai:gpt-4o-minix", "anthropic:", "gemini:gemini-2.5-flash-preview-05-20"} {
		_, ok := tab.Lookup(unknown)
		assert.Assert(t, !ok, "%s must be unknown, never 0", unknown)
	}
}

func TestCost(t *testing.T) {
	cached := 0.5
	p := Price{Input: 2, Output: 10, CachedInput: &cached}
	// 1,000 prompt tokens of which 400 cached, 200 completion tokens.
	got := p.Cost(Usage{PromptTokens: 1000, CachedPromptTokens: 400, CompletionTokens: 200})
	assert.Equal(t, got, (600*2+400*0.5+200*10)/1e6)
	// No cached price: cached tokens cost the input price; more cached than prompt is clamped.
	assert.Equal(t, Price{Input: 1}.Cost(Usage{PromptTokens: 10, CachedPromptTokens: 50}), 10/1e6)
	// A server that reports negative counts cannot earn a run credit against its budget.
	assert.Equal(t, Price{Input: 1, Output: 1}.Cost(Usage{PromptTokens: -1e9, CompletionTokens: -5}), 0.0)
	// A rented GPU: per hour of model time.
	assert.Equal(t, Price{PerHour: 3}.Cost(Usage{ModelTime: 20 * time.Minute}), 1.0)
}

func TestLoadOverridesTheShippedTable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	assert.NilError(t, os.WriteFile(path, []byte(`{"date": "2026-11-01", "models": {"openai:gpt-4o-mini": {"input": 0.1, "output": 0.2}, "ollama:qwen3:4b": {"input": 0, "output": 0, "per_hour": 1.5}}}`), 0o644))
	tab, err := Load(path)
	assert.NilError(t, err)
	assert.Equal(t, tab.Date, "2026-11-01")
	p, _ := tab.Lookup("openai:gpt-4o-mini")
	assert.Equal(t, p.Input, 0.1)
	p, _ = tab.Lookup("ollama:qwen3:4b")
	assert.Equal(t, p.PerHour, 1.5)
	p, _ = tab.Lookup("openai:gpt-4o")
	assert.Equal(t, p.Input, 2.50, "models the file leaves out keep the shipped price")
}

func TestLoadProblemsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string][2]string{
		"typo.yaml":     {"models:\n  openai:gpt-4o: {inptu: 1}\n", `typo.yaml:[2:19] unknown field "inptu"`},
		"noprov.yaml":   {"models:\n  gpt-4o: {input: 1}\n", "models.gpt-4o: name the model as PROVIDER:MODEL"},
		"negative.yaml": {"models:\n  openai:x: {input: -1}\n", "models.openai:x: prices must not be negative"},
		"deep.yaml":     {"models: " + strings.Repeat("[", 60000), "deep.yaml:1:72: models: nested more than 64 levels deep"},
	} {
		path := filepath.Join(dir, name)
		assert.NilError(t, os.WriteFile(path, []byte(c[0]), 0o644))
		_, err := Load(path)
		assert.Assert(t, errors.Is(err, ErrBadFile), name)
		assert.ErrorContains(t, err, c[1])
	}
	_, err := Load(filepath.Join(dir, "missing.yaml"))
	assert.Assert(t, errors.Is(err, ErrBadFile))
}
