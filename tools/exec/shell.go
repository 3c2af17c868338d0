package exec

import (
	"context"
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
	Canceled bool
	Duration time.Duration
}

// RunShell runs `sh -c command` at the root of ws as run_in_terminal does: the same
// environment (WorkspaceEnv), sandbox, limits, process-group kill on timeout or
// cancellation, and output caps; stdout is also kept on its own, for checks such as
// stdout_contains. The error is for a command that could not start at all.
func RunShell(ctx context.Context, ws *tools.Workspace, command string, timeout time.Duration) (ShellResult, error) {
	o, err := run(ctx, ws, spec{
		path:        shell,
		args:        []string{"sh", "-c", command},
		dir:         ws.Dir(),
		env:         WorkspaceEnv(ws, nil),
		timeout:     timeout,
		splitStdout: true,
	})
	if err != nil {
		return ShellResult{}, err
	}
	res := ShellResult{
		Output: o.output, Stdout: o.stdout, ExitCode: o.exitCode,
		TimedOut: o.timedOut, Canceled: o.canceled, Duration: o.duration,
	}
	if o.signal != 0 {
		res.Signal = signalName(o.signal)
	}
	return res, nil
}
