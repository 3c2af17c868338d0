package view

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentrunner/runner/runner/result"
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
		line := fmt.Sprintf("%s %s%s%s  %s  %d steps  %s", p.status(e.Status), p.bold, Clean(e.DisplayName()), p.reset,
			Clean(e.Model), e.Steps, Duration(result.Millis(e.Duration.Duration())))
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
	p := colours(colour)
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("%s %s%s%s  (%s)", p.status(st.Status), p.bold, Clean(st.DisplayName()), p.reset, Clean(st.Model))
	loc := Clean(st.File)
	if st.Line > 0 {
		loc += fmt.Sprintf(":%d", st.Line)
	}
	cost := ""
	if st.Cost != nil {
		cost = " · cost " + result.FormatUSD(st.Cost.USD)
	}
	line("%s%s · stopped: %s · %d steps · %s · %d tokens%s%s", p.dim, loc, st.Stop, st.Steps, Duration(st.Duration),
		st.Usage.PromptTokens+st.Usage.CompletionTokens, cost, p.reset)
	if st.Reason != "" {
		line("%sreason:%s %s", p.bold, p.reset, indent(Clean(st.Reason), "  ", 20))
	}
	if st.Problem != "" {
		line("%stranscript: %s%s", p.yellow, Clean(st.Problem), p.reset)
	}
	if len(st.Assertions) > 0 {
		line("\n%sassertions%s", p.bold, p.reset)
		for _, a := range st.Assertions {
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
			line("  %s %s: %s%s", mark, a.Kind, indent(Clean(a.Message), "      ", 10), at)
			if a.Judge != nil {
				line("      judge %s: score %.2f (at least %.2f): %s", Clean(a.Judge.Model), a.Judge.Score, a.Judge.MinScore, Short(a.Judge.Reasoning, 300))
			}
			for _, t := range a.Tests {
				if t.Status == result.TestFailed || t.Status == result.TestError {
					line("      %s✗%s %s %s", p.red, p.reset, Clean(t.Name), Short(t.Message, 120))
				}
			}
		}
	}
	if st.Start != nil {
		line("\n%sprompt%s", p.bold, p.reset)
		line("  %s", indent(Clean(strings.TrimSpace(st.Start.Prompt)), "  ", 20))
		for _, wr := range st.Start.Warnings {
			line("  %swarning: %s%s", p.yellow, Clean(wr), p.reset)
		}
	}
	for _, s := range st.Turns {
		head := fmt.Sprintf("\n%sstep %d%s", p.bold, s.N, p.reset)
		if s.Response != nil {
			head += fmt.Sprintf(" %s%s, %d+%d tokens%s", p.dim, Duration(s.Response.Duration), s.Response.Usage.PromptTokens, s.Response.Usage.CompletionTokens, p.reset)
		}
		line("%s", head)
		for _, r := range s.Retries {
			line("  %sattempt %d failed: %s%s", p.yellow, r.Attempt, Short(r.Error, 200), p.reset)
		}
		if s.ModelErr != nil {
			line("  %smodel error: %s%s", p.red, Short(s.ModelErr.Error, 300), p.reset)
		}
		if s.Response != nil && strings.TrimSpace(s.Response.Content) != "" {
			line("  %s", indent(Clean(strings.TrimSpace(s.Response.Content)), "  ", showOutputLines))
		}
		for _, c := range s.Calls {
			verdict := ""
			if c.Decision != nil {
				if c.Decision.Decision.Allowed {
					verdict = p.dim + " allowed by " + Clean(c.Decision.Decision.By) + p.reset
				} else {
					verdict = p.red + " denied by " + Clean(c.Decision.Decision.By) + p.reset
				}
			}
			ok := p.green + "ok" + p.reset
			if !c.Result.Success {
				ok = p.red + "failed" + p.reset
				if c.Result.Error != nil {
					ok = p.red + string(c.Result.Error.Code) + p.reset
				}
			}
			line("  %s→ %s%s%s %s %s", p.bold, Clean(c.Name), p.reset, verdict, Duration(c.Duration), ok)
			if args, isObj := Args(c.Args); isObj {
				for _, a := range args {
					line("    %s%s:%s %s", p.dim, Clean(a.Key), p.reset, indent(Clean(a.Value), "      ", showArgLines))
				}
			} else {
				line("    %s", indent(Clean(PrettyJSON(c.Args)), "    ", showArgLines))
			}
			if out := strings.TrimRight(c.Result.Output, "\n"); out != "" {
				line("    %s%s%s", p.dim, indent(Clean(out), "    ", showOutputLines), p.reset)
			}
		}
		if s.Reminder != "" {
			line("  %s(no tool call: reminded)%s", p.dim, p.reset)
		}
	}
	if f := st.Files; f != nil && f.Total > 0 {
		line("\n%sfiles%s", p.bold, p.reset)
		for _, x := range f.Created {
			line("  %s+ %s%s", p.green, Clean(x), p.reset)
		}
		for _, x := range f.Changed {
			line("  %s~ %s%s", p.yellow, Clean(x), p.reset)
		}
		for _, x := range f.Deleted {
			line("  %s- %s%s", p.red, Clean(x), p.reset)
		}
	}
	if d := st.Diffs; d != nil {
		showDiffs(line, p, d)
	}
	_, err := io.WriteString(w, b.String())
	return err
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
		line("  %s%s%s", p.dim, Clean(d.Note), p.reset)
	}
	for _, f := range d.Files {
		if f.Diff == "" {
			line("  %s%s%s: no diff: %s", p.dim, Clean(f.Path), p.reset, Clean(f.Skipped))
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
			line("  %s%s%s", colour, cutLine(Clean(l), 400), p.reset)
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
