package oracle

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools/complete"
)

// Flaky says how often an oracle gives up: "oracle:fail=0.3,seed=1" plays the reference in
// about 70% of runs and in the others calls task_complete at once, so `runner bench` can be
// tried in a minute, with no model server, on numbers that vary like a model's.
type Flaky struct {
	// Fail is the share of runs given up, in [0, 1].
	Fail float64
	// Seed picks which runs: the same seed, task and repeat always give the same answer.
	Seed uint64
}

// ParseFlaky reads the options after "oracle:", e.g. "fail=0.3,seed=1" (seed defaults to 0).
func ParseFlaky(opts string) (Flaky, error) {
	var f Flaky
	seenFail := false
	for _, kv := range strings.Split(opts, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return f, fmt.Errorf("oracle option %q: want KEY=VALUE (oracle:fail=0.3,seed=1)", kv)
		}
		switch key {
		case "fail":
			v, err := strconv.ParseFloat(val, 64)
			if err != nil || v < 0 || v > 1 {
				return f, fmt.Errorf("oracle option fail=%s: want a share between 0 and 1", val)
			}
			f.Fail, seenFail = v, true
		case "seed":
			v, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				return f, fmt.Errorf("oracle option seed=%s: want a whole number", val)
			}
			f.Seed = v
		default:
			return f, fmt.Errorf("oracle option %q: the oracle knows fail= and seed=", key)
		}
	}
	if !seenFail {
		return f, fmt.Errorf("oracle options %q: fail= is required (oracle:fail=0.3,seed=1)", opts)
	}
	return f, nil
}

// GivesUp says whether the run (scenario name, repeat number from 1) is one the oracle gives up:
// a hash of seed, scenario and repeat, read as a number in [0, 1), below Fail. Runs in
// parallel or in any order get the same answers.
func (f Flaky) GivesUp(scenario string, repeat int) bool {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], f.Seed)
	h.Write(b[:])
	h.Write([]byte(scenario))
	binary.LittleEndian.PutUint64(b[:], uint64(repeat))
	h.Write(b[:])
	// A 64-bit FNV hash's low bits mix poorly for short inputs; a final avalanche
	// (splitmix64's) spreads them before the top 53 bits become the fraction.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/(1<<53) < f.Fail
}

// givenUp is the oracle of a run it gives up: it calls task_complete at once, so the
// task's assertions judge an untouched workspace, as they would a model that did nothing.
type givenUp struct{ name string }

// GiveUp returns the model (named name, e.g. "oracle:fail=0.3,seed=1") of a run the oracle
// gives up.
func GiveUp(name string) model.Model { return givenUp{name: name} }

func (g givenUp) Name() string { return g.name }

func (g givenUp) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Step() > 1 {
		return &model.Response{Content: FinalText, Model: "oracle"}, nil
	}
	args, err := json.Marshal(map[string]string{"summary": "The oracle gave up on this run (" + g.name + ")."})
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	return &model.Response{Model: "oracle", ToolCalls: []model.ToolCall{{ID: "oracle_1", Name: complete.Name, Arguments: args}}}, nil
}
