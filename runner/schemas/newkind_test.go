package schemas

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	runassert "github.com/agentrunner/runner/runner/assert"
	"github.com/agentrunner/runner/runner/task"
)

// summaryContains is a whole assertion kind written in this one file, to show what adding
// a kind takes: its Spec type, its decoder, its checker and its row (summaryContainsRow),
// which the test registers. It passes when the task_complete summary contains a text.
type summaryContains struct {
	Text       string `json:"text" jsonschema:"required,minLength=1" jsonschema_description:"The text the summary must contain."`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema_description:"Compare without regard to case. Default: false."`
}

func decodeSummaryContains(v task.Value) (any, bool) {
	var s summaryContains
	ok := v.Fields(summaryContains{}, []string{"text"}, func(key string, v task.Value) bool {
		var ok bool
		switch key {
		case "text":
			s.Text, ok = v.NonEmpty()
		case "ignore_case":
			s.IgnoreCase, ok = v.Bool()
		}
		return ok
	})
	return s, ok
}

func (s summaryContains) Check(_ context.Context, run *runassert.Run) (bool, string) {
	summary, text := run.Summary, s.Text
	if s.IgnoreCase {
		summary, text = strings.ToLower(summary), strings.ToLower(text)
	}
	if strings.Contains(summary, text) {
		return true, fmt.Sprintf("the summary contains %q", s.Text)
	}
	return false, fmt.Sprintf("the summary %q does not contain %q", run.Summary, s.Text)
}

var summaryContainsRow = runassert.Kind{
	Name: "summary_contains", Doc: "The task_complete summary contains this text.", Spec: summaryContains{},
	Decode: decodeSummaryContains,
	New: func(spec any) (runassert.Checker, error) {
		s, ok := spec.(summaryContains)
		if !ok {
			return nil, fmt.Errorf("spec has type %T, want summaryContains", spec)
		}
		return s, nil
	},
}

// addKind registers row for the test, and forgets it after.
func addKind(t *testing.T, row runassert.Kind) {
	rows, kinds, names := runassert.Registry, task.Kinds, task.AssertionKinds
	t.Cleanup(func() { runassert.Registry, task.Kinds, task.AssertionKinds = rows, kinds, names })
	runassert.Register(row)
}

// TestANewAssertionKindIsOneFileAndOneRow: with nothing but the row above registered, the
// new kind is decoded from a task file (its errors positioned as every kind's), it is in
// the task schema with its doc line and its block's fields, the docs table check asks for
// its line in docs/assertions.md, and a finished run is checked against it.
func TestANewAssertionKindIsOneFileAndOneRow(t *testing.T) {
	const file = "prompt: p\nassert:\n  - summary_contains: {text: done, ignore_case: true}\n"
	_, err := task.Parse("t.yaml", []byte(file), task.LoadOptions{})
	assert.ErrorContains(t, err, `t.yaml:3:5: assert[0]: unknown assertion kind "summary_contains"`, "unknown before its row")
	addKind(t, summaryContainsRow)

	// Decoded.
	tk, err := task.Parse("t.yaml", []byte(file), task.LoadOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, tk.Assert, []task.Assertion{{Kind: "summary_contains", Spec: summaryContains{Text: "done", IgnoreCase: true},
		Pos: task.Position{File: "t.yaml", Line: 3, Column: 5}}})
	_, err = task.Parse("t.yaml", []byte("prompt: p\nassert:\n  - summary_contains: {txt: done}\n"), task.LoadOptions{})
	assert.Error(t, err, "t.yaml:3:23: assert[0].summary_contains.text: required field is missing\n"+
		"t.yaml:3:24: assert[0].summary_contains.txt: unknown field \"txt\"; did you mean \"text\"?")

	// In the schema.
	b, err := Task()
	assert.NilError(t, err)
	var doc struct {
		Defs map[string]struct {
			Description string                    `json:"description"`
			Ref         string                    `json:"$ref"`
			Properties  map[string]map[string]any `json:"properties"`
			Required    []string                  `json:"required"`
		} `json:"$defs"`
	}
	assert.NilError(t, json.Unmarshal(b, &doc))
	prop := doc.Defs["assertion"].Properties["summary_contains"]
	assert.Equal(t, prop["description"], summaryContainsRow.Doc)
	assert.Equal(t, prop["$ref"], "#/$defs/assert_summary_contains")
	def := doc.Defs["assert_summary_contains"]
	assert.DeepEqual(t, slices.Sorted(maps.Keys(def.Properties)), []string{"ignore_case", "text"})
	assert.DeepEqual(t, def.Required, []string{"text"})

	// In the docs table check: runner/cli's TestDocsAssertionsAreTheRegistry compares the
	// kinds of docs/assertions.md's table with task.AssertionKinds, which now has the new
	// kind and the table not yet: the check fails until the page gets its line.
	documented := docsAssertionKinds(t)
	assert.DeepEqual(t, documented, task.AssertionKinds[:len(task.AssertionKinds)-1])
	assert.Equal(t, task.AssertionKinds[len(task.AssertionKinds)-1], "summary_contains")

	// Checked.
	for summary, pass := range map[string]bool{"All DONE.": true, "gave up": false} {
		got := runassert.CheckAll(t.Context(), tk.Assert, &runassert.Run{Summary: summary})
		assert.Equal(t, len(got), 1)
		assert.Check(t, got[0].Passed == pass, "%q: %s", summary, got[0].Message)
		assert.Check(t, is.Equal(got[0].Kind, "summary_contains"))
		assert.Check(t, is.Equal(got[0].Line, 3))
	}
}

// docsAssertionKinds are the kinds the table of docs/assertions.md lists, in order, read
// as runner/cli's docs check reads them (the first cell up to ":", one entry per kind).
func docsAssertionKinds(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../docs/assertions.md")
	assert.NilError(t, err)
	var kinds []string
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "| assertion | passes when |"):
			in = true
		case in && strings.HasPrefix(l, "|---"):
		case in && strings.HasPrefix(l, "| "):
			cell := strings.Trim(strings.Split(l, "|")[1], " `")
			kind, _, _ := strings.Cut(cell, ":")
			if len(kinds) == 0 || kinds[len(kinds)-1] != kind {
				kinds = append(kinds, kind)
			}
		case in:
			return kinds
		}
	}
	return kinds
}
