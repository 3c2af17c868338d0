package assert

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/workspace/door"
)

// ClearScore removes a score file before the assertions run, so that a reward the agent
// wrote itself cannot stand when the tests never write theirs.
func ClearScore(ctx context.Context, s *task.Score, run *Run) error {
	defer run.closeWorkspace()
	if s == nil || s.File == "" {
		return nil
	}
	return RemoveResultFile(ctx, run, s.File)
}

// Score computes a task's score once its assertions ran: the number in the score file,
// or the pass fraction of every per-test result. A score that cannot be had is 0, with a
// note saying why (the tests did not write the file, it holds no number in 0..1, no test
// ran). broken, when set, is what the agent left in the score file's place (a FIFO, a
// device, a link: a *door.Error), which fails the scenario.
func Score(ctx context.Context, s *task.Score, run *Run, asserted []result.Assertion) (score float64, note string, broken error) {
	defer run.closeWorkspace()
	if s.PassFraction {
		var all []result.Test
		for _, a := range asserted {
			all = append(all, a.Tests...)
		}
		if f := result.PassFraction(all); f != nil {
			return *f, "", nil
		}
		return 0, "no per-test results to score", nil
	}
	data, err := readResultFile(ctx, run, s.File)
	if msg, ok := door.Blame(err); ok {
		return 0, fmt.Sprintf("score file %s: %s", s.File, msg), err
	} else if err != nil {
		return 0, fmt.Sprintf("score file %s: %v", s.File, err), nil
	}
	text := strings.TrimSpace(string(data))
	if strings.HasPrefix(text, "{") {
		text = jsonReward(text)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || v < 0 || v > 1 || v != v {
		return 0, fmt.Sprintf("score file %s holds %s, not a number between 0 and 1", s.File, quote(text)), nil
	}
	return v, "", nil
}

// jsonReward takes the number out of a reward.json: its "reward" key, or its one key.
func jsonReward(text string) string {
	var m map[string]json.Number
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return text
	}
	if v, ok := m["reward"]; ok {
		return v.String()
	}
	if len(m) == 1 {
		for _, v := range m {
			return v.String()
		}
	}
	return text
}
