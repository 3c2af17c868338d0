package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentrunner/runner/runner/result"
)

// ConsoleOptions say how the console output looks.
type ConsoleOptions struct {
	// TTY draws a live progress line (redrawn with \r) and uses symbols for marks. Off,
	// the output is plain lines with no escape codes, for CI logs.
	TTY bool
	// Color wraps marks and statuses in ANSI colours.
	Color bool
	// Verbose lists every assertion and the transcript path under each scenario.
	Verbose bool
	// Width is the terminal width the progress line must fit; 0 means 80.
	Width int
	// OutDir is where transcripts were written, named in the summary.
	OutDir string
	// Reports are the report files written, named in the summary.
	Reports []string
}

// Console reports a run on a terminal or in a CI log. It is safe for concurrent use.
type Console struct {
	mu       sync.Mutex
	w        io.Writer
	opts     ConsoleOptions
	total    int
	done     int
	running  []string // display names, in start order
	progress bool     // a progress line is on screen
	err      error    // the first write error, returned by Finish
}

// NewConsole returns a console reporter writing to w.
func NewConsole(w io.Writer, opts ConsoleOptions) *Console {
	if opts.Width <= 0 {
		opts.Width = 80
	}
	return &Console{w: w, opts: opts}
}

// nameColumn is the width names are padded to, so statuses line up for most names.
const nameColumn = 28

// reasonWidth bounds the reason shown on a scenario line; reports carry it whole.
const reasonWidth = 160

// ANSI sequences, used only when Color or TTY asks for them.
const (
	clearLine = "\r\x1b[K"
	green     = "\x1b[32m"
	red       = "\x1b[31m"
	yellow    = "\x1b[33m"
	reset     = "\x1b[0m"
)

// Start announces the run.
func (c *Console) Start(total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total = total
	if !c.opts.TTY {
		c.printf("Running %s\n", plural(total, "scenario"))
	}
	c.redraw()
}

// Started adds a scenario to the progress line.
func (c *Console) Started(s result.Scenario) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = append(c.running, oneLine(displayName(s), 0))
	c.redraw()
}

// Finished prints the scenario's line (and, verbose, its assertions).
func (c *Console) Finished(s result.Scenario) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done++
	name := oneLine(displayName(s), 0)
	for i, r := range c.running {
		if r == name {
			c.running = append(c.running[:i], c.running[i+1:]...)
			break
		}
	}
	c.clear()
	c.printf("%s\n", c.scenarioLine(s, name))
	for _, w := range s.Warnings {
		// A passing scenario's warnings (a prompt the server truncated) show nowhere else.
		if !strings.Contains(s.Reason, w) {
			c.printf("  %s\n", c.paint(yellow, "warning: "+oneLine(w, 0)))
		}
	}
	if c.opts.Verbose {
		c.details(s)
	}
	c.redraw()
}

// Finish clears the progress line and prints the summary.
func (c *Console) Finish(run result.Run) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clear()
	c.running = nil
	passed, failed, errored := run.Counts()
	counts := []string{c.paint(green, fmt.Sprintf("%d passed", passed))}
	if failed > 0 {
		counts = append(counts, c.paint(red, fmt.Sprintf("%d failed", failed)))
	}
	if errored > 0 {
		counts = append(counts, c.paint(yellow, fmt.Sprintf("%d errored", errored)))
	}
	c.printf("\n%s: %s in %s\n", plural(len(run.Scenarios), "scenario"), strings.Join(counts, ", "), duration(run.Duration.Duration()))
	if w := run.Warmup; w != nil {
		var names []string
		for _, t := range w.Toolchains {
			n := t.Name
			if t.Error != "" {
				n += " (failed)"
			}
			names = append(names, n)
		}
		c.printf("build cache warmed before them: %s in %s\n", strings.Join(names, ", "), duration(w.Duration.Duration()))
	}
	if p, comp := tokens(run); p+comp > 0 {
		c.printf("tokens: %d prompt, %d completion\n", p, comp)
		if cost := run.Cost(); cost.Prices != "" {
			c.printf("cost: %s\n", totalLine(cost))
		}
	}
	for _, st := range []struct {
		status result.Status
		label  string
	}{{result.Failed, "failed"}, {result.Errored, "errors"}} {
		var names []string
		for _, s := range run.Scenarios {
			if verdict(s) == st.status {
				names = append(names, oneLine(displayName(s), 0))
			}
		}
		if len(names) > 0 {
			c.printf("%s: %s\n", st.label, strings.Join(names, ", "))
		}
	}
	if rs := repeatedOf(run); rs != nil {
		c.writeRepeated(rs)
	}
	if c.opts.OutDir != "" {
		c.printf("transcripts: %s\n", c.opts.OutDir)
	}
	if len(c.opts.Reports) > 0 {
		c.printf("reports: %s\n", strings.Join(c.opts.Reports, ", "))
	}
	if c.err != nil {
		return fmt.Errorf("console: %w", c.err)
	}
	return nil
}

func (c *Console) scenarioLine(s result.Scenario, name string) string {
	st := verdict(s)
	mark, colour := c.mark(st)
	line := fmt.Sprintf("%s %-*s %s %9s %7s", c.paint(colour, mark), nameColumn, name,
		c.paint(colour, fmt.Sprintf("%-6s", st)), plural(s.Steps, "step"), duration(s.Duration.Duration()))
	if s.Score != nil {
		line += fmt.Sprintf("  score %.2f", *s.Score)
	}
	if r := reason(s); r != "" {
		// In a CI log the whole reason stays: its end (a hint, the denied call) is often
		// the useful part, and nothing redraws over a long line there.
		width := 0
		if c.opts.TTY {
			width = reasonWidth
		}
		line += "  " + oneLine(r, width)
	}
	return line
}

// details lists a scenario's assertions and transcript, for verbose output.
func (c *Console) details(s result.Scenario) {
	for _, a := range s.Assertions {
		st := result.Passed
		if !a.Passed {
			st = result.Failed
		}
		mark, colour := c.mark(st)
		msg := strings.ReplaceAll(strings.TrimRight(cleanText(a.Message), "\n"), "\n", "\n      ")
		c.printf("    %s %s%s: %s\n", c.paint(colour, mark), position(s.File, a), a.Kind, msg)
	}
	if s.Summary != "" {
		c.printf("    summary: %s\n", oneLine(s.Summary, reasonWidth))
	}
	if s.Transcript != "" {
		c.printf("    transcript: %s\n", s.Transcript)
	}
}

func (c *Console) mark(st result.Status) (mark, colour string) {
	switch st {
	case result.Passed:
		mark, colour = "PASS", green
		if c.opts.TTY {
			mark = "✓"
		}
	case result.Failed:
		mark, colour = "FAIL", red
		if c.opts.TTY {
			mark = "✗"
		}
	default:
		mark, colour = "ERR ", yellow
		if c.opts.TTY {
			mark = "!"
		}
	}
	return mark, colour
}

func (c *Console) paint(colour, s string) string {
	if !c.opts.Color {
		return s
	}
	return colour + s + reset
}

// redraw puts the progress line back, on a TTY, while scenarios remain.
func (c *Console) redraw() {
	if !c.opts.TTY || c.done >= c.total && len(c.running) == 0 {
		return
	}
	line := fmt.Sprintf("[%d/%d] running: %s", c.done, c.total, strings.Join(c.running, ", "))
	if len(c.running) == 0 {
		line = fmt.Sprintf("[%d/%d] waiting", c.done, c.total)
	}
	// One column short of the width: writing the last column makes some terminals wrap,
	// and \r would then only clear the second row.
	if max := c.opts.Width - 1; utf8.RuneCountInString(line) > max {
		line = string([]rune(line)[:max-1]) + "…"
	}
	c.printf("%s%s", clearLine, line)
	c.progress = true
}

func (c *Console) clear() {
	if c.progress {
		c.printf("%s", clearLine)
		c.progress = false
	}
}

func (c *Console) printf(format string, a ...any) {
	if _, err := fmt.Fprintf(c.w, format, a...); err != nil && c.err == nil {
		c.err = err
	}
}

// reason is the one-line explanation of a scenario's outcome.
func reason(s result.Scenario) string {
	if s.Reason != "" || s.Status == result.Passed {
		return s.Reason
	}
	for _, a := range s.Assertions {
		if !a.Passed {
			return a.Kind + ": " + a.Message
		}
	}
	return string(s.Stop)
}

// position renders an assertion's place in its task file ("t.yaml:12:5: "), if known.
func position(file string, a result.Assertion) string {
	if a.Line == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d: ", file, a.Line, a.Column)
}

// duration formats a duration compactly: 0.4s, 12.3s, 2m05s, 1h02m03s.
func duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return d.Round(time.Second).String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
