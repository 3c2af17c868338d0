package assert

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/task"
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
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultCommandTimeout
	}
	ws, err := run.workspace()
	if err != nil {
		return false, fmt.Sprintf("cannot run `%s`: %v", c.Run, err)
	}
	// The agent's commands' own conditions: the environment built from nothing (no API
	// keys), the sandbox, limits and shared cache, the process group killed at the end.
	ws.Env, ws.Network, ws.Limits, ws.CacheDir, ws.Sandbox = run.Env, run.Network, run.Limits, run.CacheDir, run.Wrap
	res, err := toolexec.RunShell(ctx, ws, c.Run, timeout)
	switch {
	case err != nil:
		return false, fmt.Sprintf("cannot run `%s`: %v", c.Run, err)
	case res.Canceled:
		return false, fmt.Sprintf("`%s` was interrupted: %v%s", c.Run, ctx.Err(), showTail(res.Output))
	case res.TimedOut:
		return false, fmt.Sprintf("`%s` timed out after %s and was killed%s", c.Run, timeout, showTail(res.Output))
	}
	if res.ExitCode != c.ExitCode {
		how := fmt.Sprintf("exit code %d", res.ExitCode)
		if res.Signal != "" {
			how = "a signal: " + res.Signal
		}
		return false, fmt.Sprintf("`%s` ended with %s, want %d%s", c.Run, how, c.ExitCode, showTail(res.Output))
	}
	if c.StdoutContains == "" {
		return true, fmt.Sprintf("`%s` exited %d", c.Run, res.ExitCode)
	}
	if !strings.Contains(res.Stdout, c.StdoutContains) {
		return false, fmt.Sprintf("`%s` exited %d but its stdout does not contain %s%s",
			c.Run, res.ExitCode, quote(c.StdoutContains), showTail(res.Stdout))
	}
	return true, fmt.Sprintf("`%s` exited %d and its stdout contains %s", c.Run, res.ExitCode, quote(c.StdoutContains))
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
