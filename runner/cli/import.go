package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/importer"
	"github.com/agentrunner/runner/runner/importer/harbor"
	"github.com/agentrunner/runner/runner/importer/terminalbench"
)

// importFormats are the formats `runner import` reads, by name.
var importFormats = map[string]importer.Format{
	terminalbench.Format.Name: terminalbench.Format,
	harbor.Format.Name:        harbor.Format,
}

func importCommand(stdio IO) *cli.Command {
	names := make([]string, 0, len(importFormats))
	for n := range importFormats {
		names = append(names, n)
	}
	sort.Strings(names)
	var out string
	var fresh bool
	return &cli.Command{
		Name:      "import",
		Usage:     "convert benchmark task directories (" + strings.Join(names, ", ") + ") into runner task files",
		ArgsUsage: "FORMAT DIR (a task directory, or a directory of them)",
		Description: "Each task becomes OUT/<name>.yaml with an environment: built from its Dockerfile, its tests as verify " +
			"files with per-test results, and its solution as the reference. What cannot be carried over is listed per task.\n\n" +
			"Exit codes: 0 every task converted; 1 some were skipped; 2 usage error.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Destination: &out, Value: "imported", Usage: "directory for the task files"},
			&cli.BoolFlag{Name: "fresh-container", Destination: &fresh, Usage: "verify every task in a new container of its image (verify.fresh_container), not the agent's: for tests that need only the workdir"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usageError("import: want FORMAT DIR, got %d arguments", c.NArg())
			}
			f, ok := importFormats[c.Args().Get(0)]
			if !ok {
				return usageError("import: unknown format %q; known: %s", c.Args().Get(0), strings.Join(names, ", "))
			}
			outcomes, err := importer.ImportWith(f, c.Args().Get(1), out, stdio.Stdout, importer.Options{FreshContainer: fresh})
			if err != nil {
				return usage(err)
			}
			skipped := 0
			for _, o := range outcomes {
				if o.Err != nil {
					skipped++
				}
			}
			_, _ = fmt.Fprintf(stdio.Stdout, "%d converted, %d skipped\n", len(outcomes)-skipped, skipped) // console output: a failed write has nowhere to be reported
			return outcome(skipped, 0)
		},
	}
}
