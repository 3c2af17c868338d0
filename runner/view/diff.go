package view

import (
	"strings"

	"github.com/agentrunner/runner/runner/report/plaintext"
	"github.com/agentrunner/runner/runner/result"
)

// Diff is one file's diff prepared for a page: its lines classed for colour, each
// cleaned (html/template escapes them), at most limit bytes of it.
type Diff struct {
	result.FileDiff
	Lines []DiffLine
	// Cut is how many bytes of the diff the page leaves out (changes.json has them).
	Cut int
}

// DiffLine is one line of a diff and its class: add, del, hunk, head or ctx.
type DiffLine struct {
	Class, Text string
}

// foldDiffLines: a longer diff starts folded.
const foldDiffLines = 40

// Long reports whether the diff starts folded.
func (d Diff) Long() bool { return len(d.Lines) > foldDiffLines }

// NewDiff prepares d, keeping at most limit bytes of its text.
func NewDiff(d result.FileDiff, limit int) Diff {
	t := NewText(d.Diff, limit)
	out := Diff{FileDiff: d, Cut: t.Cut}
	if t.S == "" {
		return out
	}
	for i, l := range strings.Split(strings.TrimSuffix(t.S, "\n"), "\n") {
		out.Lines = append(out.Lines, DiffLine{Class: lineClass(i, l), Text: plaintext.Clean(l)})
	}
	return out
}

// lineClass is the class of a diff's i-th line: the first two are the file header.
func lineClass(i int, l string) string {
	switch {
	case i < 2:
		return "head"
	case strings.HasPrefix(l, "@@"):
		return "hunk"
	case strings.HasPrefix(l, "+"):
		return "add"
	case strings.HasPrefix(l, "-"):
		return "del"
	}
	return "ctx"
}

// statusClass is the colour of a change's status.
func statusClass(status string) string {
	switch status {
	case result.DiffCreated:
		return "ok"
	case result.DiffDeleted:
		return "bad"
	}
	return "warn"
}
