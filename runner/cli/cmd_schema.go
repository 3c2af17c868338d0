package cli

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/schemas"
)

func schemaCommand(stdio IO) *cli.Command {
	return &cli.Command{
		Name:      "schema",
		Usage:     "print a JSON Schema: task files (default; for editors: # yaml-language-server: $schema=...), suite files (runner.yaml), bench.json, result.json, the --json report or transcript lines",
		ArgsUsage: "[" + strings.Join(schemas.Names, "|") + "]",
		Action: func(c *cli.Context) error {
			name := "task"
			switch c.NArg() {
			case 0:
			case 1:
				name = c.Args().First()
			default:
				return usageError("schema: want at most one of %s", strings.Join(schemas.Names, ", "))
			}
			b, err := schemas.Get(name)
			if err != nil {
				return usageError("schema: %v", err)
			}
			_, err = stdio.Stdout.Write(b)
			return err
		},
	}
}
