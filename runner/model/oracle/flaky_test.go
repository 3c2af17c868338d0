package oracle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/oracle"
)

// A seeded oracle gives up close to its share of runs, the same runs every time, and a
// different seed picks other runs.
func TestFlakyGivesUpASeededShare(t *testing.T) {
	f, err := oracle.ParseFlaky("fail=0.3,seed=1")
	assert.NilError(t, err)
	assert.Equal(t, f, oracle.Flaky{Fail: 0.3, Seed: 1})
	other := oracle.Flaky{Fail: 0.3, Seed: 2}
	const n = 4000
	gaveUp, differ := 0, 0
	for i := range n {
		name := fmt.Sprintf("task-%d", i%40)
		a := f.GivesUp(name, i/40)
		assert.Equal(t, a, f.GivesUp(name, i/40)) // deterministic
		if a {
			gaveUp++
		}
		if a != other.GivesUp(name, i/40) {
			differ++
		}
	}
	share := float64(gaveUp) / n
	assert.Assert(t, share > 0.27 && share < 0.33, "gave up %.3f of runs, want about 0.3", share)
	assert.Assert(t, differ > n/4, "seeds 1 and 2 differ on only %d of %d runs", differ, n)
	assert.Assert(t, !oracle.Flaky{Fail: 0}.GivesUp("x", 0))
	assert.Assert(t, oracle.Flaky{Fail: 1}.GivesUp("x", 0))
}

func TestGivenUpCallsTaskCompleteAtOnce(t *testing.T) {
	m := oracle.GiveUp("oracle:fail=1")
	assert.Equal(t, m.Name(), "oracle:fail=1")
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}}
	resp, err := m.Step(context.Background(), req)
	assert.NilError(t, err)
	assert.Equal(t, len(resp.ToolCalls), 1)
	assert.Equal(t, resp.ToolCalls[0].Name, "task_complete")
	var args struct{ Summary string }
	assert.NilError(t, json.Unmarshal(resp.ToolCalls[0].Arguments, &args))
	assert.Equal(t, args.Summary, "The oracle gave up on this run (oracle:fail=1).")
}
