// Package exec holds the tools that run programs in the workspace: run_in_terminal,
// terminal_last_command and run_code.
//
// Every command runs in its own session and process group with a scrubbed environment
// (see CommandEnv), stdin at /dev/null, stdout and stderr on one pipe, its output capped at
// OutputLimit (head and tail kept), and a timeout that kills the whole group. When the
// workspace has a Sandbox (see tools/exec/sandbox) the command is wrapped by it first; a
// task's container (tools/exec/container) is such a wrapper too.
//
// The first command makes the runner a child subreaper: descendants that leave the group
// (setsid, a double fork) come back to the runner when orphaned, and are killed once their
// command has ended, with or without a sandbox (see reaper).
package exec

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentrunner/runner/tools"
)

// MaxTimeoutSeconds is the longest timeout_seconds a call may ask for.
const MaxTimeoutSeconds = 300

// Default timeouts, in seconds.
const (
	terminalTimeoutDefault = 30
	runCodeTimeoutDefault  = 60
)

// Suggestions shown to the model with each kind of failure.
const (
	timeoutSuggestion     = "Increase timeout_seconds (at most 300), or make the command do less (a narrower test selection, fewer files)."
	exitSuggestion        = "Read the output above to find the cause, fix it, and try again."
	cancelledSuggestion   = "The run is stopping; do not retry."
	startFailedSuggestion = "Check that the program exists and that the sandbox works (runner prints its sandbox at start-up)."
)

// Tools returns the execution tools: run_in_terminal (dangerous), terminal_last_command
// (read-only) and run_code (dangerous).
func Tools() []tools.Tool {
	return []tools.Tool{terminal{}, lastCommandTool{}, runCode{}}
}

func timeoutSchema(def int) *tools.Schema {
	return tools.Integer(fmt.Sprintf("Seconds before the command and every process it started are killed (1-%d, default %d).", MaxTimeoutSeconds, def)).
		WithRange(1, MaxTimeoutSeconds).WithDefault(def)
}

// timeoutArg returns the timeout argument, falling back to def when absent or out of range
// (the schema has already rejected out-of-range values for calls through a Registry).
func timeoutArg(args tools.Args, def int) time.Duration {
	n := args.Int("timeout_seconds")
	if n < 1 || n > MaxTimeoutSeconds {
		n = def
	}
	return time.Duration(n) * time.Second
}

// resolveDir resolves a working directory argument: inside the workspace and a directory.
func resolveDir(ws *tools.Workspace, p string) (string, *tools.Error) {
	rel, err := ws.Resolve(p)
	if err != nil {
		return "", err
	}
	fi, serr := ws.Root().Stat(rel)
	if serr != nil {
		return "", tools.FileError(serr, rel)
	}
	if !fi.IsDir() {
		return "", tools.Errorf(tools.CodeNotADirectory, "Pass a directory as cwd, or \".\" for the workspace root.", "cwd '%s' is not a directory", rel)
	}
	return rel, nil
}

// toResult turns an outcome into the Result the model reads. The output always ends with
// the exit code, so providers that forward only text still tell the model how it went.
func toResult(o outcome, timeout time.Duration) tools.Result {
	var b strings.Builder
	if o.output == "" {
		b.WriteString("(no output)")
	} else {
		b.WriteString(o.output)
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch {
	case o.timedOut && o.stuck.String() != "":
		fmt.Fprintf(&b, "[timed out after %s while %s: the command and every process it started were killed; exit code %d]", timeout, o.stuck, o.exitCode)
	case o.timedOut:
		fmt.Fprintf(&b, "[timed out after %s: the command and every process it started were killed; exit code %d]", timeout, o.exitCode)
	case o.signal != 0:
		what := signalName(o.signal)
		if m := signalMeanings[o.signal]; m != "" {
			what += ", " + m
		}
		fmt.Fprintf(&b, "[terminated by %s; exit code %d]", what, o.exitCode)
	case limitSignal(o.exitCode) != "":
		// A shell or bwrap between us and the process reports its signal as 128+n.
		fmt.Fprintf(&b, "[exit code %d: %s]", o.exitCode, limitSignal(o.exitCode))
	default:
		fmt.Fprintf(&b, "[exit code %d]", o.exitCode)
	}
	res := tools.Result{Success: true, Output: b.String()}
	switch {
	case o.canceled:
		res.Success = false
		res.Error = tools.Errorf(tools.CodeExecutionError, cancelledSuggestion, "Command was cancelled after %s", o.duration.Round(time.Millisecond))
	case o.timedOut:
		res.Success = false
		res.Error = tools.Errorf(tools.CodeTimeout, timeoutSuggestion, "Command timed out after %s", timeout)
	case o.exitCode != 0:
		res.Success = false
		res.Error = tools.Errorf(tools.CodeExecutionError, exitSuggestion, "Command exited with code %d", o.exitCode)
	}
	res = res.WithMeta("exit_code", o.exitCode).
		WithMeta("timed_out", o.timedOut).
		WithMeta("duration_ms", o.duration.Milliseconds()).
		WithMeta("output_bytes", o.total).
		WithMeta("sandbox", o.sandbox)
	if o.dropped > 0 {
		res = res.WithMeta("dropped_bytes", o.dropped)
	}
	if o.signal != 0 {
		res = res.WithMeta("signal", signalName(o.signal))
	}
	return res
}

// startFailure is the Result for a command that could not be started.
func startFailure(err error) tools.Result {
	return tools.Failf(tools.CodeExecutionError, startFailedSuggestion, "Could not start the command: %v", err)
}
