package cli

import (
	"context"
	"encoding/json"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
)

// ToolOptions are the flags of `runner tool`.
type ToolOptions struct {
	Name      string
	Workspace string
	Args      string
	Sandbox   string
	// Approval is "" (decide as an agent's call in a task without approval settings
	// would be decided: auto mode with the built-in command rules), read-only, or auto
	// (the person running the command approves it: no policy, no command rules).
	Approval string
	Network  bool
	IO
}

// Approval values of `runner tool`.
const (
	toolApprovalAgent    = "agent"
	toolApprovalAuto     = session.ApprovalAuto
	toolApprovalReadOnly = session.ApprovalReadOnly
)

func toolCommand(stdio IO) *cli.Command {
	o := &ToolOptions{IO: stdio}
	var args string
	return &cli.Command{
		Name: "tool",
		Usage: "run one tool call in a workspace, decided and sandboxed as an agent's call would be, and print its result as JSON " +
			"(exit 0 success, 1 tool error or denied, 2 usage)",
		ArgsUsage: "NAME [ARGS_JSON]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Destination: &o.Workspace, Value: ".", Usage: "the workspace directory"},
			&cli.StringFlag{Name: "args", Aliases: []string{"a"}, Destination: &args, Usage: "the arguments as a JSON object (or give them after NAME)"},
			&cli.StringFlag{Name: "sandbox", Destination: &o.Sandbox, Value: "auto", Usage: "confine commands: " + session.SandboxChoices()},
			&cli.StringFlag{Name: "approval", Destination: &o.Approval, Value: toolApprovalAgent, Usage: "agent (the built-in command rules and dynamic approval, as in a task), " +
				"read-only, or auto (you approve the call: no rules)"},
			&cli.BoolFlag{Name: "network", Destination: &o.Network, Usage: "let sandboxed commands and fetch_webpage reach the network, as network: true does"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return usageError("tool: want a tool name and at most one JSON object of arguments, got %d arguments (see runner tools)", c.NArg())
			}
			o.Name, o.Args = c.Args().First(), args
			if c.NArg() == 2 {
				if c.IsSet("args") {
					return usageError("tool: arguments given twice, after the name and with --args")
				}
				o.Args = c.Args().Get(1)
			}
			return RunTool(c.Context, *o)
		},
	}
}

// Check reports the first option that cannot work, as a usage error, and returns the
// approval mode of the call's policy ("" for none).
func (o *ToolOptions) Check() (mode string, err error) {
	if o.Args == "" {
		o.Args = "{}"
	}
	if !session.KnownTool(o.Name) {
		return "", usageError("tool: unknown tool %q (see runner tools)", o.Name)
	}
	if !json.Valid([]byte(o.Args)) {
		return "", usageError("tool: the arguments are not valid JSON: %s", o.Args)
	}
	switch o.Approval {
	case "", toolApprovalAgent:
		mode = session.ApprovalAuto
	case toolApprovalReadOnly:
		mode = session.ApprovalReadOnly
	case toolApprovalAuto:
	default:
		return "", usageError("tool: --approval %q: want agent, read-only or auto", o.Approval)
	}
	if err := session.CheckSandbox(o.Sandbox); err != nil {
		return "", usageError("tool: sandbox: %v", err)
	}
	if info, err := os.Stat(o.Workspace); err != nil || !info.IsDir() {
		return "", usageError("tool: --workspace %s is not a directory", o.Workspace)
	}
	return mode, nil
}

// RunTool runs one tool call and prints the Result as JSON. The call goes through the
// approval policy an agent's call in a task with default settings would meet (the
// built-in command rules included) unless opts.Approval is auto, then through the
// agent's own path, and commands run in the sandbox opts.Sandbox names, probed as a run
// probes it: session.RunCall, with the toolbox a run's scenario gets.
func RunTool(ctx context.Context, opts ToolOptions) error {
	mode, err := opts.Check()
	if err != nil {
		return err
	}
	res, err := session.RunCall(ctx, session.ToolCall{Tool: opts.Name, Args: json.RawMessage(opts.Args), Workspace: opts.Workspace,
		Sandbox: opts.Sandbox, Network: opts.Network, Approval: mode, Notes: opts.Stderr})
	if err != nil {
		return inVerb("tool", err)
	}
	if err := writeJSON(opts.Stdout, res); err != nil {
		return failed(err)
	}
	if !res.Success {
		return failed(nil)
	}
	return nil
}
