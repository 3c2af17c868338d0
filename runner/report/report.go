// Package report turns a run's results into what people and CI read: a live console
// (TTY or plain), a JSON report and a JUnit XML report. Every output is a Reporter, so
// the CLI drives a list of them the same way whatever the flags asked for.
package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/version"
)

// Reporter is one output of a run. Started and Finished may be called from several
// goroutines at once (scenarios run in parallel); Start comes first and Finish last.
type Reporter interface {
	// Start announces how many scenarios will run.
	Start(total int)
	// Started says a scenario began; only Name and Repeat are read.
	Started(s result.Scenario)
	// Finished hands over a finished scenario.
	Finished(s result.Scenario)
	// Finish ends the run; file outputs are written here.
	Finish(run result.Run) error
}

// WriteFunc renders a finished run in one file format: WriteJSON, or JUnit(opts).
type WriteFunc func(w io.Writer, run result.Run) error

// Multi returns a Reporter that forwards every call to each of rs in order. Finish
// calls every Finish, even after a failure, and joins their errors.
func Multi(rs ...Reporter) Reporter { return multi(rs) }

type multi []Reporter

func (m multi) Start(total int) {
	for _, r := range m {
		r.Start(total)
	}
}

func (m multi) Started(s result.Scenario) {
	for _, r := range m {
		r.Started(s)
	}
}

func (m multi) Finished(s result.Scenario) {
	for _, r := range m {
		r.Finished(s)
	}
}

func (m multi) Finish(run result.Run) error {
	var errs []error
	for _, r := range m {
		errs = append(errs, r.Finish(run))
	}
	return errors.Join(errs...)
}

// Stdout is the path that names standard output for a report file (--json -, --junit -).
const Stdout = "-"

// Stream returns a Reporter that writes the whole run to w when the run finishes (a
// report asked for on standard output).
func Stream(w io.Writer, write WriteFunc) Reporter { return &stream{w: w, write: write} }

type stream struct {
	w     io.Writer
	write WriteFunc
}

func (*stream) Start(int)                {}
func (*stream) Started(result.Scenario)  {}
func (*stream) Finished(result.Scenario) {}

func (s *stream) Finish(run result.Run) error {
	if err := s.write(s.w, run); err != nil {
		return fmt.Errorf("write report to standard output: %w", err)
	}
	return nil
}

// File returns a Reporter that writes the whole run to path when the run finishes. The
// file is written beside its final name and renamed into place, so a reader (or a
// crash) never sees half a report.
func File(path string, write WriteFunc) Reporter { return &file{path: path, write: write} }

type file struct {
	path  string
	write WriteFunc
}

func (*file) Start(int)                {}
func (*file) Started(result.Scenario)  {}
func (*file) Finished(result.Scenario) {}

func (f *file) Finish(run result.Run) error {
	if err := writeFileAtomic(f.path, func(w io.Writer) error { return f.write(w, run) }); err != nil {
		return fmt.Errorf("write report %s: %w", f.path, err)
	}
	return nil
}

// writeFileAtomic replaces path with what write writes, scrubbed, through a temporary
// file (scrub.Output), creating its directory.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return scrub.Output{}.Replace(path, write)
}

// displayName is a scenario's name as reports show it: "name #K" (K from 1) for every run of a
// repeated scenario (result.Scenario.DisplayName).
func displayName(s result.Scenario) string { return s.DisplayName() }

// tokens totals a run's usage.
func tokens(run result.Run) (prompt, completion int) {
	for _, s := range run.Scenarios {
		prompt = result.AddCount(prompt, s.Usage.PromptTokens)
		completion = result.AddCount(completion, s.Usage.CompletionTokens)
	}
	return prompt, completion
}

// runnerVersion is the runner build(s) that produced the run's results, comma-separated
// when merged shards differ, else this build's (so a report rebuilt from result files
// says what made the results, not what merged them).
func runnerVersion(run result.Run) string {
	var vs []string
	seen := map[string]bool{}
	for _, s := range run.Scenarios {
		if v := s.RunnerVersion; v != "" && !seen[v] {
			seen[v] = true
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return version.String()
	}
	return strings.Join(vs, ",")
}

// seconds formats a duration for JUnit: seconds with millisecond precision.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// verdict is a scenario's status, with anything unknown counted as an error, as
// result.Run.Counts does.
func verdict(s result.Scenario) result.Status {
	if s.Status == result.Passed || s.Status == result.Failed {
		return s.Status
	}
	return result.Errored
}
