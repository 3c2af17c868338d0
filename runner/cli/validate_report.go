package cli

import (
	"fmt"
	"io"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/session"
)

// problemLines writes every load problem as "file:line:col: ..." with nothing in front,
// so editors and CI make each line a link, then a count; it returns the usage error.
func problemLines(w io.Writer, err error) error {
	lines, files := session.ProblemLines(err)
	for _, l := range lines {
		_, _ = fmt.Fprintln(w, l) // console output: a failed write has nowhere to be reported
	}
	return usage(fmt.Errorf("%s in %s", countNoun(len(lines), "problem"), countNoun(max(files, 1), "file")))
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
func taskCount(files, cases int) string {
	n := countNoun(files, "task file")
	if cases != files {
		n += " (" + countNoun(cases, "case") + ")"
	}
	return n
}

func countNoun(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
