package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
	"github.com/agentrunner/runner/tools/format"
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
	reg := catalog.Default()
	if len(opts.Names) > 0 {
		sub, err := reg.Subset(opts.Names...)
		if err != nil {
			return usageError("tools: %v", err)
		}
		reg = sub
	}
	specs := reg.Specs()
	switch opts.Format {
	case "text":
		return printToolsText(opts.Stdout, specs, reg.Aliases())
	case "json":
		type param struct {
			Name        string `json:"name"`
			Risk        string `json:"risk"`
			Description string `json:"description"`
			Parameters  any    `json:"parameters"`
		}
		out := make([]param, 0, len(specs))
		for _, s := range specs {
			out = append(out, param{Name: s.Name, Risk: string(s.Risk), Description: s.Description, Parameters: s.Parameters})
		}
		return writeJSON(opts.Stdout, out)
	default:
		rendered, err := format.Render(opts.Format, specs)
		if err != nil {
			return usageError("tools: %v", err)
		}
		return writeJSON(opts.Stdout, rendered)
	}
}

func printToolsText(w io.Writer, specs []tools.Spec, aliases []tools.Alias) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "TOOL\tRISK\tPARAMETERS\tALIASES") // tabwriter: the Flush below reports a failed write
	byTarget := map[string][]string{}
	for _, a := range aliases {
		byTarget[a.Target] = append(byTarget[a.Target], a.Name)
	}
	for _, s := range specs {
		var params []string
		for name := range s.Parameters.Properties {
			if contains(s.Parameters.Required, name) {
				name += "*"
			}
			params = append(params, name)
		}
		sort.Strings(params)
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Risk, strings.Join(params, " "), strings.Join(byTarget[s.Name], " "))
	}
	_, _ = fmt.Fprintln(tw, "\n* required. `runner tools --format json NAME` shows descriptions and full schemas.")
	return tw.Flush()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
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
