package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
	"github.com/agentrunner/runner/tools/exec"
	"github.com/agentrunner/runner/tools/exec/sandbox"
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
	toolApprovalAuto     = task.ModeAuto
	toolApprovalReadOnly = task.ModeReadOnly
)

func toolCommand(stdio IO) *cli.Command {
	return &cli.Command{
		Name: "tool",
		Usage: "run one tool call in a workspace, decided and sandboxed as an agent's call would be, and print its result as JSON " +
			"(exit 0 success, 1 tool error or denied, 2 usage)",
		ArgsUsage: "NAME [ARGS_JSON]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Value: ".", Usage: "the workspace directory"},
			&cli.StringFlag{Name: "args", Aliases: []string{"a"}, Usage: "the arguments as a JSON object (or give them after NAME)"},
			&cli.StringFlag{Name: "sandbox", Value: "auto", Usage: "confine commands: " + sandbox.ModeChoices()},
			&cli.StringFlag{Name: "approval", Value: toolApprovalAgent, Usage: "agent (the built-in command rules and dynamic approval, as in a task), " +
				"read-only, or auto (you approve the call: no rules)"},
			&cli.BoolFlag{Name: "network", Usage: "let sandboxed commands and fetch_webpage reach the network, as network: true does"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return usageError("tool: want a tool name and at most one JSON object of arguments, got %d arguments (see runner tools)", c.NArg())
			}
			args := c.String("args")
			if c.NArg() == 2 {
				if c.IsSet("args") {
					return usageError("tool: arguments given twice, after the name and with --args")
				}
				args = c.Args().Get(1)
			}
			if args == "" {
				args = "{}"
			}
			return RunTool(c, ToolOptions{
				Name: c.Args().First(), Workspace: c.String("workspace"), Args: args,
				Sandbox: c.String("sandbox"), Approval: c.String("approval"), Network: c.Bool("network"), IO: stdio,
			})
		},
	}
}

// commandTools are the tools that run commands, the only ones a sandbox confines.
func commandTools() map[string]bool {
	out := map[string]bool{}
	for _, t := range exec.Tools() {
		out[t.Spec().Name] = true
	}
	return out
}

// RunTool runs one tool call and prints the Result as JSON. The call goes through the
// approval policy an agent's call in a task with default settings would meet (the
// built-in command rules included) unless opts.Approval is auto, and commands run in
// the sandbox opts.Sandbox names.
func RunTool(c *cli.Context, opts ToolOptions) error {
	reg := catalog.Default()
	_, canonical, ok := reg.Lookup(opts.Name)
	if !ok {
		return usageError("tool: unknown tool %q (see runner tools)", opts.Name)
	}
	if !json.Valid([]byte(opts.Args)) {
		return usageError("tool: the arguments are not valid JSON: %s", opts.Args)
	}
	var mode string
	switch opts.Approval {
	case "", toolApprovalAgent:
		mode = task.ModeAuto
	case toolApprovalReadOnly:
		mode = task.ModeReadOnly
	case toolApprovalAuto:
	default:
		return usageError("tool: --approval %q: want agent, read-only or auto", opts.Approval)
	}
	if info, err := os.Stat(opts.Workspace); err != nil || !info.IsDir() {
		return usageError("tool: --workspace %s is not a directory", opts.Workspace)
	}
	ws, err := tools.OpenWorkspace(opts.Workspace)
	if err != nil {
		return usageError("tool: %v", err)
	}
	defer ws.Close()
	ws.Network = opts.Network
	// Only command tools are sandboxed: probing (and warning about) a sandbox for a
	// read_file would be noise.
	if commandTools()[canonical] {
		wrap, note, err := sandbox.Probe(c.Context, opts.Sandbox)
		if err != nil {
			return usageError("tool: sandbox: %v", err)
		}
		if note != "" {
			fmt.Fprintf(opts.Stderr, "runner: %s\n", note)
		}
		ws.Sandbox = wrap
	} else {
		if err := sandbox.CheckMode(opts.Sandbox); err != nil {
			return usageError("tool: sandbox: %v", err)
		}
	}
	res := runToolCall(c, reg, opts.Name, json.RawMessage(opts.Args), ws, mode)
	if err := writeJSON(opts.Stdout, res); err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	if !res.Success {
		return &ExitError{Code: ExitFailed}
	}
	return nil
}

// runToolCall prepares the call, lets the policy of mode decide it ("" means no
// policy) and runs it when allowed.
func runToolCall(c *cli.Context, reg *tools.Registry, name string, raw json.RawMessage, ws *tools.Workspace, mode string) tools.Result {
	call, terr := reg.Prepare(name, raw)
	if terr != nil {
		return tools.Fail(terr)
	}
	if mode != "" {
		p, err := policy.New(task.Approval{Mode: mode}, nil, policy.Options{Resolve: reg.Canonical})
		if err != nil { // a fixed mode and no rules: cannot fail
			return tools.Failf(tools.CodeExecutionError, "", "approval policy: %v", err)
		}
		if d := p.Decide(c.Context, call, ws); !d.Allowed {
			return policy.DeniedResult(d, call)
		}
	}
	return reg.Execute(c.Context, call, ws)
}
