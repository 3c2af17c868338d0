package suite

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/agentrunner/runner/runner/task"
)

// Shard is one of Count parts of a suite (Index from 1 to Count), for splitting a suite
// across machines with no coordinator: every machine loads the same tasks and keeps its part.
type Shard struct {
	Index, Count int
}

// Identity names one scenario run the same way on every machine: the task file's path
// as given (slash-separated), the scenario's name and its repeat number (from 1).
type Identity struct {
	File   string
	Name   string
	Repeat int
}

// hash is FNV-1a 64 over the identity's fields, NUL-separated: a fixed algorithm, so
// the partition is the same across machines, architectures and Go versions.
func (id Identity) hash() uint64 {
	h := fnv.New64a()
	// The repeat is hashed as the index from 0 it was before runs were numbered from 1,
	// so a suite's partition stays what it was.
	_, _ = h.Write([]byte(filepath.ToSlash(id.File) + "\x00" + id.Name + "\x00" + strconv.Itoa(id.Repeat-1)))
	return h.Sum64()
}

// Partition assigns each identity a shard number in [0, n): identities are ordered by
// their hash (ties by file, name, repeat) and dealt out in turn, so the shards are
// disjoint, cover the suite and differ in size by at most one. The result depends only
// on the set of identities, not on their order or the machine.
func Partition(ids []Identity, n int) []int {
	order := make([]int, len(ids))
	hashes := make([]uint64, len(ids))
	for i := range ids {
		order[i], hashes[i] = i, ids[i].hash()
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if hashes[x] != hashes[y] {
			return hashes[x] < hashes[y]
		}
		if ids[x].File != ids[y].File {
			return ids[x].File < ids[y].File
		}
		if ids[x].Name != ids[y].Name {
			return ids[x].Name < ids[y].Name
		}
		return ids[x].Repeat < ids[y].Repeat
	})
	out := make([]int, len(ids))
	for rank, i := range order {
		out[i] = rank % max(n, 1)
	}
	return out
}

// Selector returns the Select function of Options that keeps this shard's scenarios of
// tasks run repeat times.
func (s Shard) Selector(tasks []*task.Task, repeat int) func(t *task.Task, repeat, index int) bool {
	repeat = max(repeat, 1)
	ids := make([]Identity, 0, len(tasks)*repeat)
	for rep := 1; rep <= repeat; rep++ {
		for _, t := range tasks {
			ids = append(ids, Identity{File: t.Path, Name: t.Name, Repeat: rep})
		}
	}
	part := Partition(ids, s.Count)
	return func(_ *task.Task, _, index int) bool {
		return index >= 0 && index < len(part) && part[index] == s.Index-1
	}
}

// ShardError is a shard value that cannot be used: Value as given, and why. It names no
// flag; the command line does.
type ShardError struct {
	Value  string
	Reason string
}

func (e *ShardError) Error() string { return fmt.Sprintf("%q: %s", e.Value, e.Reason) }

// ParseShard reads a shard value: "I/N" (1 <= I <= N), or "auto" / "auto/N", which take
// I from a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (counted from 0) and N from
// RUNNER_SHARD_COUNT when not given. getenv reads the environment. Errors are *ShardError.
func ParseShard(v string, getenv func(string) string) (Shard, error) {
	const form = `want I/N with 1 <= I <= N (e.g. 2/4), or auto[/N]`
	idx, count, ok := strings.Cut(v, "/")
	if idx == "auto" {
		env := getenv("JOB_COMPLETION_INDEX")
		if env == "" {
			return Shard{}, &ShardError{v, "JOB_COMPLETION_INDEX is not set (it is set in a Kubernetes Indexed Job)"}
		}
		i, err := strconv.Atoi(env)
		if err != nil || i < 0 {
			return Shard{}, &ShardError{v, fmt.Sprintf("JOB_COMPLETION_INDEX=%q is not a number from 0", env)}
		}
		idx = strconv.Itoa(i + 1)
		if !ok {
			if count = getenv("RUNNER_SHARD_COUNT"); count == "" {
				return Shard{}, &ShardError{v, "say how many shards, as auto/N or RUNNER_SHARD_COUNT=N"}
			}
			ok = true
		}
	}
	if !ok {
		return Shard{}, &ShardError{v, form}
	}
	i, err1 := strconv.Atoi(idx)
	n, err2 := strconv.Atoi(count)
	if err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, &ShardError{v, form}
	}
	return Shard{Index: i, Count: n}, nil
}

// String is the shard as --shard takes it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }
