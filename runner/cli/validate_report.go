package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
)

// problemLines writes every load problem as "file:line:col: ..." with nothing in front,
// so editors and CI make each line a link, then a count; it returns the usage error.
func problemLines(w io.Writer, err error) error {
	probs := task.Problems(err)
	files := map[string]bool{}
	for _, p := range probs {
		var te *task.Error
		if errors.As(p, &te) {
			files[te.Pos.File] = true
			if te.Pos.Line <= 0 || te.Pos.Column <= 0 {
				// A problem with the file as a whole (unreadable, empty) points at its start.
				pos := te.Pos
				pos.Line, pos.Column = max(pos.Line, 1), max(pos.Column, 1)
				te = &task.Error{Pos: pos, Field: te.Field, Msg: te.Msg, Err: te.Err}
				p = te
			}
		}
		_, _ = fmt.Fprintln(w, p.Error()) // console output: a failed write has nowhere to be reported
	}
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s in %s", countNoun(len(probs), "problem"), countNoun(max(len(files), 1), "file"))}
}

// oracleProblem is a reference solution's failure as a file:line:col: line.
func oracleProblem(s result.Scenario) string {
	line, col := max(s.Line, 1), 1
	for _, a := range s.Assertions {
		if !a.Passed && a.Line == s.Line && a.Column > 0 {
			col = a.Column
			break
		}
	}
	return fmt.Sprintf("%s:%d:%d: %sreference solution %s: %s", s.File, line, col, caseOf(s), s.Status, s.Reason)
}

// caseOf names the case of a task file with vars:, a matrix: or a dataset: ("greet
// [lang=sh]: "), whose cases share the file's positions; "" for a plain task.
func caseOf(s result.Scenario) string {
	if s.Case == "" {
		return ""
	}
	return s.Name + ": "
}

// taskCount counts task files and, when a file expands into several, their cases apart:
// "2 task files (5 cases)".
func taskCount(tasks []*task.Task) string {
	files := map[string]bool{}
	for _, t := range tasks {
		files[t.Path] = true
	}
	n := countNoun(len(files), "task file")
	if len(tasks) != len(files) {
		n += " (" + countNoun(len(tasks), "case") + ")"
	}
	return n
}

func countNoun(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
