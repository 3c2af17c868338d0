package exec

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentrunner/runner/tools"
)

// ShellResult is what RunShell reports about a command that started.
type ShellResult struct {
	// Output is stdout and stderr together, capped at OutputLimit (head and tail kept).
	Output string
	// Stdout is stdout alone, capped the same way.
	Stdout string
	// ExitCode is the exit status, or 128+signal when a signal ended the command.
	ExitCode int
	// Signal names the signal that ended the command ("" when it exited).
	Signal   string
	TimedOut bool
	// Stuck is what a command that timed out was doing when it was killed.
	Stuck    Stuck
	Canceled bool
	Duration time.Duration
}

// RunShell runs `sh -c command` at the root of ws as run_in_terminal does: the same
// environment (WorkspaceEnv), sandbox, limits, process-group kill on timeout or
// cancellation, and output caps; stdout is also kept on its own, for checks such as
// stdout_contains. The error is for a command that could not start at all.
func RunShell(ctx context.Context, ws *tools.Workspace, command string, timeout time.Duration) (ShellResult, error) {
	return RunShellInput(ctx, ws, command, timeout, nil, nil)
}

// RunShellInput is RunShell with stdin (nil for none, as RunShell) and extra environment
// variables on top of WorkspaceEnv's, for tools a task defines (their arguments arrive on
// stdin and in the environment).
func RunShellInput(ctx context.Context, ws *tools.Workspace, command string, timeout time.Duration, stdin []byte, env map[string]string) (ShellResult, error) {
	s := spec{
		path:        shell,
		args:        []string{"sh", "-c", command},
		dir:         ws.Dir(),
		env:         WorkspaceEnv(ws, env),
		timeout:     timeout,
		splitStdout: true,
	}
	if stdin != nil {
		f, err := stdinFile(stdin)
		if err != nil {
			return ShellResult{}, err
		}
		defer func() { _ = f.Close() }() // read only: Close loses no data
		s.stdin = f
	}
	o, err := run(ctx, ws, s)
	if err != nil {
		return ShellResult{}, err
	}
	res := ShellResult{
		Output: o.output, Stdout: o.stdout, ExitCode: o.exitCode,
		TimedOut: o.timedOut, Stuck: o.stuck, Canceled: o.canceled, Duration: o.duration,
	}
	if o.signal != 0 {
		res.Signal = signalName(o.signal)
	}
	return res, nil
}

// stdinFile holds data in an unlinked temporary file, read from its start: the command
// reads it as a regular file, and nothing blocks if the command never reads it.
func stdinFile(data []byte) (*os.File, error) {
	f, err := os.CreateTemp("", "runner-stdin-*")
	if err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	_ = os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		_ = f.Close() // the error above is the one returned
		return nil, fmt.Errorf("stdin: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("stdin: %w", err)
	}
	return f, nil
}
