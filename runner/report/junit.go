package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/agentrunner/runner/runner/result"
)

// JUnitOptions adjust the JUnit report.
type JUnitOptions struct {
	// SuiteName names the one testsuite; "" means "runner".
	SuiteName string
	// Hostname is the testsuite's hostname; "" means os.Hostname().
	Hostname string
	// Properties are extra testsuite properties (runner version, sandbox, ...).
	Properties map[string]string
}

// JUnit returns the WriteFunc that writes JUnit XML with opts, for File.
func JUnit(opts JUnitOptions) WriteFunc {
	return func(w io.Writer, run result.Run) error { return WriteJUnit(w, run, opts) }
}

// The XML shape, per junit-10.xsd (the Jenkins xunit schema): properties are allowed
// on a testsuite only, so per-scenario data goes into testcase attributes and
// system-out.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr"`
		Hostname   string          `xml:"hostname,attr"`
		ID         string          `xml:"id,attr"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name       string        `xml:"name,attr"`
		Classname  string        `xml:"classname,attr"`
		Time       string        `xml:"time,attr"`
		Timestamp  string        `xml:"timestamp,attr,omitempty"`
		File       string        `xml:"file,attr,omitempty"`
		Line       int           `xml:"line,attr,omitempty"`
		Status     string        `xml:"status,attr"`
		Assertions int           `xml:"assertions,attr"`
		Skipped    *junitProblem `xml:"skipped"`
		Failure    *junitProblem `xml:"failure"`
		Error      *junitProblem `xml:"error"`
		SystemOut  *junitText    `xml:"system-out"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",cdata"`
	}
	// junitText is CDATA so multi-line text stays readable in the file (chardata would
	// turn every newline into &#xA;). encoding/xml splits any "]]>" inside it, and
	// cleanText has removed the characters XML forbids.
	junitText struct {
		Text string `xml:",cdata"`
	}
)

// junitTime is the timestamp format: ISO 8601 in UTC, as JUnit consumers expect.
const junitTime = "2006-01-02T15:04:05Z"

// WriteJUnit writes a JUnit XML report of the run: one testsuite, one testcase per
// scenario. A failed scenario is a <failure> (type "assertion", or the limit it hit);
// an errored one is an <error>. All model-produced text is cleaned (see cleanText), so
// the report validates against junit-10.xsd whatever the model wrote.
func WriteJUnit(w io.Writer, run result.Run, opts JUnitOptions) error {
	_, failed, errored := run.Counts()
	suite := junitSuite{
		Name:       opts.SuiteName,
		Tests:      len(run.Scenarios),
		Failures:   failed,
		Errors:     errored,
		Time:       seconds(run.Duration.Duration()),
		Timestamp:  run.Started.UTC().Format(junitTime),
		Hostname:   opts.Hostname,
		ID:         "0",
		Properties: suiteProperties(run, opts.Properties),
		Cases:      make([]junitCase, 0, len(run.Scenarios)),
	}
	if suite.Name == "" {
		suite.Name = "runner"
	}
	if suite.Hostname == "" {
		suite.Hostname, _ = os.Hostname()
		if suite.Hostname == "" {
			suite.Hostname = "localhost"
		}
	}
	suite.Name, suite.Hostname = cleanText(suite.Name), cleanText(suite.Hostname)
	for _, s := range run.Scenarios {
		suite.Cases = append(suite.Cases, junitTestcase(s))
		children := childTestcases(s)
		for _, c := range children {
			switch {
			case c.Failure != nil:
				suite.Failures++
			case c.Error != nil:
				suite.Errors++
			case c.Skipped != nil:
				suite.Skipped++
			}
		}
		suite.Tests += len(children)
		suite.Cases = append(suite.Cases, children...)
	}
	doc := junitSuites{
		Name: suite.Name, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Time: suite.Time,
		Suites: []junitSuite{suite},
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	return nil
}

func junitTestcase(s result.Scenario) junitCase {
	c := junitCase{
		Name:       cleanText(displayName(s)),
		Classname:  classname(s.File),
		Time:       seconds(s.Duration.Duration()),
		File:       cleanText(s.File),
		Status:     string(verdict(s)),
		Assertions: len(s.Assertions),
		SystemOut:  &junitText{systemOut(s)},
	}
	if !s.Started.IsZero() {
		c.Timestamp = s.Started.UTC().Format(junitTime)
	}
	switch verdict(s) {
	case result.Failed:
		c.Line = failureLine(s)
		c.Failure = &junitProblem{Type: "assertion", Message: cleanText(reason(s)), Text: failedAssertions(s)}
		if c.Failure.Text == "" {
			// No assertion failed: the agent hit a limit the assertions did not allow.
			c.Failure.Type = string(s.Stop)
			c.Failure.Text = c.Failure.Message
		}
	case result.Errored:
		c.Error = &junitProblem{Type: string(s.Stop), Message: cleanText(reason(s)), Text: cleanText(reason(s))}
	}
	if c.Failure != nil && c.Failure.Type == "" {
		c.Failure.Type = "failed"
	}
	if c.Error != nil && c.Error.Type == "" {
		c.Error.Type = "error"
	}
	return c
}

// classname is the task file without its extension, dots made underscores: Jenkins
// splits a classname at its last dot into package and class, so a model name such as
// qwen2.5 or a file name's ".yaml" would scatter one suite over made-up packages. The
// model is a suite property and in each testcase's system-out instead.
func classname(file string) string {
	file = strings.TrimSuffix(strings.TrimSuffix(filepath.ToSlash(file), ".yaml"), ".yml")
	if file == "" {
		return "runner"
	}
	return strings.ReplaceAll(cleanText(file), ".", "_")
}

// failureLine is the task-file line of a failure's cause, for the testcase's line
// attribute (action-junit-report annotates it): the result's Line, else the first failed
// assertion's (results written before Line existed).
func failureLine(s result.Scenario) int {
	if s.Line > 0 {
		return s.Line
	}
	for _, a := range s.Assertions {
		if !a.Passed && a.Line > 0 {
			return a.Line
		}
	}
	return 0
}

// failedAssertions lists a scenario's failing assertions, one per line.
func failedAssertions(s result.Scenario) string {
	var b strings.Builder
	for _, a := range s.Assertions {
		if !a.Passed {
			fmt.Fprintf(&b, "%s%s: %s\n", position(s.File, a), a.Kind, indent(a.Message))
		}
	}
	return cleanText(b.String())
}

// systemOut is a short account of a scenario's run, for the CI page.
func systemOut(s result.Scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %s\n", s.Model)
	fmt.Fprintf(&b, "stop: %s after %s (%s, %d denied)\n", s.Stop, plural(s.Steps, "step"), plural(s.ToolCalls, "tool call"), s.Denied)
	fmt.Fprintf(&b, "tokens: %d prompt, %d completion", s.Usage.PromptTokens, s.Usage.CompletionTokens)
	if s.Usage.TokensPerSecond > 0 {
		fmt.Fprintf(&b, " (%.1f tokens/s)", s.Usage.TokensPerSecond)
	}
	fmt.Fprintf(&b, "\ntime: %ss (", seconds(s.Duration.Duration()))
	for i, p := range s.TimeParts() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %ss", p.Name, seconds(p.Time.Duration()))
	}
	b.WriteString(")\n")
	if c := s.Cost; c != nil {
		fmt.Fprintf(&b, "cost: %s (prices of %s)\n", costLine(c), c.Prices)
	}
	if s.Sandbox != "" {
		fmt.Fprintf(&b, "sandbox: %s\n", s.Sandbox)
	}
	if s.Reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", indent(s.Reason))
	}
	if s.Score != nil {
		fmt.Fprintf(&b, "score: %.3f", *s.Score)
		if s.ScoreNote != "" {
			fmt.Fprintf(&b, " (%s)", s.ScoreNote)
		}
		b.WriteByte('\n')
	}
	if s.Summary != "" {
		fmt.Fprintf(&b, "summary: %s\n", indent(s.Summary))
	}
	if len(s.Assertions) > 0 {
		b.WriteString("assertions:\n")
		for _, a := range s.Assertions {
			mark := "PASS"
			if !a.Passed {
				mark = "FAIL"
			}
			fmt.Fprintf(&b, "  %s %s%s: %s\n", mark, position(s.File, a), a.Kind, indent(a.Message))
		}
	}
	if s.Transcript != "" {
		// The page runner view writes beside the transcript tells the whole story.
		fmt.Fprintf(&b, "page: %s\n", filepath.Join(filepath.Dir(s.Transcript), "index.html"))
		fmt.Fprintf(&b, "transcript: %s\n", s.Transcript)
	}
	if s.Workspace != "" {
		fmt.Fprintf(&b, "workspace: %s\n", s.Workspace)
	}
	return cleanText(b.String())
}

// indent keeps a multi-line message readable under its label.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}

// suiteProperties carries what the schema allows only at suite level: the models,
// total steps and tokens, then the caller's extras, sorted by name.
func suiteProperties(run result.Run, extra map[string]string) []junitProperty {
	var models []string
	seen := map[string]bool{}
	steps := 0
	for _, s := range run.Scenarios {
		steps += s.Steps
		if !seen[s.Model] && s.Model != "" {
			seen[s.Model] = true
			models = append(models, s.Model)
		}
	}
	prompt, completion := tokens(run)
	props := []junitProperty{
		{"model", strings.Join(models, ",")},
		{"steps", strconv.Itoa(steps)},
		{"prompt_tokens", strconv.Itoa(prompt)},
		{"completion_tokens", strconv.Itoa(completion)},
		{"runner_version", runnerVersion(run)},
	}
	if cost := run.Cost(); cost.Prices != "" {
		// Numbers for machines: the known part, and how many scenarios' cost is unknown.
		props = append(props, junitProperty{"cost_usd", strconv.FormatFloat(cost.USD, 'f', -1, 64)}, junitProperty{"prices", cost.Prices})
		if cost.Unknown > 0 {
			props = append(props, junitProperty{"cost_unknown_scenarios", strconv.Itoa(cost.Unknown)})
		}
	}
	names := make([]string, 0, len(extra))
	for k := range extra {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		props = append(props, junitProperty{k, extra[k]})
	}
	for i := range props {
		props[i].Name, props[i].Value = cleanText(props[i].Name), cleanText(props[i].Value)
	}
	return props
}

// childTestcases are the per-test results of a scenario's command assertions (junit:,
// format: pytest), one testcase each, their classname the scenario's display name so CI
// pages group them under it. Their outcome is the test's own; the scenario's testcase
// keeps the verdict.
func childTestcases(s result.Scenario) []junitCase {
	var out []junitCase
	parent := cleanText(displayName(s))
	for _, a := range s.Assertions {
		for _, t := range a.Tests {
			name := t.Name
			if t.Classname != "" {
				name = t.Classname + "::" + t.Name
			}
			c := junitCase{
				Name: cleanText(name), Classname: parent, Time: seconds(t.Duration.Duration()),
				File: cleanText(s.File), Status: string(t.Status),
			}
			msg := cleanText(t.Message)
			switch t.Status {
			case result.TestFailed:
				c.Failure = &junitProblem{Type: "test", Message: msg, Text: msg}
			case result.TestError:
				c.Error = &junitProblem{Type: "test", Message: msg, Text: msg}
			case result.TestSkipped:
				c.Skipped = &junitProblem{Type: "skipped", Message: msg}
			}
			out = append(out, c)
		}
	}
	return out
}
