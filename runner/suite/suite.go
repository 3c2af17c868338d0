// Package suite runs many scenarios in parallel and collects their results in a stable
// order, so reports are reproducible and runs on several machines can be merged.
package suite

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/version"
)

// Options configure a suite run.
type Options struct {
	Scenario scenario.Options
	// Parallel is how many scenarios run at once (at least 1).
	Parallel int
	// Repeat runs each task this many times (at least 1).
	Repeat int
	// OnStart and OnDone observe progress; they may be called concurrently. OnStart gets
	// a scenario with only its name, file and repeat number set.
	OnStart func(result.Scenario)
	OnDone  func(result.Scenario)
	// Select, when set, keeps only the scenarios it returns true for (a shard); the others
	// are left out of the run entirely. Repeat is the run's number from 1 (as in
	// result.Scenario), index the scenario's place in the whole run.
	Select func(t *task.Task, repeat, index int) bool
	// Prior, when set, may return a finished result to report instead of running the
	// scenario again (--resume, --rerun-failed). It is reported through OnDone as well.
	Prior func(t *task.Task, repeat, index int) (result.Scenario, bool)
	// Admit, when set, is asked before each scenario starts; false leaves it not run
	// (status error, stop reason not_run): how runner bench stops at a budget.
	Admit func() bool
	// Group, when set, runs the scenarios in groups, lowest value first, each group's
	// scenarios all finished before the next group starts; results keep the usual order.
	// runner bench groups by the options that make Ollama reload a model (num_ctx), so
	// the model loads once per group rather than whenever two neighbours differ.
	Group func(t *task.Task) int
	// BeforeStart, when set, is called in the scenario's worker just before it starts
	// (after Admit), outside its time: runner bench has the model loaded there with the
	// scenario's options, so that no scenario's time holds a load.
	BeforeStart func(ctx context.Context, t *task.Task)
}

// Run runs every task Repeat times. When ctx is cancelled (Ctrl-C, SIGTERM) the running
// scenarios stop as interrupted and the ones not yet started are reported as interrupted
// errors, so every report still lists every scenario.
func Run(ctx context.Context, tasks []*task.Task, opts Options) result.Run {
	now := opts.Scenario.Now
	if now == nil {
		now = time.Now
	}
	opts.Scenario.Repeats = max(opts.Repeat, 1)
	p := plan(tasks, opts)
	run := result.Run{Started: now(), Scenarios: make([]result.Scenario, len(p.jobs)+len(p.reused))}
	for i, j := range p.reused {
		run.Scenarios[j.slot] = p.prior[i]
		if opts.OnDone != nil {
			opts.OnDone(p.prior[i])
		}
	}
	queue := make(chan job)
	var wg, inflight sync.WaitGroup
	for w := 0; w < min(max(opts.Parallel, 1), len(p.jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				s := runJob(ctx, j, now, opts)
				run.Scenarios[j.slot] = s
				if opts.OnDone != nil {
					opts.OnDone(s)
				}
				inflight.Done()
			}
		}()
	}
	for i, j := range p.jobs {
		if opts.Group != nil && i > 0 && opts.Group(j.t) != opts.Group(p.jobs[i-1].t) {
			inflight.Wait() // the previous group is done: no request of it meets this one's
		}
		inflight.Add(1)
		queue <- j
	}
	close(queue)
	wg.Wait()
	run.Duration = result.Millis(now().Sub(run.Started))
	return run
}

// job is one scenario of the run: a task and its repeat.
type job struct {
	t      *task.Task
	repeat int
	index  int // in the whole run
	slot   int // in run.Scenarios
}

// jobPlan is what a run does: the jobs to run, in order, and those whose earlier result
// is reported instead (prior[i] is reused[i]'s).
type jobPlan struct {
	jobs, reused []job
	prior        []result.Scenario
}

// plan lists the run's jobs: every task Repeat times, less those Select leaves out,
// those Prior answers set apart; grouped (stably) when opts.Group is set.
func plan(tasks []*task.Task, opts Options) jobPlan {
	var p jobPlan
	for rep := 1; rep <= opts.Scenario.Repeats; rep++ {
		for i, t := range tasks {
			j := job{t: t, repeat: rep, index: (rep-1)*len(tasks) + i, slot: len(p.jobs) + len(p.reused)}
			if opts.Select != nil && !opts.Select(t, rep, j.index) {
				continue
			}
			if opts.Prior != nil {
				if s, ok := opts.Prior(t, rep, j.index); ok {
					s.Index = j.index
					p.reused, p.prior = append(p.reused, j), append(p.prior, s)
					continue
				}
			}
			p.jobs = append(p.jobs, j)
		}
	}
	if opts.Group != nil {
		sort.SliceStable(p.jobs, func(a, b int) bool { return opts.Group(p.jobs[a].t) < opts.Group(p.jobs[b].t) })
	}
	return p
}

// runJob runs one scenario, or reports it unstarted when the run was interrupted or
// Admit refuses it.
func runJob(ctx context.Context, j job, now func() time.Time, opts Options) result.Scenario {
	switch {
	case ctx.Err() != nil:
		return unstarted(j.t, j.repeat, j.index, now(), opts.Scenario, result.StopInterrupt, "interrupted before it started")
	case opts.Admit != nil && !opts.Admit():
		return unstarted(j.t, j.repeat, j.index, now(), opts.Scenario, result.StopNotRun, "not run: the budget was spent")
	}
	if opts.BeforeStart != nil {
		opts.BeforeStart(ctx, j.t)
	}
	if opts.OnStart != nil {
		opts.OnStart(result.Scenario{Name: j.t.Name, File: j.t.Path, Repeat: j.repeat, Repeats: opts.Scenario.Repeats, Index: j.index})
	}
	sopts := opts.Scenario
	sopts.Index = j.index
	return scenario.Run(ctx, j.t, j.repeat, sopts)
}

// Count is how many scenarios Run will report for tasks, repeat and sel (nil: all).
func Count(tasks []*task.Task, repeat int, sel func(t *task.Task, repeat, index int) bool) int {
	n := 0
	for rep := 1; rep <= max(repeat, 1); rep++ {
		for i, t := range tasks {
			if sel == nil || sel(t, rep, (rep-1)*len(tasks)+i) {
				n++
			}
		}
	}
	return n
}

// unstarted is the result of a scenario that never started.
func unstarted(t *task.Task, repeat, index int, at time.Time, opts scenario.Options, stop result.StopReason, reason string) result.Scenario {
	s := result.Scenario{
		Name: t.Name, File: t.Path, Tags: t.Tags, Repeat: repeat, Repeats: opts.Repeats, Index: index, Started: at,
		RunnerVersion: version.String(), Status: result.Errored, Stop: stop, Reason: reason,
	}
	scenario.SetCase(t, &s)
	if opts.ModelName != nil {
		s.Model = opts.ModelName(t)
	}
	return s
}
