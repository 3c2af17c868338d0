package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
)

// CaseOptions are the flags `run` and `bench` share for task files with vars:, a matrix:
// or a dataset:, and for what a run may cost.
type CaseOptions struct {
	// Vars are KEY=VALUE pairs (--var); VarsFile is a YAML or JSON mapping (--vars). The
	// command line wins over the file, and both over the task files.
	Vars     cli.StringSlice
	VarsFile string
	// Limit, Sample and Seed pick part of each task's cases.
	Limit, Sample int
	Seed          uint64
	// Prices is a file of token prices over the shipped table.
	Prices string
	// BudgetUSD refuses every model call, and starts no more scenarios, once the run has
	// cost this much (0: no limit).
	BudgetUSD float64

	vars map[string]any // Vars and VarsFile, read by check
}

func (o *CaseOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "var", Destination: &o.Vars, Usage: "set a task variable, `KEY=VALUE` (repeatable; wins over --vars and the task files)"},
		&cli.StringFlag{Name: "vars", Destination: &o.VarsFile, Usage: "set task variables from a YAML or JSON mapping in `FILE`"},
		&cli.IntFlag{Name: "limit", Destination: &o.Limit, Usage: "run the first `N` cases of each task with a matrix: or dataset:", DefaultText: "all"},
		&cli.IntFlag{Name: "sample", Destination: &o.Sample, Usage: "run `N` cases of each task with a matrix: or dataset:, picked at random (--seed)", DefaultText: "all"},
		&cli.Uint64Flag{Name: "seed", Destination: &o.Seed, Usage: "`S` seeds --sample, so the same seed picks the same cases"},
		&cli.StringFlag{Name: "prices", Destination: &o.Prices, Usage: "token prices from `FILE` (YAML or JSON) over the table runner ships"},
		&cli.Float64Flag{Name: "budget-usd", Destination: &o.BudgetUSD, Usage: "once the run has cost `USD`, refuse every further model request (running scenarios stop, stop reason budget) and start no more scenarios"},
	}
}

// check reads the variables and reports the first value that cannot work.
func (o *CaseOptions) check(verb string) error {
	if o.Limit < 0 || o.Sample < 0 || o.BudgetUSD < 0 {
		return usageError("%s: --limit, --sample and --budget-usd must not be negative", verb)
	}
	o.vars = nil
	if o.VarsFile != "" {
		m, err := session.ReadVars(o.VarsFile)
		var notMapping *session.MappingError
		switch {
		case errors.As(err, &notMapping):
			return usageError("%s: --vars %s: want a mapping of variable names to values: %s", verb, o.VarsFile, notMapping.Detail)
		case err != nil:
			return usageError("%s: --vars: %v", verb, err)
		}
		o.vars = m
	}
	for _, kv := range o.Vars.Value() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError("%s: --var %q: want KEY=VALUE", verb, kv)
		}
		if o.vars == nil {
			o.vars = map[string]any{}
		}
		o.vars[k] = v
	}
	return nil
}

// apply puts the options into the runtime's.
func (o *CaseOptions) apply(so *session.Options) {
	so.Cases = session.Cases{Vars: o.vars, Limit: o.Limit, Sample: o.Sample, Seed: o.Seed}
	so.Prices = o.Prices
}

// budgetNote is the console's line about a spent budget.
func budgetNote(usd float64) string {
	return fmt.Sprintf("the --budget-usd of $%.2f was spent: runner refused every model request past it (those scenarios stopped, stop reason budget) and started no more", usd)
}
