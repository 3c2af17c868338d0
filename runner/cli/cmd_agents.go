package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
)

// AgentsOptions are the flags of `runner agents`.
type AgentsOptions struct {
	Format string
	// Check probes each installed agent's program (or only the kinds named) for its version.
	Check bool
	Kinds []string
	IO
}

func agentsCommand(stdio IO) *cli.Command {
	o := &AgentsOptions{IO: stdio}
	return &cli.Command{
		Name:  "agents",
		Usage: "list the agent kinds a task's agent: or --agent can name, and where their programs are",
		Description: "runner (the default) is runner's own loop; every other kind is a program runner starts in the\n" +
			"scenario's workspace and sandbox, talking to runner's model endpoint, which forwards each request\n" +
			"to the run's --model. Programs are looked up on PATH, then in $" + session.AgentsDirEnv + "/node_modules/.bin.",
		ArgsUsage: "[--check [KIND...]]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Destination: &o.Format, Value: "text", Usage: "text or json"},
			&cli.BoolFlag{Name: "check", Destination: &o.Check, Usage: "run each installed agent's version probe (or the named kinds'): " +
				"say what is missing, broken or at another version than runner's tests drive; exit 3 if a program is missing or broken"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 && !o.Check {
				return usageError("agents: kinds are named only with --check, got %q", c.Args().Slice())
			}
			o.Kinds = c.Args().Slice()
			if o.Check {
				return CheckAgents(c.Context, *o)
			}
			return PrintAgents(*o)
		},
	}
}

// agentRow is one kind as `runner agents` shows it, checkRow as `--check` reports it.
type (
	agentRow = session.Agent
	checkRow = session.AgentCheck
)

// PrintAgents lists the registry's rows (session.Agents), in its order.
func PrintAgents(o AgentsOptions) error {
	rows := session.Agents()
	switch o.Format {
	case "json":
		b, _ := json.MarshalIndent(rows, "", "  ") // strings and booleans: cannot fail
		_, err := fmt.Fprintf(o.Stdout, "%s\n", b)
		return err
	case "text", "":
	default:
		return usageError("agents: --format: want text or json, got %q", o.Format)
	}
	tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
	// A tabwriter holds the lines until Flush, which reports a failed write.
	_, _ = fmt.Fprintln(tw, "AGENT\tPROTOCOL\tPROGRAM\tDESCRIPTION")
	for _, r := range rows {
		program, protocol := "(built in)", r.Protocol
		switch {
		case r.Builtin:
			protocol = "-"
		case r.Path != "":
			program = r.Path
		default:
			program = r.Program + " (not installed)"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, protocol, program, r.Help)
	}
	return tw.Flush()
}

// CheckAgents probes the programs of the named kinds (every checkable kind when none is
// named) and reports each: its path, version and tested version, and what is wrong. A
// missing or broken program is an environment not ready to run it: exit 3. A version other
// than the tested one is reported, not an error: it may well work.
func CheckAgents(ctx context.Context, o AgentsOptions) error {
	if o.Format != "json" && o.Format != "text" && o.Format != "" {
		return usageError("agents: --format: want text or json, got %q", o.Format)
	}
	rows, err := session.CheckAgents(ctx, o.Kinds)
	if err != nil {
		return inVerb("agents --check", err)
	}
	if err := printAgentChecks(o, rows); err != nil {
		return err
	}
	bad := 0
	for _, r := range rows {
		if r.Bad() {
			bad++
		}
	}
	if bad > 0 {
		return errored(fmt.Errorf("agents --check: %d of %d agent programs missing or broken", bad, len(rows)))
	}
	return nil
}

// printAgentChecks prints the checks as a table, then each problem, or as JSON.
func printAgentChecks(o AgentsOptions, rows []checkRow) error {
	if o.Format == "json" {
		b, _ := json.MarshalIndent(rows, "", "  ") // strings only: cannot fail
		_, err := fmt.Fprintf(o.Stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "AGENT\tSTATUS\tVERSION\tTESTED\tPROGRAM") // tabwriter buffers: Flush reports a failed write
	for _, r := range rows {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Status, or(r.Version, "-"), or(r.Tested, "-"), or(r.Path, "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Problem != "" {
			if _, err := fmt.Fprintf(o.Stdout, "%s: %s\n", r.Name, r.Problem); err != nil {
				return err
			}
		}
	}
	return nil
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
