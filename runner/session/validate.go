package session

import (
	"errors"
	"io"
	"slices"

	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools/catalog"
)

// Load loads every task file under paths with the tool catalog, as New does, printing
// each task's warnings to warn (`runner validate`).
func Load(paths []string, warn io.Writer) ([]*task.Task, error) {
	return LoadTasks(paths, catalog.Default(), "", warn)
}

// ProblemLines are a load error's problems, each "file:line:col: ..." (a problem with a
// file as a whole points at its start, 1:1), and how many files they are in.
func ProblemLines(err error) (lines []string, files int) {
	inFile := map[string]bool{}
	for _, p := range task.Problems(err) {
		var te *task.Error
		if errors.As(p, &te) {
			inFile[te.Pos.File] = true
			if te.Pos.Line <= 0 || te.Pos.Column <= 0 {
				pos := te.Pos
				pos.Line, pos.Column = max(pos.Line, 1), max(pos.Column, 1)
				p = &task.Error{Pos: pos, Field: te.Field, Msg: te.Msg, Err: te.Err}
			}
		}
		lines = append(lines, p.Error())
	}
	return lines, len(inFile)
}

// SuiteUse is one suite file (runner.yaml) the tasks took defaults from: how many tasks
// did, and which keys any of them took.
type SuiteUse struct {
	Path  string
	Tasks int
	Keys  []string
}

// SuiteUses lists the suite files tasks inherited from, in the tasks' order.
func SuiteUses(tasks []*task.Task) []SuiteUse {
	var out []SuiteUse
	at := map[string]int{}
	for _, t := range tasks {
		if t.Suite == "" {
			continue
		}
		i, ok := at[t.Suite]
		if !ok {
			i = len(out)
			at[t.Suite] = i
			out = append(out, SuiteUse{Path: t.Suite})
		}
		u := &out[i]
		u.Tasks++
		for _, k := range t.Inherited {
			if !slices.Contains(u.Keys, k) {
				u.Keys = append(u.Keys, k)
			}
		}
	}
	return out
}

// CountTasks counts the task files of tasks and their cases (a file with vars:, a matrix:
// or a dataset: expands into several).
func CountTasks(tasks []*task.Task) (files, cases int) {
	paths := map[string]bool{}
	for _, t := range tasks {
		paths[t.Path] = true
	}
	return len(paths), len(tasks)
}
