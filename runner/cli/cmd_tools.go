package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
)

// ToolsOptions are the flags of `runner tools`.
type ToolsOptions struct {
	Format string
	Names  []string
	IO
}

func toolsCommand(stdio IO) *cli.Command {
	o := &ToolsOptions{IO: stdio}
	return &cli.Command{
		Name:      "tools",
		Usage:     "print the tool catalog, as text, JSON or a provider's tool definitions",
		ArgsUsage: "[NAME...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Destination: &o.Format, Value: "text", Usage: "text, json, openai, anthropic, gemini or ollama"},
		},
		Action: func(c *cli.Context) error {
			o.Names = c.Args().Slice()
			return PrintTools(*o)
		},
	}
}

// PrintTools prints the catalog, or the named tools, in the requested format.
func PrintTools(opts ToolsOptions) error {
	switch opts.Format {
	case "text", "json":
	default:
		rendered, err := session.RenderTools(opts.Format, opts.Names)
		if err != nil {
			return usageError("tools: %v", err)
		}
		return writeJSON(opts.Stdout, rendered)
	}
	list, err := session.Tools(opts.Names)
	if err != nil {
		return usageError("tools: %v", err)
	}
	if opts.Format == "json" {
		return writeJSON(opts.Stdout, list)
	}
	tw := tabwriter.NewWriter(opts.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "TOOL\tRISK\tPARAMETERS\tALIASES") // tabwriter: the Flush below reports a failed write
	for _, t := range list {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Risk, strings.Join(t.Params, " "), strings.Join(t.Aliases, " "))
	}
	_, _ = fmt.Fprintln(tw, "\n* required. `runner tools --format json NAME` shows descriptions and full schemas.")
	return tw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
