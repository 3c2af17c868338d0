package cli

import (
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/view"
)

// ShowOptions are the flags of `runner show`.
type ShowOptions struct {
	Out string
	// Scenario names one scenario (its name, name #k, or directory); "" lists them all.
	Scenario string
	// Getenv reads NO_COLOR and CI; nil means os.Getenv.
	Getenv func(string) string
	IO
}

func showCommand(stdio IO) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print what the agent did in a scenario, step by step, in the terminal",
		ArgsUsage: "[OUT [SCENARIO]] (an output directory, default runner-out; a scenario's name or directory)",
		Description: "Without SCENARIO: one line per scenario, failures first. Colour on a terminal, " +
			"none with NO_COLOR or in CI.\n\n" +
			"Examples:\n" +
			"   runner show\n" +
			"   runner show runner-out fix-failing-go-test",
		Action: func(c *cli.Context) error {
			if c.NArg() > 2 {
				return usageError("show: want OUT and at most one SCENARIO, got %d arguments", c.NArg())
			}
			opts := ShowOptions{Out: "runner-out", IO: stdio}
			if c.NArg() > 0 {
				opts.Out = c.Args().Get(0)
			}
			opts.Scenario = c.Args().Get(1)
			return Show(opts)
		},
	}
}

// Show runs `runner show`.
func Show(opts ShowOptions) error {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if info, err := os.Stat(opts.Out); err != nil || !info.IsDir() {
		return usageError("show: %s is not an output directory (try: runner show runner-out)", opts.Out)
	}
	entries, err := view.Load(opts.Out)
	if err != nil {
		return errored(err)
	}
	colour := isatty.IsTerminal(fdOf(opts.Stdout)) && getenv("NO_COLOR") == "" && getenv("CI") == ""
	if opts.Scenario == "" {
		return view.WriteList(opts.Stdout, entries, colour)
	}
	var names []string
	for _, e := range entries {
		if e.Dir == strings.TrimSuffix(opts.Scenario, "/") || e.DisplayName() == opts.Scenario || e.Name == opts.Scenario {
			return view.WriteText(opts.Stdout, view.ReadStory(opts.Out, e), colour)
		}
		names = append(names, e.DisplayName())
	}
	msg := "show: no scenario %q in %s"
	if s := suggestName(opts.Scenario, names); s != "" {
		return usageError(msg+" (did you mean %q?)", opts.Scenario, opts.Out, s)
	}
	return usageError(msg+" (runner show %s lists them)", opts.Scenario, opts.Out, opts.Out)
}

// suggestName is the known name a misspelt one was probably meant to be, or "".
func suggestName(name string, known []string) string { return session.Closest(name, known) }
