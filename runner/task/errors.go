package task

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/go-multierror"
)

// String renders the position as file:line:column, the form editors and CI annotations
// understand. Unknown parts are left out.
func (p Position) String() string {
	switch {
	case p.Line <= 0:
		return p.File
	case p.Column <= 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	default:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
}

// Error is one problem in a task file: where it is, which field, and what is wrong.
// Load and LoadAll return every Error of every file inside one *multierror.Error.
type Error struct {
	Pos Position
	// Field is the path of the field, e.g. assert[2].file_contains.regex (indexes count
	// from 0); empty when the problem is the file itself.
	Field string
	Msg   string
	// Err is the underlying error, if any (a file system or regex error).
	Err error
}

// Error formats the problem as "file:line:column: field: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap exposes the underlying error, so errors.Is(err, fs.ErrNotExist) works.
func (e *Error) Unwrap() error { return e.Err }

// FormatErrors is the multierror format of task errors: one problem per line, nothing
// else, so that each line is a clickable file:line:column reference.
func FormatErrors(es []error) string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Problems returns the individual problems inside an error returned by Load, LoadAll or
// Expand (a *multierror.Error), or err itself when it is a single error.
func Problems(err error) []error {
	if err == nil {
		return nil
	}
	var me *multierror.Error
	if errors.As(err, &me) {
		return me.Errors
	}
	return []error{err}
}

// combine returns the problems as one *multierror.Error with the one-per-line format, or
// nil when there are none.
func combine(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	me := multierror.Append(nil, errs...)
	me.ErrorFormat = FormatErrors
	return me
}

// sortProblems orders a file's problems by position, so that they read top to bottom
// whatever check found them, and drops exact duplicates (an alias used twice).
func sortProblems(errs []*Error) []*Error {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i].Pos, errs[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	out := errs[:0]
	seen := map[string]bool{}
	for _, e := range errs {
		if k := e.Error(); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}
