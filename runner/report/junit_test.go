package report

import (
	"bytes"
	"encoding/xml"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/agentrunner/runner/runner/result"
)

var junitOpts = JUnitOptions{Hostname: "ci-runner-1", Properties: map[string]string{"version": "v0.1.0"}}

func TestJUnitGolden(t *testing.T) {
	var out bytes.Buffer
	assert.NilError(t, WriteJUnit(&out, fixedRun(), junitOpts))
	golden.Assert(t, out.String(), "junit.golden")
	xmllint(t, out.Bytes())
}

func TestJUnitEmptyRun(t *testing.T) {
	var out bytes.Buffer
	assert.NilError(t, WriteJUnit(&out, result.Run{Started: t0}, JUnitOptions{}))
	assert.Check(t, is.Contains(out.String(), `<testsuite name="runner" tests="0" failures="0" errors="0" skipped="0" time="0.000" timestamp="2025-03-14T09:26:53Z" hostname="`))
	xmllint(t, out.Bytes())
}

// hostile is what a misbehaving model might write: NUL, colour codes, an OSC title,
// invalid UTF-8, a vertical tab, a CDATA terminator and XML metacharacters.
const hostile = "a\x00b \x1b[31mred\x1b[0m \x1b]0;title\x07 \xff\xfe \x0b ]]> <&> \"q\" 'a' \uFFFF end"

func TestJUnitHostileText(t *testing.T) {
	run := result.Run{Started: t0, Duration: result.Millis(time.Second), Scenarios: []result.Scenario{
		{
			Name: "n" + hostile, File: "f" + hostile + ".yaml", Model: "m" + hostile, Status: result.Failed,
			Stop: result.StopCompleted, Reason: "r" + hostile, Summary: "s" + hostile, Transcript: "t" + hostile,
			Assertions: []result.Assertion{{Kind: "file_contains", Line: 3, Column: 5, Message: "msg" + hostile + "\nline2"}},
		},
		{Name: "e" + hostile, Model: "m", Status: result.Errored, Stop: result.StopError, Reason: "err" + hostile},
		{Name: "p", Model: "m", Status: result.Passed, Stop: result.StopCompleted, Summary: hostile},
	}}
	var out bytes.Buffer
	assert.NilError(t, WriteJUnit(&out, run, JUnitOptions{Hostname: "h" + hostile, Properties: map[string]string{"k" + hostile: "v" + hostile}}))
	doc := out.Bytes()
	xmllint(t, doc)

	// Go's own parser agrees, and the text survives in a readable form.
	var parsed junitSuites
	assert.NilError(t, xml.Unmarshal(doc, &parsed), string(doc))
	cases := parsed.Suites[0].Cases
	assert.Equal(t, len(cases), 3)
	want := `a\x00b red  �� \x0b ]]> <&> "q" 'a' � end`
	assert.Equal(t, cases[0].Name, "n"+want)
	assert.Equal(t, cases[0].Failure.Message, "r"+want)
	assert.Check(t, is.Contains(cases[0].Failure.Text, "msg"+want+"\n      line2"))
	assert.Check(t, is.Contains(cases[0].SystemOut.Text, "summary: s"+want))
	assert.Equal(t, cases[1].Error.Message, "err"+want)
	assert.Check(t, !bytes.ContainsAny(doc, "\x00\x1b\x0b\x07"), "raw control bytes in the report")
	assert.Check(t, is.Contains(cases[2].SystemOut.Text, "]]> <&>"), "a CDATA terminator inside the text survives")
}

func TestJUnitFailureKinds(t *testing.T) {
	run := fixedRun()
	var out bytes.Buffer
	assert.NilError(t, WriteJUnit(&out, run, junitOpts))
	var parsed junitSuites
	assert.NilError(t, xml.Unmarshal(out.Bytes(), &parsed))
	s := parsed.Suites[0]
	assert.Equal(t, s.Tests, 5)
	assert.Equal(t, s.Failures, 2)
	assert.Equal(t, s.Errors, 1)
	byName := map[string]junitCase{}
	for _, c := range s.Cases {
		byName[c.Name] = c
	}
	assert.Equal(t, byName["edit-config"].Failure.Type, "assertion")
	assert.Equal(t, byName["never-finishes"].Failure.Type, "max_steps")
	assert.Check(t, byName["never-finishes"].Error == nil)
	assert.Equal(t, byName["fetch-docs"].Error.Type, "error")
	assert.Check(t, byName["fetch-docs"].Failure == nil)
	assert.Check(t, byName["rename-function"].Failure == nil && byName["rename-function"].Error == nil)
	// Classnames carry no dots for Jenkins to split on; the line is the failure's cause.
	assert.Equal(t, byName["rename-function #1"].Classname, "scenarios/rename")
	assert.Equal(t, byName["edit-config"].Line, 15, "the first failed assertion")
	assert.Equal(t, byName["never-finishes"].Line, 9, "the max_steps key")
	assert.Equal(t, byName["rename-function"].Line, 0)
	assert.Equal(t, classname("my.tasks/v1.2/x.yml"), "my_tasks/v1_2/x")
	assert.Equal(t, byName["fetch-docs"].Time, "7.000")
}

func TestJUnitChildTestcases(t *testing.T) {
	half := 0.5
	run := result.Run{Started: t0, Duration: result.Millis(time.Second), Scenarios: []result.Scenario{{
		Name: "tb-hello", File: "tasks/hello.yaml", Model: "oracle", Status: result.Failed, Stop: result.StopCompleted,
		Reason: "command: 1 of 2 tests passed",
		Assertions: []result.Assertion{{Kind: "command", Line: 9, Message: "1 of 2 tests passed", PassFraction: &half, Tests: []result.Test{
			{Name: "test_exists", Classname: "tests/test_outputs.py", Status: result.TestPassed, Duration: result.Millis(20 * time.Millisecond)},
			{Name: "test_content", Classname: "tests/test_outputs.py", Status: result.TestFailed, Message: "assert 'x' == 'y' " + hostile},
			{Name: "test_gpu", Status: result.TestSkipped, Message: "no GPU"},
			{Name: "test_db", Status: result.TestError, Message: "no db"},
		}}},
	}}}
	var out bytes.Buffer
	assert.NilError(t, WriteJUnit(&out, run, JUnitOptions{Hostname: "h"}))
	xmllint(t, out.Bytes())
	var parsed junitSuites
	assert.NilError(t, xml.Unmarshal(out.Bytes(), &parsed))
	s := parsed.Suites[0]
	assert.Equal(t, s.Tests, 5)
	assert.Equal(t, s.Failures, 2) // the scenario and test_content
	assert.Equal(t, s.Errors, 1)
	assert.Equal(t, s.Skipped, 1)
	assert.Equal(t, parsed.Tests, 5)
	assert.Equal(t, len(s.Cases), 5)
	c := s.Cases[1]
	assert.Equal(t, c.Name, "tests/test_outputs.py::test_exists")
	assert.Equal(t, c.Classname, "tb-hello")
	assert.Equal(t, c.Time, "0.020")
	assert.Assert(t, c.Failure == nil && c.Error == nil && c.Skipped == nil)
	assert.Check(t, is.Contains(s.Cases[2].Failure.Message, "assert 'x' == 'y'"))
	assert.Assert(t, s.Cases[3].Skipped != nil)
	assert.Assert(t, s.Cases[4].Error != nil)
}
