package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// PolicyCheckOptions are the flags of `runner policy check`.
type PolicyCheckOptions struct {
	Task      string
	Tool      string
	Args      string
	Workspace string
	JSON      bool
	IO
}

func policyCommand(stdio IO) *cli.Command {
	o := &PolicyCheckOptions{IO: stdio}
	return &cli.Command{
		Name:  "policy",
		Usage: "inspect approval policies",
		// `runner help policy` and --help say it; a "help, h" subcommand is noise.
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "print how a task's policy decides one call, and the rule that decided (exit 0 allowed, 1 denied, 2 usage)",
			ArgsUsage: "TASK",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "tool", Aliases: []string{"t"}, Destination: &o.Tool, Required: true, Usage: "tool name or alias"},
				&cli.StringFlag{Name: "args", Aliases: []string{"a"}, Destination: &o.Args, Value: "{}", Usage: "the arguments as a JSON object"},
				&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Destination: &o.Workspace, Usage: "decide as if in this workspace (default: an empty one)"},
				&cli.BoolFlag{Name: "json", Destination: &o.JSON, Usage: "print the decision as JSON"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageError("policy check: want exactly one task file, got %d", c.NArg())
				}
				o.Task = c.Args().First()
				return PolicyCheck(c.Context, *o)
			},
		}},
	}
}

// PolicyCheck decides one call as a run of the task would, without running it.
func PolicyCheck(ctx context.Context, opts PolicyCheckOptions) error {
	reg := catalog.Default()
	t, err := session.LoadTask(opts.Task, reg)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if reg, err = session.Registry(reg, t); err != nil {
		return usageError("policy check: %v", err)
	}
	if t.MCPTool(opts.Tool) {
		return usageError("policy check: %s is an MCP server's tool; its schema and risk are known only once the server runs, in `runner run`", opts.Tool)
	}
	if !json.Valid([]byte(opts.Args)) {
		return usageError("policy check: --args is not valid JSON: %s", opts.Args)
	}
	check := policy.CheckOptions{}
	if opts.Workspace != "" {
		ws, err := tools.OpenWorkspace(opts.Workspace)
		if err != nil {
			return usageError("policy check: %v", err)
		}
		defer func() { _ = ws.Close() }() // a directory handle: Close loses no data
		check.Workspace = ws
	}
	d, warnings, err := policy.CheckCall(ctx, t, reg, opts.Tool, json.RawMessage(opts.Args), check)
	for _, w := range warnings {
		_, _ = fmt.Fprintf(opts.Stderr, "runner: warning: %s\n", w) // console output: a failed write has nowhere to be reported
	}
	if err != nil {
		return usageError("policy check: %v", err)
	}
	if opts.JSON {
		if err := writeJSON(opts.Stdout, d); err != nil {
			return err
		}
	} else {
		verdict := "denied"
		if d.Allowed {
			verdict = "allowed"
		}
		_, _ = fmt.Fprintf(opts.Stdout, "%s by %s\n", verdict, d.By)
		if d.Rule != "" {
			_, _ = fmt.Fprintf(opts.Stdout, "rule: %s\n", d.Rule)
		}
		if d.Reason != "" {
			_, _ = fmt.Fprintf(opts.Stdout, "reason: %s\n", d.Reason)
		}
	}
	if !d.Allowed {
		return &ExitError{Code: ExitFailed}
	}
	return nil
}
