// Package suite runs many scenarios in parallel and collects their results in a stable
// order, so reports are reproducible and runs on several machines can be merged.
package suite

import (
	"context"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/task"
)

// Options configure a suite run.
type Options struct {
	Scenario scenario.Options
	// Parallel is how many scenarios run at once (at least 1).
	Parallel int
	// Repeat runs each task this many times (at least 1).
	Repeat int
	// OnStart and OnDone observe progress; they may be called concurrently. OnStart gets
	// a scenario with only its name, file and repeat index set.
	OnStart func(result.Scenario)
	OnDone  func(result.Scenario)
}

// Run runs every task Repeat times. When ctx is cancelled (Ctrl-C, SIGTERM) the running
// scenarios stop as interrupted and the ones not yet started are reported as interrupted
// errors, so every report still lists every scenario.
func Run(ctx context.Context, tasks []*task.Task, opts Options) result.Run {
	now := opts.Scenario.Now
	if now == nil {
		now = time.Now
	}
	parallel, repeat := max(opts.Parallel, 1), max(opts.Repeat, 1)
	type job struct {
		t      *task.Task
		repeat int
		index  int
	}
	jobs := make([]job, 0, len(tasks)*repeat)
	for rep := 0; rep < repeat; rep++ {
		for _, t := range tasks {
			jobs = append(jobs, job{t: t, repeat: rep, index: len(jobs)})
		}
	}
	run := result.Run{Started: now(), Scenarios: make([]result.Scenario, len(jobs))}
	queue := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < min(parallel, len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				var s result.Scenario
				if ctx.Err() != nil {
					s = interrupted(j.t, j.repeat, now())
				} else {
					if opts.OnStart != nil {
						opts.OnStart(result.Scenario{Name: j.t.Name, File: j.t.Path, Repeat: j.repeat})
					}
					s = scenario.Run(ctx, j.t, j.repeat, opts.Scenario)
				}
				run.Scenarios[j.index] = s
				if opts.OnDone != nil {
					opts.OnDone(s)
				}
			}
		}()
	}
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	wg.Wait()
	run.Duration = now().Sub(run.Started)
	return run
}

func interrupted(t *task.Task, repeat int, at time.Time) result.Scenario {
	return result.Scenario{
		Name: t.Name, File: t.Path, Tags: t.Tags, Repeat: repeat, Started: at,
		Status: result.Errored, Stop: result.StopInterrupt, Reason: "interrupted before it started",
	}
}
