package assert

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/workspace/door"
	toolexec "github.com/agentrunner/runner/tools/exec"
)

const (
	// DefaultCommandTimeout applies when a command check gives no timeout.
	DefaultCommandTimeout = 60 * time.Second
	// tailShown is how much of the output's end a failure message repeats.
	tailShown = 1500
)

type command struct{ task.CommandCheck }

func newCommand(spec any) (Checker, error) {
	s, err := specAs[task.CommandCheck](spec)
	if err == nil {
		err = nonEmpty("run", s.Run)
	}
	if err == nil && s.Timeout < 0 {
		err = fmt.Errorf("timeout %s is negative", s.Timeout)
	}
	return command{s}, err
}

func (c command) Check(ctx context.Context, run *Run) (bool, string) {
	ok, msg, _ := c.CheckTests(ctx, run)
	return ok, msg
}

// CheckTests runs the command; with junit: or format: it also returns each test's result.
//
// Per-test results must agree with the exit code: whatever the report says, a command
// that did not end with exit_code (0 unless written) fails, so a forged summary printed
// after a failing run (an atexit hook in the agent's code) cannot make it pass. A junit:
// report is read from a directory made afresh for this command (see newResultsDir), so
// nothing the agent left behind can stand in for it.
func (c command) CheckTests(ctx context.Context, run *Run) (bool, string, []result.Test) {
	var rd *resultsDir
	if c.JUnit != "" {
		var err error
		if rd, err = newResultsDir(ctx, run); err != nil {
			return false, fmt.Sprintf("cannot make a results directory for `%s`: %v", c.Run, err), nil
		}
		defer rd.remove()
	}
	ok, msg, res := c.run(ctx, run, rd)
	if !c.PerTest() || res == nil || res.Canceled || res.TimedOut {
		return ok, msg, nil
	}
	var tests []result.Test
	if c.JUnit != "" {
		data, err := rd.read(ctx, c.JUnit)
		if msg, ok := door.Blame(err); ok {
			return false, fmt.Sprintf("`%s` exited %d; %s%s", c.Run, res.ExitCode, msg, showTail(res.Output)), nil
		} else if err != nil {
			return false, fmt.Sprintf("`%s` exited %d but wrote no readable JUnit file $%s/%s: %v%s", c.Run, res.ExitCode, ResultsDirEnv, c.JUnit, err, showTail(res.Output)), nil
		}
		if tests, err = ParseJUnit(data); err != nil {
			return false, fmt.Sprintf("`%s` exited %d but $%s/%s is %v", c.Run, res.ExitCode, ResultsDirEnv, c.JUnit, err), nil
		}
	} else {
		var n int
		tests, n = parsePytestCounted(res.Stdout)
		if n > 1 {
			return false, fmt.Sprintf("`%s` exited %d and its output holds %d pytest summaries: only one is pytest's, so none is trusted%s", c.Run, res.ExitCode, n, showTail(res.Output)), nil
		}
	}
	allPassed, summary := summarizeTests(tests)
	switch {
	case len(tests) == 0:
		return false, fmt.Sprintf("`%s` exited %d and reported no tests%s", c.Run, res.ExitCode, showTail(res.Output)), tests
	case res.ExitCode != c.ExitCode:
		how := fmt.Sprintf("exit code %d", res.ExitCode)
		if res.Signal != "" {
			how = "a signal: " + res.Signal
		}
		return false, fmt.Sprintf("`%s` ended with %s, want %d, whatever its report says; %s%s", c.Run, how, c.ExitCode, summary, showTail(res.Output)), tests
	case !allPassed:
		return false, fmt.Sprintf("`%s`: %s", c.Run, summary), tests
	}
	return true, fmt.Sprintf("`%s`: %s", c.Run, summary), tests
}

// run runs the command and judges its exit code and stdout (only its starting, timing
// out and cancellation when the check has per-test results). res is nil when the command
// could not run. rd, when set, is the results directory the command may write, named in
// its environment.
func (c command) run(ctx context.Context, run *Run, rd *resultsDir) (bool, string, *toolexec.ShellResult) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultCommandTimeout
	}
	ws, err := run.workspace()
	if err != nil {
		return false, fmt.Sprintf("cannot run `%s`: %v", c.Run, err), nil
	}
	// The agent's commands' own conditions: the environment built from nothing (no API
	// keys), the sandbox, limits and shared cache, the process group killed at the end.
	ws.Env, ws.Network, ws.Limits, ws.CacheDir, ws.Sandbox = run.Env, run.Network, run.Limits, run.CacheDir, run.Wrap
	ws.CacheSkip = run.CacheSkip
	var env map[string]string
	if rd != nil {
		ws = ws.View()
		if rd.host {
			ws.Writable = append(ws.Writable, rd.dir)
		}
		env = map[string]string{ResultsDirEnv: rd.dir}
	}
	res, err := toolexec.RunShellInput(ctx, ws, c.Run, timeout, nil, env)
	switch {
	case err != nil:
		return false, fmt.Sprintf("cannot run `%s`: %v", c.Run, err), nil
	case res.Canceled:
		return false, fmt.Sprintf("`%s` was interrupted: %v%s", c.Run, ctx.Err(), showTail(res.Output)), &res
	case res.TimedOut:
		return false, fmt.Sprintf("`%s` timed out after %s and was killed%s%s%s", c.Run, timeout, while(res.Stuck), showTail(res.Output), timeoutHint(timeout, res.Stuck)), &res
	case c.PerTest():
		return true, "", &res
	}
	if res.ExitCode != c.ExitCode {
		how := fmt.Sprintf("exit code %d", res.ExitCode)
		if res.Signal != "" {
			how = "a signal: " + res.Signal
		}
		return false, fmt.Sprintf("`%s` ended with %s, want %d%s", c.Run, how, c.ExitCode, showTail(res.Output)), &res
	}
	if c.StdoutContains == "" {
		return true, fmt.Sprintf("`%s` exited %d", c.Run, res.ExitCode), &res
	}
	if !strings.Contains(res.Stdout, c.StdoutContains) {
		return false, fmt.Sprintf("`%s` exited %d but its stdout does not contain %s%s",
			c.Run, res.ExitCode, quote(c.StdoutContains), showTail(res.Stdout)), &res
	}
	return true, fmt.Sprintf("`%s` exited %d and its stdout contains %s", c.Run, res.ExitCode, quote(c.StdoutContains)), &res
}

// while says what a command that timed out was doing: " while compiling Go package fmt
// (load average 14.2 on 2 CPUs)".
func while(s toolexec.Stuck) string {
	switch {
	case s.Doing != "" && s.CPUs > 0:
		return fmt.Sprintf(" while %s (load average %.1f on %d CPUs)", s.Doing, s.Load, s.CPUs)
	case s.Doing != "":
		return " while " + s.Doing
	case s.CPUs > 0:
		return fmt.Sprintf(" (load average %.1f on %d CPUs)", s.Load, s.CPUs)
	}
	return ""
}

// timeoutHint says what to try after a command's timeout: a longer timeout, and on a
// machine running more than it has processors for, fewer scenarios at once.
func timeoutHint(timeout time.Duration, s toolexec.Stuck) string {
	hint := fmt.Sprintf("\nTo try: a longer `timeout:` on this command (%s now)", timeout)
	if s.Busy() {
		hint += fmt.Sprintf("; the machine was busy (load %.1f on %d CPUs): run fewer scenarios at once (-j 1)", s.Load, s.CPUs)
	}
	if strings.Contains(s.Doing, "Go package") {
		hint += "; compiling Go from a cold cache is slow: keep --cache-dir between runs (runner warms it once per run)"
	}
	return hint
}

func showTail(out string) string {
	if strings.TrimSpace(out) == "" {
		return "; no output"
	}
	if len(out) > tailShown {
		out = "…" + strings.ToValidUTF8(out[len(out)-tailShown:], "")
	}
	return "; output tail:\n" + strings.TrimRight(out, "\n")
}
