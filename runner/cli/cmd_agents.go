package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/agent/kinds"
)

// AgentsOptions are the flags of `runner agents`.
type AgentsOptions struct {
	Format string
	IO
}

func agentsCommand(stdio IO) *cli.Command {
	o := &AgentsOptions{IO: stdio}
	return &cli.Command{
		Name:  "agents",
		Usage: "list the agent kinds a task's agent: or --agent can name, and where their programs are",
		Description: "runner (the default) is runner's own loop; every other kind is a program runner starts in the\n" +
			"scenario's workspace and sandbox, talking to runner's model endpoint, which forwards each request\n" +
			"to the run's --model. Programs are looked up on PATH, then in $" + kinds.AgentsDirEnv + "/node_modules/.bin.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Destination: &o.Format, Value: "text", Usage: "text or json"},
		},
		Action: func(*cli.Context) error { return PrintAgents(*o) },
	}
}

// agentRow is one kind as `runner agents` shows it.
type agentRow struct {
	Name     string `json:"name"`
	Help     string `json:"help"`
	Builtin  bool   `json:"builtin,omitempty"`
	Program  string `json:"program,omitempty"`
	Protocol string `json:"protocol,omitempty"`
	// Path is where the program was found; Missing says why it was not.
	Path    string `json:"path,omitempty"`
	Missing string `json:"missing,omitempty"`
	Package string `json:"package,omitempty"`
}

// PrintAgents lists the registry's rows (kinds.Kinds), in its order.
func PrintAgents(o AgentsOptions) error {
	rows := make([]agentRow, 0, len(kinds.Kinds))
	for _, k := range kinds.Kinds {
		row := agentRow{Name: k.Name, Help: k.Help, Builtin: k.Builtin, Program: k.Program, Protocol: string(k.Protocol), Package: k.Package}
		if !k.Builtin {
			if p, err := k.Find(os.Getenv("PATH"), os.Getenv(kinds.AgentsDirEnv)); err != nil {
				row.Missing = err.Error()
			} else {
				row.Path = p
			}
		}
		rows = append(rows, row)
	}
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
