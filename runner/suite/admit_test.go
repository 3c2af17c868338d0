package suite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/suite"
	"github.com/agentrunner/runner/runner/task"
)

// A spent budget leaves the remaining scenarios not run: still listed, with their model.
func TestAdmitLeavesTheRestNotRun(t *testing.T) {
	opts := options(t, &gauge{}, func(*task.Task) time.Duration { return time.Millisecond })
	opts.Parallel, opts.Repeat = 1, 2
	var started atomic.Int32
	opts.Admit = func() bool { return started.Add(1) <= 3 }
	opts.Scenario.ModelName = func(*task.Task) string { return "ollama:m" }
	run := suite.Run(context.Background(), tasks(2), opts)
	assert.Equal(t, len(run.Scenarios), 4)
	var stops []result.StopReason
	for _, s := range run.Scenarios {
		stops = append(stops, s.Stop)
		assert.Equal(t, s.Repeats, 2)
	}
	assert.DeepEqual(t, stops, []result.StopReason{result.StopCompleted, result.StopCompleted, result.StopCompleted, result.StopNotRun})
	assert.Equal(t, run.Scenarios[3].Status, result.Errored)
	assert.Equal(t, run.Scenarios[3].Model, "ollama:m", "a cell that did not run keeps its model")
	assert.Equal(t, run.Scenarios[3].DisplayName(), "task-1 #2")
}

// Every run of a repeated task is "name #k" in reports and "name.rk" as an output
// directory, k its Repeat, from 1;
// a model that cannot be opened keeps its name in the result.
func TestRepeatNamesAndModelName(t *testing.T) {
	opts := options(t, &gauge{}, func(*task.Task) time.Duration { return time.Millisecond })
	opts.Repeat = 3
	opts.Scenario.Model = func(*task.Task, int) (model.Model, error) { return nil, errors.New("not pulled") }
	opts.Scenario.ModelName = func(*task.Task) string { return "ollama:missing" }
	run := suite.Run(context.Background(), tasks(1), opts)
	var names []string
	for _, s := range run.Scenarios {
		names = append(names, s.DisplayName())
		assert.Equal(t, s.Model, "ollama:missing")
		assert.Equal(t, s.Status, result.Errored)
		_, err := os.Stat(filepath.Join(opts.Scenario.OutDir, fmt.Sprintf("task-0.r%d", s.Repeat), "result.json"))
		assert.NilError(t, err)
	}
	assert.DeepEqual(t, names, []string{"task-0 #1", "task-0 #2", "task-0 #3"})

	opts.Repeat = 1
	run = suite.Run(context.Background(), tasks(1), opts)
	assert.Equal(t, run.Scenarios[0].DisplayName(), "task-0")
}
