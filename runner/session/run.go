package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/model/budget"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/suite"
	"github.com/agentrunner/runner/runner/task"
)

// RunOptions say which of the session's scenarios a run runs, and how.
type RunOptions struct {
	// Parallel scenarios run at once (Session.Parallel decides for ask mode); Repeat is
	// the runs of each.
	Parallel, Repeat int
	// Shard, when set, is the part of the suite this machine runs ("I/N", or "auto[/N]"
	// from the variables Getenv reads; nil: os.Getenv): suite.ParseShard.
	Shard  string
	Getenv func(string) string
	// Resume, when set, is an earlier run's output directory whose finished results (with
	// PassedOnly, its passed results only) are reported instead of run again.
	Resume     string
	PassedOnly bool
	// BudgetUSD is what the run may cost (0: no limit), kept at every model call
	// (runner/model/budget); every model's price must then be known.
	BudgetUSD float64
	// OnStart and OnDone observe each scenario as in suite.Options.
	OnStart, OnDone func(result.Scenario)
	// Notes receives what merge says of the resumed directory (nil: nowhere).
	Notes io.Writer
}

// ShardError: a --shard value does not parse (suite.ParseShard): a usage error.
type ShardError = suite.ShardError

// ResumeError: the run to resume cannot be read back.
type ResumeError struct{ Err error }

func (e *ResumeError) Error() string { return e.Err.Error() }
func (e *ResumeError) Unwrap() error { return e.Err }

// UnpricedError: a cost budget was asked for over a model whose price is unknown.
type UnpricedError struct{ Model, Prices string }

func (e *UnpricedError) Error() string {
	return fmt.Sprintf("the price of %s is unknown (price table of %s)", e.Model, e.Prices)
}

// Plan is one run of the session's scenarios, checked and ready to start.
type Plan struct {
	s      *Session
	o      RunOptions
	sel    func(t *task.Task, repeat, index int) bool
	prior  func(t *task.Task, repeat, index int) (result.Scenario, bool)
	budget *budget.Budget
}

// CheckShard reports a shard value that does not parse (a *ShardError).
func CheckShard(shard string, getenv func(string) string) error {
	_, err := suite.ParseShard(shard, orGetenv(getenv))
	return err
}

// Plan checks o against the session's tasks: the shard, the run resumed, the budget's
// prices. Its errors are a *ShardError, a *ResumeError or an *UnpricedError.
func (s *Session) Plan(o RunOptions) (*Plan, error) {
	p := &Plan{s: s, o: o}
	if o.Shard != "" {
		sh, err := suite.ParseShard(o.Shard, orGetenv(o.Getenv))
		if err != nil {
			return nil, err
		}
		p.sel = sh.Selector(s.Tasks, o.Repeat)
	}
	if o.Resume != "" {
		prev, err := merge.LoadDir(o.Resume, merge.Options{Notes: o.Notes})
		if err != nil {
			return nil, &ResumeError{Err: err}
		}
		done, failedToo := merge.Index(prev), o.PassedOnly
		p.prior = func(t *task.Task, repeat, _ int) (result.Scenario, bool) {
			r, ok := done[merge.Key{File: filepath.ToSlash(t.Path), Name: t.Name, Repeat: repeat}]
			if !ok || !merge.Done(r, failedToo) {
				return result.Scenario{}, false
			}
			return r, true
		}
	}
	if o.BudgetUSD > 0 {
		for _, t := range s.Tasks {
			if err := s.priced(s.Models.Name(t)); err != nil {
				return nil, err
			}
		}
		p.budget = budget.New(o.BudgetUSD, s.Prices)
	}
	if reuse := p.prior; reuse != nil && p.budget != nil {
		p.prior = func(t *task.Task, repeat, index int) (result.Scenario, bool) {
			r, ok := reuse(t, repeat, index)
			if ok {
				p.budget.AddPrior(r) // spent by the run that made it; the rest is charged call by call
			}
			return r, ok
		}
	}
	return p, nil
}

// priced reports a model whose price the session's table does not know.
func (s *Session) priced(model string) error {
	if _, ok := s.Prices.Lookup(model); !ok {
		return &UnpricedError{Model: model, Prices: s.Prices.Date}
	}
	return nil
}

// CheckPrices reports the first of models whose price is unknown (bench's --budget-usd).
func (s *Session) CheckPrices(models []string) error {
	for _, m := range models {
		if err := s.priced(m); err != nil {
			return err
		}
	}
	return nil
}

// Count is how many scenarios the run reports (every one of its shard, resumed or run).
func (p *Plan) Count() int { return suite.Count(p.s.Tasks, p.o.Repeat, p.sel) }

// Run runs the plan's scenarios with the session's scenario options (Session.Scenario),
// every model call of them checked against the budget, and returns the run, the build
// cache's warm-up in it.
func (p *Plan) Run(ctx context.Context) result.Run {
	so := p.s.Scenario(ctx, "")
	so.Budget = p.budget
	run := suite.Run(ctx, p.s.Tasks, suite.Options{
		Parallel: p.s.Parallel(p.o.Parallel), Repeat: p.o.Repeat,
		OnStart: p.o.OnStart, OnDone: p.o.OnDone, Select: p.sel, Prior: p.prior, Admit: p.budget.Admit,
		Scenario: so,
	})
	run.Warmup = p.s.Warmup
	return run
}

// BudgetSpent reports whether the budget kept a scenario from starting or refused a call.
func (p *Plan) BudgetSpent() bool { return p.budget.Refused() }

func orGetenv(getenv func(string) string) func(string) string {
	if getenv == nil {
		return os.Getenv
	}
	return getenv
}
