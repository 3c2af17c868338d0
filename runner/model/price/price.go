// Package price knows what model calls cost: a table of token prices that ships with
// runner (dated in prices.yaml), overridable by a file, and the cost of a usage under it.
// Cost is usage times a price; reports only display it. A model the table does not know
// has an unknown cost, never 0; local providers cost 0 unless the table prices them.
package price

import (
	"bytes"
	_ "embed" // the shipped table
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/agentrunner/runner/runner/bounded"
)

//go:embed prices.yaml
var shipped []byte

// Price is what one model costs: US dollars per million tokens, and per hour of model time
// (for a local model on rented hardware).
type Price struct {
	Input  float64 `yaml:"input" json:"input"`
	Output float64 `yaml:"output" json:"output"`
	// CachedInput prices prompt tokens the provider served from its cache; nil means
	// they cost Input.
	CachedInput *float64 `yaml:"cached_input,omitempty" json:"cached_input,omitempty"`
	PerHour     float64  `yaml:"per_hour,omitempty" json:"per_hour,omitempty"`
}

// Usage is what a price applies to.
type Usage struct {
	PromptTokens, CompletionTokens, CachedPromptTokens int
	ModelTime                                          time.Duration
}

// Cost is the price of a usage in US dollars.
func (p Price) Cost(u Usage) float64 {
	// Counts come from a model server's answer: a negative one must not lower a budget.
	u.PromptTokens, u.CompletionTokens = max(u.PromptTokens, 0), max(u.CompletionTokens, 0)
	cached := min(max(u.CachedPromptTokens, 0), u.PromptTokens)
	cachedPrice := p.Input
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	usd := (float64(u.PromptTokens-cached)*p.Input + float64(cached)*cachedPrice + float64(u.CompletionTokens)*p.Output) / 1e6
	return usd + u.ModelTime.Hours()*p.PerHour
}

// Table is a set of prices by model name (PROVIDER:MODEL) and the date they were taken.
type Table struct {
	// Date is when the prices were taken; Source names the files they came from.
	Date   string
	Source string
	models map[string]Price
}

// file is the format of prices.yaml and of a --prices file.
type file struct {
	Date   string           `yaml:"date"`
	Models map[string]Price `yaml:"models"`
}

// local providers run on the user's own machine: free unless priced.
var local = map[string]bool{"ollama": true, "oracle": true}

// aliases price one provider's models as another's.
var aliases = map[string]string{"openai-responses": "openai"}

// Default is the shipped table.
func Default() *Table {
	t := shippedTable()
	return &Table{Date: t.Date, Source: t.Source, models: maps.Clone(t.models)} // Load adds to it
}

// shippedTable parses prices.yaml once: every scenario without a table of its own asks.
var shippedTable = sync.OnceValue(func() *Table {
	t, err := parse("prices.yaml (shipped)", shipped)
	if err != nil {
		panic("price: the shipped table does not parse: " + err.Error())
	}
	return t
})

// ErrBadFile is the kind of every problem with a prices file.
var ErrBadFile = errors.New("bad prices file")

// Load returns the shipped table with the prices of a file (YAML or JSON, the shipped
// format) over it. Its date, when given, is the table's date.
func Load(path string) (*Table, error) {
	data, err := bounded.ReadFile(path, bounded.Settings)
	if err == nil {
		err = bounded.YAML(path, data, bounded.Settings)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadFile, err)
	}
	over, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	t := Default()
	for name, p := range over.models {
		t.models[name] = p
	}
	t.Source = path + " over " + t.Source
	if over.Date != "" {
		t.Date = over.Date
	}
	return t, nil
}

func parse(name string, data []byte) (*Table, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField())
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s:%s", ErrBadFile, name, strings.TrimSpace(yaml.FormatError(err, false, false)))
	}
	t := &Table{Date: f.Date, Source: name, models: map[string]Price{}}
	var problems []string
	for model, p := range f.Models {
		provider, _, ok := strings.Cut(model, ":")
		switch {
		case !ok || provider == "":
			problems = append(problems, fmt.Sprintf("models.%s: name the model as PROVIDER:MODEL (openai:gpt-4o)", model))
		case p.Input < 0 || p.Output < 0 || p.PerHour < 0 || (p.CachedInput != nil && *p.CachedInput < 0):
			problems = append(problems, fmt.Sprintf("models.%s: prices must not be negative", model))
		}
		t.models[model] = p
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%w: %s: %s", ErrBadFile, name, strings.Join(problems, "; "))
	}
	return t, nil
}

// Lookup finds a model's price: its own entry, else the entry it is a dated snapshot of
// (gpt-4o-mini-2024-07-18 costs what gpt-4o-mini costs), else 0 for a local provider. ok
// is false when the cost is unknown.
func (t *Table) Lookup(name string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	provider, modelName, _ := strings.Cut(name, ":")
	candidates := []string{provider}
	if alias, ok := aliases[provider]; ok {
		candidates = append(candidates, alias)
	}
	for _, prov := range candidates {
		if p, ok := t.models[prov+":"+modelName]; ok {
			return p, true
		}
		best, found := "", false
		for key := range t.models {
			kp, km, _ := strings.Cut(key, ":")
			if kp == prov && snapshotOf(modelName, km) && len(km) > len(best) {
				best, found = km, true
			}
		}
		if found {
			return t.models[prov+":"+best], true
		}
	}
	if local[provider] {
		return Price{}, true
	}
	return Price{}, false
}

// snapshotOf reports whether name is base plus a snapshot suffix: a date or version made of
// digits and dashes (-2024-07-18, -20250514), or -latest. Any other suffix (-mini,
// -preview) may be another model at another price.
func snapshotOf(name, base string) bool {
	suffix, ok := strings.CutPrefix(name, base+"-")
	if !ok || suffix == "" {
		return false
	}
	if suffix == "latest" {
		return true
	}
	return strings.Trim(suffix, "0123456789-") == ""
}
