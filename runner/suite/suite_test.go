package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/suite"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

var testCatalog = catalog.New(catalog.Options{})

// gauge counts model steps in flight across every scenario of a run.
type gauge struct {
	now, peak atomic.Int32
	total     atomic.Int32
}

func (g *gauge) enter() {
	n := g.now.Add(1)
	g.total.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

// sleepyModel calls task_complete after sleeping; a zero-length sleep blocks until the
// context ends. started is closed at the first step.
type sleepyModel struct {
	delay   time.Duration
	g       *gauge
	started func()
}

func (m *sleepyModel) Name() string { return "sleepy" }

func (m *sleepyModel) Step(ctx context.Context, _ *model.Request) (*model.Response, error) {
	m.g.enter()
	defer m.g.leave()
	if m.started != nil {
		m.started()
	}
	var wait <-chan time.Time
	if m.delay > 0 {
		wait = time.After(m.delay)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-wait:
	}
	return &model.Response{ToolCalls: []model.ToolCall{{
		Name: "task_complete", Arguments: json.RawMessage(`{"summary":"ok"}`),
	}}}, nil
}

func tasks(n int) []*task.Task {
	out := make([]*task.Task, n)
	for i := range out {
		out[i] = &task.Task{
			Name: fmt.Sprintf("task-%d", i), Path: fmt.Sprintf("t%d.yaml", i), Prompt: "p",
			Tools: []string{"task_complete"}, Approval: task.Approval{Mode: task.ModeAuto},
			MaxSteps: 3, Timeout: time.Minute,
			Assert: []task.Assertion{{Kind: task.KindCompleted, Spec: true}},
		}
	}
	return out
}

// options gives each task a model whose step sleeps delay(task).
func options(t *testing.T, g *gauge, delay func(*task.Task) time.Duration) suite.Options {
	return suite.Options{Scenario: scenario.Options{
		OutDir: t.TempDir(), Catalog: testCatalog, WorkspaceParent: t.TempDir(),
		Sandbox: func(string) (tools.CommandWrapper, error) { return nil, nil },
		Model: func(tk *task.Task, _ int) (model.Model, error) {
			return &sleepyModel{delay: delay(tk), g: g}, nil
		},
	}}
}

func TestResultsInTaskOrder(t *testing.T) {
	ts := tasks(4)
	g := &gauge{}
	// Earlier tasks sleep longer, so they finish last.
	opts := options(t, g, func(tk *task.Task) time.Duration {
		for i, x := range ts {
			if x == tk {
				return time.Duration(len(ts)-i) * 40 * time.Millisecond
			}
		}
		return time.Millisecond
	})
	opts.Parallel, opts.Repeat = 8, 2
	var mu sync.Mutex
	var finished []string
	opts.OnDone = func(s result.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		finished = append(finished, fmt.Sprintf("%s#%d", s.Name, s.Repeat))
	}
	run := suite.Run(context.Background(), ts, opts)

	var got []string
	for _, s := range run.Scenarios {
		assert.Equal(t, s.Status, result.Passed, "%s: %s", s.Name, s.Reason)
		got = append(got, fmt.Sprintf("%s#%d", s.Name, s.Repeat))
	}
	assert.DeepEqual(t, got, []string{
		"task-0#1", "task-1#1", "task-2#1", "task-3#1",
		"task-0#2", "task-1#2", "task-2#2", "task-3#2",
	})
	assert.Assert(t, finished[0] != "task-0#1", "the test needs finish order to differ: %v", finished)
	assert.Assert(t, run.Duration > 0)
	p, f, e := run.Counts()
	assert.Equal(t, [3]int{p, f, e}, [3]int{8, 0, 0})
}

func TestParallelBoundsConcurrency(t *testing.T) {
	for _, parallel := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(parallel), func(t *testing.T) {
			g := &gauge{}
			opts := options(t, g, func(*task.Task) time.Duration { return 100 * time.Millisecond })
			opts.Parallel = parallel
			run := suite.Run(context.Background(), tasks(6), opts)
			assert.Equal(t, len(run.Scenarios), 6)
			assert.Equal(t, g.total.Load(), int32(6))
			assert.Equal(t, g.peak.Load(), int32(parallel), "at most and, with enough work, exactly %d at once", parallel)
		})
	}
}

func TestParallelDefaultsToOne(t *testing.T) {
	g := &gauge{}
	opts := options(t, g, func(*task.Task) time.Duration { return 30 * time.Millisecond })
	opts.Parallel, opts.Repeat = 0, 0
	run := suite.Run(context.Background(), tasks(3), opts)
	assert.Equal(t, len(run.Scenarios), 3, "repeat 0 means once")
	assert.Equal(t, g.peak.Load(), int32(1))
}

func TestCancelledContext(t *testing.T) {
	ts := tasks(4)
	g := &gauge{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	opts := suite.Options{Parallel: 2, Scenario: scenario.Options{
		OutDir: t.TempDir(), Catalog: testCatalog, WorkspaceParent: t.TempDir(),
		Sandbox: func(string) (tools.CommandWrapper, error) { return nil, nil },
		Model: func(tk *task.Task, _ int) (model.Model, error) {
			// Both workers block in their first scenario; the first step cancels the run
			// once both are in flight.
			return &sleepyModel{g: g, started: func() {
				if g.total.Load() == 2 {
					once.Do(cancel)
				}
			}}, nil
		},
	}}
	var mu sync.Mutex
	starts, dones := map[string]int{}, map[string]int{}
	opts.OnStart = func(s result.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, s.Status, result.Status(""), "OnStart sees a scenario that has not run")
		starts[s.Name]++
	}
	opts.OnDone = func(s result.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		dones[s.Name]++
	}
	done := make(chan result.Run)
	go func() { done <- suite.Run(ctx, ts, opts) }()
	var run result.Run
	select {
	case run = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the suite did not stop after cancellation")
	}

	assert.Equal(t, len(run.Scenarios), 4)
	for i, s := range run.Scenarios {
		assert.Equal(t, s.Name, ts[i].Name)
		assert.Equal(t, s.File, ts[i].Path)
		assert.Equal(t, s.Status, result.Errored)
		assert.Equal(t, s.Stop, result.StopInterrupt)
		if i < 2 {
			assert.Equal(t, s.Reason, "interrupted", "a running scenario ends interrupted")
		} else {
			assert.Equal(t, s.Reason, "interrupted before it started")
			assert.Assert(t, !s.Started.IsZero())
		}
	}
	assert.DeepEqual(t, starts, map[string]int{"task-0": 1, "task-1": 1})
	assert.DeepEqual(t, dones, map[string]int{"task-0": 1, "task-1": 1, "task-2": 1, "task-3": 1})
	assert.Equal(t, g.total.Load(), int32(2), "no scenario starts after the cancellation")
}

func TestCallbacksOncePerScenario(t *testing.T) {
	g := &gauge{}
	opts := options(t, g, func(*task.Task) time.Duration { return time.Millisecond })
	opts.Parallel, opts.Repeat = 3, 3
	var mu sync.Mutex
	var starts, dones []string
	opts.OnStart = func(s result.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		starts = append(starts, fmt.Sprintf("%s#%d", s.Name, s.Repeat))
	}
	opts.OnDone = func(s result.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, s.Status, result.Passed, s.Reason)
		dones = append(dones, fmt.Sprintf("%s#%d", s.Name, s.Repeat))
	}
	suite.Run(context.Background(), tasks(2), opts)
	want := []string{"task-0#1", "task-0#2", "task-0#3", "task-1#1", "task-1#2", "task-1#3"}
	sort.Strings(starts)
	sort.Strings(dones)
	assert.DeepEqual(t, starts, want)
	assert.DeepEqual(t, dones, want)
}

func TestNoTasks(t *testing.T) {
	run := suite.Run(context.Background(), nil, options(t, &gauge{}, func(*task.Task) time.Duration { return 0 }))
	assert.Equal(t, len(run.Scenarios), 0)
}

// TestGroupsRunApart: with Group, scenarios run group by group (lowest first), no two
// groups' scenarios at once, and the results keep the usual order (issue 17, 2.5: tasks
// with different num_ctx made Ollama reload the model between neighbours).
func TestGroupsRunApart(t *testing.T) {
	ts := tasks(4)
	ts[0].ModelOptions.NumCtx, ts[2].ModelOptions.NumCtx = 2048, 2048
	g := &gauge{}
	var mu sync.Mutex
	var started []string
	var active = map[int]int{} // group -> scenarios running
	opts := options(t, g, func(*task.Task) time.Duration { return 20 * time.Millisecond })
	opts.Parallel, opts.Repeat = 3, 2
	opts.Group = func(tk *task.Task) int { return tk.ModelOptions.NumCtx }
	opts.OnStart = func(s result.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		started = append(started, fmt.Sprintf("%s#%d", s.Name, s.Repeat))
		for _, tk := range ts {
			if tk.Name == s.Name {
				active[tk.ModelOptions.NumCtx]++
				assert.Check(t, len(active) == 1 || active[0]+active[2048] == active[tk.ModelOptions.NumCtx],
					"%s started while another group ran: %v", s.Name, active)
			}
		}
	}
	opts.OnDone = func(s result.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		for _, tk := range ts {
			if tk.Name == s.Name {
				if active[tk.ModelOptions.NumCtx]--; active[tk.ModelOptions.NumCtx] == 0 {
					delete(active, tk.ModelOptions.NumCtx)
				}
			}
		}
	}
	run := suite.Run(context.Background(), ts, opts)
	sort.Strings(started[:4])
	sort.Strings(started[4:])
	assert.DeepEqual(t, started, []string{"task-1#1", "task-1#2", "task-3#1", "task-3#2", "task-0#1", "task-0#2", "task-2#1", "task-2#2"})
	var got []string
	for _, s := range run.Scenarios {
		got = append(got, fmt.Sprintf("%s#%d", s.Name, s.Repeat))
	}
	assert.DeepEqual(t, got, []string{"task-0#1", "task-1#1", "task-2#1", "task-3#1", "task-0#2", "task-1#2", "task-2#2", "task-3#2"})
}
