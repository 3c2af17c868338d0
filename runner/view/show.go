package view

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentrunner/runner/runner/report/plaintext"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
)

// Terminal limits: a quick look over ssh or in a CI log, not the whole transcript.
const (
	showOutputLines = 12
	showArgLines    = 8
)

// palette holds the escape sequences of one output; all empty for plain text.
type palette struct{ bold, dim, red, green, yellow, reset string }

func colours(on bool) palette {
	if !on {
		return palette{}
	}
	return palette{"\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m"}
}

func (p palette) status(s result.Status) string {
	switch s {
	case result.Passed:
		return p.green + "PASS" + p.reset
	case result.Failed:
		return p.red + "FAIL" + p.reset
	}
	return p.yellow + "ERROR" + p.reset
}

// WriteList prints one line per scenario, failures first, for `runner show OUT`.
func WriteList(w io.Writer, entries []Entry, colour bool) error {
	p := colours(colour)
	for _, e := range entries {
		line := fmt.Sprintf("%s %s%s%s  %s  %d steps  %s", p.status(e.Status), p.bold, plaintext.Clean(e.DisplayName()), p.reset,
			plaintext.Clean(e.Model), e.Steps, Duration(result.Millis(e.Duration.Duration())))
		if e.Reason != "" {
			line += "  " + p.dim + Short(e.Reason, 100) + p.reset
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// WriteText prints a scenario's story for a terminal: the verdict and its assertions
// first, then each step's text, calls, decisions and (shortened) results. Every piece of
// agent text is cleaned, so it cannot drive the terminal.
func WriteText(w io.Writer, st *Story, colour bool) error {
	t := storyText{p: colours(colour)}
	t.header(st)
	t.assertions(st.Assertions)
	t.prompt(st.Start)
	t.agent(st.Agent)
	for _, s := range st.Turns {
		t.step(s)
	}
	t.agentEnd(st.AgentEnd)
	t.files(st.Files)
	if d := st.Diffs; d != nil {
		showDiffs(t.line, t.p, d)
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

// storyText builds WriteText's text, one section per method.
type storyText struct {
	b strings.Builder
	p palette
}

// line adds one line of text.
func (t *storyText) line(format string, a ...any) { fmt.Fprintf(&t.b, format+"\n", a...) }

// header: the verdict, where the scenario is, how it stopped and what it cost, and why.
func (t *storyText) header(st *Story) {
	p := t.p
	t.line("%s %s%s%s  (%s)", p.status(st.Status), p.bold, plaintext.Clean(st.DisplayName()), p.reset, plaintext.Clean(st.Model))
	loc := plaintext.Clean(st.File)
	if st.Line > 0 {
		loc += fmt.Sprintf(":%d", st.Line)
	}
	cost := ""
	if st.Cost != nil {
		cost = " · cost " + result.FormatUSD(st.Cost.USD)
	}
	t.line("%s%s · stopped: %s · %d steps · %s · %d tokens%s%s", p.dim, loc, st.Stop, st.Steps, TimeBreakdown(st.Scenario),
		st.Usage.PromptTokens+st.Usage.CompletionTokens, cost, p.reset)
	if st.Reason != "" {
		t.line("%sreason:%s %s", p.bold, p.reset, indent(plaintext.Clean(st.Reason), "  ", 20))
	}
	if st.Problem != "" {
		t.line("%stranscript: %s%s", p.yellow, plaintext.Clean(st.Problem), p.reset)
	}
}

// assertions: each with its mark, the judge's score, and the failed tests it names.
func (t *storyText) assertions(as []result.Assertion) {
	if len(as) == 0 {
		return
	}
	p := t.p
	t.line("\n%sassertions%s", p.bold, p.reset)
	for _, a := range as {
		mark := p.green + "✓" + p.reset
		if a.Error {
			mark = p.yellow + "!" + p.reset
		} else if !a.Passed {
			mark = p.red + "✗" + p.reset
		}
		at := ""
		if a.Line > 0 {
			at = fmt.Sprintf(" %s(line %d)%s", p.dim, a.Line, p.reset)
		}
		t.line("  %s %s: %s%s", mark, a.Kind, indent(plaintext.Clean(a.Message), "      ", 10), at)
		if a.Judge != nil {
			t.line("      judge %s: score %.2f (at least %.2f): %s", plaintext.Clean(a.Judge.Model), a.Judge.Score, a.Judge.MinScore, Short(a.Judge.Reasoning, 300))
		}
		for _, tc := range a.Tests {
			if tc.Status == result.TestFailed || tc.Status == result.TestError {
				t.line("      %s✗%s %s %s", p.red, p.reset, plaintext.Clean(tc.Name), Short(tc.Message, 120))
			}
		}
	}
}

// prompt: the task's prompt and the warnings given with it.
func (t *storyText) prompt(start *transcript.Start) {
	if start == nil {
		return
	}
	p := t.p
	t.line("\n%sprompt%s", p.bold, p.reset)
	t.line("  %s", indent(plaintext.Clean(strings.TrimSpace(start.Prompt)), "  ", 20))
	for _, wr := range start.Warnings {
		t.line("  %swarning: %s%s", p.yellow, plaintext.Clean(wr), p.reset)
	}
}

// agent: an external agent's kind, command line, protocol and endpoint.
func (t *storyText) agent(a *transcript.Agent) {
	if a == nil {
		return
	}
	p := t.p
	cmd, forwarded := AgentCommand(a.Argv)
	t.line("\n%sagent%s %s", p.bold, p.reset, plaintext.Clean(a.Kind))
	t.line("  %s", indent(plaintext.Clean(cmd), "  ", showArgLines))
	via := ""
	if forwarded {
		via = " (through runner's forwarder)"
	}
	t.line("  %sprotocol %s, runner's endpoint %s%s%s", p.dim, plaintext.Clean(orDash(a.Protocol)), plaintext.Clean(a.Endpoint), via, p.reset)
}

// agentEnd: how an external agent ended, and the tail of its output.
func (t *storyText) agentEnd(a *transcript.Agent) {
	if a == nil {
		return
	}
	p := t.p
	how := p.green + "finished" + p.reset
	if !a.Finished {
		how = p.red + "gave up" + p.reset
	}
	if a.Killed {
		how += p.yellow + ", stopped by runner" + p.reset
	}
	t.line("\n%sagent exited%s with code %d: %s", p.bold, p.reset, a.ExitCode, how)
	if a.Reason != "" {
		t.line("  %s", indent(plaintext.Clean(a.Reason), "  ", showArgLines))
	}
	if out := strings.TrimRight(a.Output, "\n"); out != "" {
		lines := strings.Split(out, "\n")
		if len(lines) > showOutputLines {
			lines = lines[len(lines)-showOutputLines:] // the end says how it ended
			t.line("  %s… (the tail of its output)%s", p.dim, p.reset)
		}
		t.line("  %s%s%s", p.dim, indent(plaintext.Clean(strings.Join(lines, "\n")), "  ", showOutputLines), p.reset)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// step: its timing, what an external agent sent, retries, model error, the model's text,
// each call, and the requests refused there.
func (t *storyText) step(s *Step) {
	p := t.p
	head := fmt.Sprintf("\n%sstep %d%s", p.bold, s.N, p.reset)
	if s.N == 0 {
		head = fmt.Sprintf("\n%sbefore the first step%s", p.bold, p.reset)
	}
	if s.Response != nil {
		head += fmt.Sprintf(" %s%s, %d+%d tokens%s", p.dim, Duration(s.Response.Duration), s.Response.Usage.PromptTokens, s.Response.Usage.CompletionTokens, p.reset)
	}
	t.line("%s", head)
	if r := s.Request; r != nil {
		if len(r.Tools) > 0 {
			names := make([]string, len(r.Tools))
			for i, n := range r.Tools {
				names[i] = plaintext.Clean(n)
			}
			t.line("  %stools offered: %s%s", p.dim, Short(strings.Join(names, ", "), 300), p.reset)
		}
		for _, m := range r.Sent {
			if m.Content != "" { // an external agent's own system prompt and user turns
				t.line("  %ssent (%s, %s):%s %s", p.dim, plaintext.Clean(m.Role), Bytes(m.Bytes), p.reset, indent(plaintext.Clean(strings.TrimSpace(m.Content)), "    ", showArgLines))
			}
		}
	}
	for _, r := range s.Retries {
		t.line("  %sattempt %d failed: %s%s", p.yellow, r.Attempt, Short(r.Error, 200), p.reset)
	}
	if s.ModelErr != nil {
		t.line("  %smodel error: %s%s", p.red, Short(s.ModelErr.Error, 300), p.reset)
	}
	if s.Response != nil && strings.TrimSpace(s.Response.Content) != "" {
		t.line("  %s", indent(plaintext.Clean(strings.TrimSpace(s.Response.Content)), "  ", showOutputLines))
	}
	for _, c := range s.Calls {
		t.call(c)
	}
	for _, c := range s.Unanswered() {
		t.line("  %s→ %s%s %s(no result came back)%s", p.bold, plaintext.Clean(c.Name), p.reset, p.dim, p.reset)
		t.args(c.Arguments)
	}
	if s.Reminder != "" {
		t.line("  %s(no tool call: reminded)%s", p.dim, p.reset)
	}
	for _, r := range s.Refused {
		t.line("  %srefused by runner's endpoint: %s%s", p.red, Short(r, 300), p.reset)
	}
}

// call: the tool, the policy's decision, the outcome, the arguments and the output.
func (t *storyText) call(c *Call) {
	p := t.p
	verdict := ""
	if c.Decision != nil {
		if c.Decision.Decision.Allowed {
			verdict = p.dim + " allowed by " + plaintext.Clean(c.Decision.Decision.By) + p.reset
		} else {
			verdict = p.red + " denied by " + plaintext.Clean(c.Decision.Decision.By) + p.reset
		}
	}
	ok := p.green + "ok" + p.reset
	if !c.Result.Success {
		ok = p.red + "failed" + p.reset
		if c.Result.Error != nil {
			ok = p.red + string(c.Result.Error.Code) + p.reset
		}
	}
	t.line("  %s→ %s%s%s %s %s", p.bold, plaintext.Clean(c.Name), p.reset, verdict, Duration(c.Duration), ok)
	t.args(c.Args)
	if out := strings.TrimRight(c.Result.Output, "\n"); out != "" {
		t.line("    %s%s%s", p.dim, indent(plaintext.Clean(out), "    ", showOutputLines), p.reset)
	}
}

// args: a call's arguments, a line per key.
func (t *storyText) args(raw []byte) {
	p := t.p
	if args, isObj := Args(raw); isObj {
		for _, a := range args {
			t.line("    %s%s:%s %s", p.dim, plaintext.Clean(a.Key), p.reset, indent(plaintext.Clean(a.Value), "      ", showArgLines))
		}
		return
	}
	t.line("    %s", indent(plaintext.Clean(PrettyJSON(raw)), "    ", showArgLines))
}

// files: what the agent created, changed and deleted.
func (t *storyText) files(f *result.FileChanges) {
	if f == nil || f.Total <= 0 {
		return
	}
	p := t.p
	t.line("\n%sfiles%s", p.bold, p.reset)
	for _, x := range f.Created {
		t.line("  %s+ %s%s", p.green, plaintext.Clean(x), p.reset)
	}
	for _, x := range f.Changed {
		t.line("  %s~ %s%s", p.yellow, plaintext.Clean(x), p.reset)
	}
	for _, x := range f.Deleted {
		t.line("  %s- %s%s", p.red, plaintext.Clean(x), p.reset)
	}
}

// indent puts prefix before each line after the first, keeping at most max lines.
func indent(s, prefix string, max int) string {
	lines := strings.Split(s, "\n")
	more := 0
	if len(lines) > max {
		more = len(lines) - max
		lines = lines[:max]
	}
	for i, l := range lines {
		if len(l) > 400 {
			lines[i] = Short(l, 400)
		}
	}
	out := strings.Join(lines, "\n"+prefix)
	if more > 0 {
		out += fmt.Sprintf("\n%s… %d more lines", prefix, more)
	}
	return out
}

// maxShownDiffLines bounds each file's diff in the terminal; the page and changes.json
// have more.
const maxShownDiffLines = 200

// showDiffs prints the text diffs, each line cleaned (no escape of the agent's reaches
// the terminal), coloured by the palette only.
func showDiffs(line func(string, ...any), p palette, d *result.Diffs) {
	line("\n%sdiffs%s", p.bold, p.reset)
	if d.Note != "" {
		line("  %s%s%s", p.dim, plaintext.Clean(d.Note), p.reset)
	}
	for _, f := range d.Files {
		if f.Diff == "" {
			line("  %s%s%s: no diff: %s", p.dim, plaintext.Clean(f.Path), p.reset, plaintext.Clean(f.Skipped))
			continue
		}
		lines := strings.Split(strings.TrimSuffix(f.Diff, "\n"), "\n")
		more := len(lines) - maxShownDiffLines
		if more > 0 {
			lines = lines[:maxShownDiffLines]
		}
		for i, l := range lines {
			colour := ""
			switch lineClass(i, l) {
			case "add":
				colour = p.green
			case "del":
				colour = p.red
			case "hunk", "head":
				colour = p.dim
			}
			line("  %s%s%s", colour, cutLine(plaintext.Clean(l), 400), p.reset)
		}
		if more > 0 || f.Truncated {
			line("  %s… more in changes.json%s", p.dim, p.reset)
		}
	}
}

// cutLine keeps at most n runes of a line, its spaces as they are.
func cutLine(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
