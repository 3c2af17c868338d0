package assert

import (
	"context"
	"fmt"
	"regexp"

	"github.com/agentrunner/runner/runner/task"
)

type completed struct{ want bool }

func newCompleted(spec any) (Checker, error) {
	b, err := specAs[bool](spec)
	return completed{b}, err
}

func (c completed) Check(_ context.Context, run *Run) (bool, string) {
	switch {
	case run.Completed && c.want:
		return true, "task_complete was called"
	case run.Completed:
		return false, "task_complete was called, want it not called"
	case c.want:
		return false, fmt.Sprintf("task_complete was not called (the agent stopped after %s)", plural(run.Steps, "step"))
	}
	return true, "task_complete was not called, as wanted"
}

type toolCalled struct {
	name     string
	args     *regexp.Regexp // nil: any arguments
	min, max int
}

func newToolCalled(spec any) (Checker, error) {
	s, err := specAs[task.ToolCalled](spec)
	if err != nil {
		return nil, err
	}
	if err := nonEmpty("name", s.Name); err != nil {
		return nil, err
	}
	// The loader defaults min to 1 when it is left out; an explicit 0 with a max means
	// "at most max times".
	c := toolCalled{name: s.Name, min: s.Min, max: s.Max}
	if c.min < 0 {
		return nil, fmt.Errorf("min %d is negative", s.Min)
	}
	if c.max < 0 || (c.max > 0 && c.max < c.min) {
		return nil, fmt.Errorf("max %d is below min %d", s.Max, c.min)
	}
	if s.ArgsMatch != "" {
		if c.args, err = regexp.Compile(s.ArgsMatch); err != nil {
			return nil, fmt.Errorf("args_match: %w", err)
		}
	}
	return c, nil
}

func (c toolCalled) Check(_ context.Context, run *Run) (bool, string) {
	n, denied := 0, 0
	for _, call := range run.Calls {
		if call.Tool != c.name || (c.args != nil && !c.args.MatchString(call.Args)) {
			continue
		}
		if call.Executed {
			n++
		} else if call.Denied {
			denied++
		}
	}
	want := fmt.Sprintf("at least %d", c.min)
	if c.max > 0 {
		want = fmt.Sprintf("%d to %d", c.min, c.max)
	}
	what := c.name
	if c.args != nil {
		what += fmt.Sprintf(" with arguments matching /%s/", c.args)
	}
	msg := fmt.Sprintf("%s was executed %s (want %s)", what, plural(n, "time"), want)
	if denied > 0 {
		msg += fmt.Sprintf("; %s denied and not counted", plural(denied, "more call"))
	}
	return n >= c.min && (c.max == 0 || n <= c.max), msg
}

type toolNotCalled struct{ name string }

func newToolNotCalled(spec any) (Checker, error) {
	s, err := specAs[string](spec)
	if err == nil {
		err = nonEmpty("name", s)
	}
	return toolNotCalled{s}, err
}

func (c toolNotCalled) Check(_ context.Context, run *Run) (bool, string) {
	n, first := 0, ""
	for _, call := range run.Calls {
		if call.Tool == c.name && call.Executed {
			if n == 0 {
				first = call.Args
			}
			n++
		}
	}
	if n == 0 {
		return true, c.name + " was not executed"
	}
	return false, fmt.Sprintf("%s was executed %s, want never; first call: %s", c.name, plural(n, "time"), quote(first))
}

type stepsAtMost struct{ max int }

func newStepsAtMost(spec any) (Checker, error) {
	n, err := specInt(spec)
	if err == nil && n < 0 {
		err = fmt.Errorf("%d is negative", n)
	}
	return stepsAtMost{n}, err
}

func (c stepsAtMost) Check(_ context.Context, run *Run) (bool, string) {
	return run.Steps <= c.max, fmt.Sprintf("the agent took %s (at most %d allowed)", plural(run.Steps, "step"), c.max)
}

type deniedAtMost struct{ max int }

func newDeniedAtMost(spec any) (Checker, error) {
	n, err := specInt(spec)
	if err == nil && n < 0 {
		err = fmt.Errorf("%d is negative", n)
	}
	return deniedAtMost{n}, err
}

func (c deniedAtMost) Check(_ context.Context, run *Run) (bool, string) {
	n := 0
	for _, call := range run.Calls {
		if call.Denied {
			n++
		}
	}
	return n <= c.max, fmt.Sprintf("%s denied (at most %d allowed)", plural(n, "call"), c.max)
}

type summaryMatches struct{ re *regexp.Regexp }

func newSummaryMatches(spec any) (Checker, error) {
	s, err := specAs[string](spec)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, fmt.Errorf("regex: %w", err)
	}
	return summaryMatches{re}, nil
}

func (c summaryMatches) Check(_ context.Context, run *Run) (bool, string) {
	if !run.Completed {
		return false, fmt.Sprintf("no summary to match /%s/: task_complete was not called", c.re)
	}
	if c.re.MatchString(run.Summary) {
		return true, fmt.Sprintf("the summary matches /%s/: %s", c.re, quote(run.Summary))
	}
	return false, fmt.Sprintf("the summary does not match /%s/: %s", c.re, quote(run.Summary))
}
