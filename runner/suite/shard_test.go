package suite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/suite"
	"github.com/agentrunner/runner/runner/task"
)

// Shards are disjoint and cover the suite for every n from 1 to 7, sizes differ by at
// most one, and the partition ignores the order the tasks were given in.
func TestShardsDisjointAndCovering(t *testing.T) {
	ts := tasks(23)
	const repeat = 2
	for n := 1; n <= 7; n++ {
		owner := map[int]int{} // index -> shard
		sizes := make([]int, n)
		for i := 1; i <= n; i++ {
			sel := suite.Shard{Index: i, Count: n}.Selector(ts, repeat)
			for rep := 0; rep < repeat; rep++ {
				for k, tk := range ts {
					idx := rep*len(ts) + k
					if !sel(tk, rep, idx) {
						continue
					}
					prev, dup := owner[idx]
					assert.Assert(t, !dup, "n=%d: scenario %d in shards %d and %d", n, idx, prev, i)
					owner[idx] = i
					sizes[i-1]++
				}
			}
			assert.Equal(t, suite.Count(ts, repeat, sel), sizes[i-1])
		}
		assert.Equal(t, len(owner), len(ts)*repeat, "n=%d: not every scenario has a shard", n)
		lo, hi := sizes[0], sizes[0]
		for _, s := range sizes {
			lo, hi = min(lo, s), max(hi, s)
		}
		assert.Assert(t, hi-lo <= 1, "n=%d: unbalanced shards %v", n, sizes)
	}
}

func TestPartitionIsStable(t *testing.T) {
	ids := []suite.Identity{
		{File: "scenarios/a.yaml", Name: "a", Repeat: 1}, {File: "scenarios/b.yaml", Name: "b", Repeat: 1},
		{File: "scenarios/c.yaml", Name: "c", Repeat: 1}, {File: "scenarios/a.yaml", Name: "a", Repeat: 2},
	}
	got := suite.Partition(ids, 3)
	// Reversed input gives each identity the same shard.
	rev := []suite.Identity{ids[3], ids[2], ids[1], ids[0]}
	back := suite.Partition(rev, 3)
	for i := range ids {
		assert.Equal(t, got[i], back[len(ids)-1-i])
	}
	// Pinned values: FNV-1a is fixed, so this holds on every machine and Go version.
	// A change here reshuffles every user's CI matrix; change it only on purpose.
	assert.DeepEqual(t, got, []int{1, 0, 0, 2})
}

func TestParseShard(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		in   string
		env  map[string]string
		want suite.Shard
		err  string
	}{
		{in: "1/1", want: suite.Shard{Index: 1, Count: 1}},
		{in: "3/4", want: suite.Shard{Index: 3, Count: 4}},
		{in: "0/4", err: "want I/N with 1 <= I <= N"},
		{in: "5/4", err: "want I/N"},
		{in: "2", err: "want I/N"},
		{in: "a/b", err: "want I/N"},
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "3"}, want: suite.Shard{Index: 4, Count: 4}},
		{in: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "RUNNER_SHARD_COUNT": "2"}, want: suite.Shard{Index: 1, Count: 2}},
		{in: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "0"}, err: "RUNNER_SHARD_COUNT"},
		{in: "auto/4", err: "JOB_COMPLETION_INDEX is not set"},
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "4"}, err: "want I/N"},
	} {
		got, err := suite.ParseShard(tc.in, env(tc.env))
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		assert.NilError(t, err, tc.in)
		assert.Equal(t, got, tc.want)
	}
}

// Run with a shard runs only its scenarios and keeps their whole-run index; Prior results
// are reported in place without running.
func TestRunSelectAndPrior(t *testing.T) {
	ts := tasks(5)
	g := &gauge{}
	opts := options(t, g, func(*task.Task) time.Duration { return time.Millisecond })
	opts.Parallel, opts.Repeat = 2, 2
	opts.Select = func(_ *task.Task, _, index int) bool { return index%2 == 1 }
	opts.Prior = func(tk *task.Task, rep, index int) (result.Scenario, bool) {
		if index == 3 {
			return result.Scenario{Name: tk.Name, File: tk.Path, Repeat: rep, Status: result.Failed, Reason: "from before"}, true
		}
		return result.Scenario{}, false
	}
	run := suite.Run(context.Background(), ts, opts)
	var got []string
	for _, s := range run.Scenarios {
		got = append(got, fmt.Sprintf("%d %s#%d %s", s.Index, s.Name, s.Repeat, s.Status))
	}
	assert.DeepEqual(t, got, []string{
		"1 task-1#1 passed", "3 task-3#1 failed", "5 task-0#2 passed", "7 task-2#2 passed", "9 task-4#2 passed",
	})
	assert.Equal(t, int(g.total.Load()), 4, "the prior result ran again")
}
