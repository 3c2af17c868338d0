package exec

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentrunner/runner/tools"
)

// shell runs run_in_terminal's commands. An absolute path: the command's PATH is the
// agent's to change, the shell is not.
const shell = "/bin/sh"

type terminal struct{}

func (terminal) Spec() tools.Spec {
	return tools.Spec{
		Name: "run_in_terminal",
		Description: "Run a shell command (sh -c) in the workspace and return its output (stdout and stderr interleaved) and exit code. " +
			"Use it to build, test, run git and other command-line tools. Each call starts a fresh shell: cd and exports do not carry over " +
			"(pass cwd instead), stdin is empty, and background processes are stopped when the command ends. Output over 1 MiB keeps " +
			"its first and last 512 KiB.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"command":         tools.String("The shell command line to run, e.g. \"go test ./...\".").WithMinLength(1),
			"timeout_seconds": timeoutSchema(terminalTimeoutDefault),
			"cwd":             tools.String("Directory to run in, relative to the workspace root.").WithDefault("."),
		}, "command"),
		Risk: tools.RiskDangerous,
	}
}

func (terminal) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	if strings.TrimSpace(args.String("command")) == "" {
		return tools.Errorf(tools.CodeInvalidArgument, "Pass the command line to run, e.g. {\"command\": \"ls -la\"}.", "command is empty")
	}
	_, err := resolveDir(ws, cwdArg(args))
	return err
}

func cwdArg(args tools.Args) string {
	if cwd := args.String("cwd"); cwd != "" {
		return cwd
	}
	return "."
}

func (terminal) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	command := args.String("command")
	rel, rerr := resolveDir(ws, cwdArg(args))
	if rerr != nil {
		return tools.Fail(rerr)
	}
	timeout := timeoutArg(args, terminalTimeoutDefault)
	executedAt := time.Now()
	o, err := run(ctx, ws, spec{
		path:    shell,
		args:    []string{"sh", "-c", command},
		dir:     ws.Abs(rel),
		env:     WorkspaceEnv(ws, nil),
		timeout: timeout,
	})
	if err != nil {
		return startFailure(err)
	}
	res := toResult(o, timeout).WithMeta("cwd", rel)
	ws.SetValue(lastCommandKey{}, &lastCommand{
		Command:    command,
		Cwd:        rel,
		ExitCode:   o.exitCode,
		TimedOut:   o.timedOut,
		ExecutedAt: executedAt,
		Output:     res.Output,
	})
	return res
}

// RequiresApproval is false: every command is dangerous already (the tool's Risk), and
// command rules judge particular command lines.
func (terminal) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// lastCommandKey is the workspace value key under which run_in_terminal records its last call.
type lastCommandKey struct{}

// lastCommand is the record of the last run_in_terminal call of a run.
type lastCommand struct {
	Command    string
	Cwd        string
	ExitCode   int
	TimedOut   bool
	ExecutedAt time.Time
	Output     string
}

type lastCommandTool struct{}

func (lastCommandTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        "terminal_last_command",
		Description: "Show the last command run with run_in_terminal in this run: the command, its exit code, when it ran and its output.",
		Parameters:  tools.Object(nil),
		Risk:        tools.RiskReadOnly,
	}
}

func (lastCommandTool) Validate(tools.Args, *tools.Workspace) *tools.Error { return nil }

func (lastCommandTool) Execute(_ context.Context, _ tools.Args, ws *tools.Workspace) tools.Result {
	last, _ := ws.Value(lastCommandKey{}).(*lastCommand)
	if last == nil {
		return tools.OK("No command has been run with run_in_terminal yet in this run.").WithMeta("ran", false)
	}
	at := last.ExecutedAt.Format(time.RFC3339)
	status := fmt.Sprint(last.ExitCode)
	if last.TimedOut {
		status += " (timed out)"
	}
	out := fmt.Sprintf("Command: %s\nDirectory: %s\nExit code: %s\nExecuted at: %s\nOutput:\n%s", last.Command, last.Cwd, status, at, last.Output)
	return tools.OK(out).
		WithMeta("ran", true).
		WithMeta("command", last.Command).
		WithMeta("cwd", last.Cwd).
		WithMeta("exit_code", last.ExitCode).
		WithMeta("timed_out", last.TimedOut).
		WithMeta("executed_at", at)
}

func (lastCommandTool) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }
