package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
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

// Check reports the first option that cannot work, as a usage error.
func (o *PolicyCheckOptions) Check() error {
	if !json.Valid([]byte(o.Args)) {
		return usageError("policy check: --args is not valid JSON: %s", o.Args)
	}
	return nil
}

// PolicyCheck decides one call as a run of the task would, without running it: with the
// toolbox the task's scenario gets (session.CheckCall).
func PolicyCheck(ctx context.Context, opts PolicyCheckOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	d, warnings, err := session.CheckCall(ctx, session.PolicyCheck{Task: opts.Task, Tool: opts.Tool, Args: json.RawMessage(opts.Args), Workspace: opts.Workspace})
	for _, w := range warnings {
		_, _ = fmt.Fprintf(opts.Stderr, "runner: warning: %s\n", w) // console output: a failed write has nowhere to be reported
	}
	if err != nil {
		return inVerb("policy check", err)
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
		return failed(nil)
	}
	return nil
}
