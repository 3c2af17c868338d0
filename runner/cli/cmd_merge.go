package cli

import (
	"fmt"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/merge"
)

// MergeOptions are the flags of `runner merge`.
type MergeOptions struct {
	// Paths are output directories (searched for result.json) and JSON reports.
	Paths []string
	JUnit string
	JSON  string
	// Getenv reads the environment (GITHUB_ACTIONS, NO_COLOR); nil means os.Getenv.
	Getenv func(string) string
	IO
}

func mergeCommand(stdio IO) *cli.Command {
	o := &MergeOptions{IO: stdio}
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the results of shards or resumed runs into one report, as one run would have written it",
		ArgsUsage: "PATH... (output directories holding result.json files, or JSON reports)",
		Description: "Exit codes as for run: 0 all passed, 1 a scenario failed, 3 none failed but some errored.\n\n" +
			"Example, after downloading every shard's runner-out artifact into shards/:\n" +
			"   runner merge shards/ --junit junit.xml --json report.json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "junit", Destination: &o.JUnit, Usage: "write a JUnit XML report to `FILE` (- for standard output; the console then goes to standard error)"},
			&cli.StringFlag{Name: "json", Destination: &o.JSON, Usage: "write a JSON report to `FILE` (- for standard output; the console then goes to standard error)"},
		},
		Action: func(c *cli.Context) error {
			o.Paths = c.Args().Slice()
			return Merge(*o)
		},
	}
}

// Check reports a usage problem.
func (o *MergeOptions) Check() error {
	if len(o.Paths) == 0 {
		return usageError("merge: no result directories or JSON reports given (try: runner merge shards/)")
	}
	return checkReportPaths("merge", o.JSON, o.JUnit)
}

// Merge runs `runner merge`: the console, JSON, JUnit and GitHub outputs of the merged
// run, and run's exit code for it.
func Merge(opts MergeOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	scenarios, err := merge.Load(opts.Paths, merge.Options{Notes: opts.Stderr})
	if err != nil {
		return usage(err)
	}
	run := merge.Combine(scenarios)
	ro := RunOptions{Getenv: opts.Getenv, IO: opts.IO}
	r := ro.reporters(isatty.IsTerminal(fdOf(opts.Stdout)), opts.JSON, opts.JUnit, "")
	r.Start(len(run.Scenarios))
	for _, s := range run.Scenarios {
		r.Finished(s)
	}
	if err := r.Finish(run); err != nil {
		return errored(fmt.Errorf("merge: %w", err))
	}
	_, nFailed, nErrored := run.Counts()
	return outcome(nFailed, nErrored)
}
