//go:build linux

package sandbox

import (
	"context"
	"errors"
	osexec "os/exec"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

// labelled is a whole sandbox mode written in this one file, to show what adding a mode
// takes: its wrapper (Name, Wrap, gaps), its probe, and its row (labelledRow), which the
// test puts in Modes. It confines nothing: it marks each command's environment, so that
// the test can tell that a command went through it.
type labelled struct{}

func (labelled) Name() string { return "labelled" }

func (labelled) Wrap(cmd *osexec.Cmd, _ *tools.Workspace) error {
	if cmd.Env == nil {
		cmd.Env = cmd.Environ()
	}
	cmd.Env = append(cmd.Env, "RUNNER_TEST_MODE=labelled")
	return nil
}

func (labelled) gaps(network bool) []string {
	if network {
		return []string{"labelled confines nothing", "network: true changes nothing"}
	}
	return []string{"labelled confines nothing"}
}

func probeLabelled(context.Context) (tools.CommandWrapper, string, error) {
	return labelled{}, "sandbox labelled: commands marked, not confined", nil
}

// labelledRow is the mode's row: auto tries it first, where addMode puts it.
var labelledRow = Mode{Name: "labelled", Help: "marks each command's environment, confines nothing", Auto: true, Probe: probeLabelled}

// addMode puts row at index i of Modes for the test, and forgets it and its probe after.
func addMode(t *testing.T, i int, row Mode) {
	saved := Modes
	Modes = slices.Insert(slices.Clone(Modes), i, row)
	t.Cleanup(func() {
		Modes = saved
		probes.Lock()
		delete(probes.done, row.Name)
		probes.Unlock()
	})
}

// TestANewModeIsOneFileAndOneRow: with nothing but the row above in Modes, the new mode is
// a name that the help text (ModeChoices), flag and task checks (CheckMode) and the schema
// (ModeNames) know, Probe returns its wrapper, auto chooses it in its place, Gaps reports
// what it leaves open, and run_in_terminal runs commands through it.
func TestANewModeIsOneFileAndOneRow(t *testing.T) {
	assert.Check(t, errors.Is(CheckMode("labelled"), ErrUnknownMode), "unknown before its row")
	addMode(t, 1, labelledRow)

	assert.Equal(t, ModeChoices(), "auto, labelled, bwrap, landlock or none")
	assert.NilError(t, CheckMode("labelled"))
	assert.Check(t, slices.Contains(ModeNames(), "labelled"))

	w, reason, err := Probe(t.Context(), "labelled")
	assert.NilError(t, err)
	assert.Equal(t, w, tools.CommandWrapper(labelled{}))
	assert.Equal(t, reason, "sandbox labelled: commands marked, not confined")
	w, _, err = Probe(t.Context(), ModeAuto)
	assert.NilError(t, err)
	assert.Equal(t, w.Name(), "labelled", "auto tries the rows in order")
	assert.DeepEqual(t, Gaps(w, true), []string{"labelled confines nothing", "network: true changes nothing"})

	res := run(t, workspace(t, w), `echo "mode=$RUNNER_TEST_MODE"`, 10)
	assert.Assert(t, res.Success, res.Output)
	assert.Check(t, is.Contains(res.Output, "mode=labelled"))
}

// TestAModeThatFailsItsProbeIsSkippedByAutoAndAnErrorByName: a row's probe error is
// auto's reason to try the next row, and the error of the mode named.
func TestAModeThatFailsItsProbeIsSkippedByAutoAndAnErrorByName(t *testing.T) {
	without, _, err := Probe(t.Context(), ModeAuto)
	assert.NilError(t, err)
	broken := Mode{Name: "broken", Help: "never works", Auto: true,
		Probe: func(context.Context) (tools.CommandWrapper, string, error) {
			return nil, "", errors.New("not on this machine")
		}}
	addMode(t, 1, broken)
	_, _, err = Probe(t.Context(), "broken")
	assert.Error(t, err, "sandbox broken: not on this machine")
	w, reason, err := Probe(t.Context(), ModeAuto)
	assert.NilError(t, err)
	assert.Equal(t, w, without, "auto goes on to the next row")
	if w.Name() == ModeNone {
		assert.Check(t, is.Contains(reason, "broken: sandbox broken: not on this machine"))
	}
}
