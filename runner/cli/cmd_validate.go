package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/session"
)

// ValidateOptions are the flags of `runner validate`.
type ValidateOptions struct {
	Paths []string
	// Oracle runs each task's reference solution and requires it to pass.
	Oracle   bool
	Parallel int
	IO
}

func validateCommand(stdio IO) *cli.Command {
	o := &ValidateOptions{IO: stdio}
	return &cli.Command{
		Name:      "validate",
		Usage:     "check task files (and with --oracle, that each reference solution passes); exit 0, or 2 with every problem listed",
		ArgsUsage: "PATH...",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "oracle", Destination: &o.Oracle, Usage: "run every task's reference solution and require it to pass"},
			&cli.IntFlag{Name: "parallel", Aliases: []string{"j"}, Destination: &o.Parallel, Value: 2, Usage: "`N` scenarios run at once with --oracle"},
		},
		Action: func(c *cli.Context) error {
			o.Paths = c.Args().Slice()
			return Validate(c.Context, *o)
		},
	}
}

// Check reports the first flag value that cannot work, as a usage error.
func (o *ValidateOptions) Check() error {
	if len(o.Paths) == 0 {
		return usageError("validate: no task files given")
	}
	return nil
}

// Validate checks task files; with Oracle it also proves each one solvable, running
// every task on the oracle model in the runtime run builds (session.New).
func Validate(ctx context.Context, opts ValidateOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	if !opts.Oracle {
		tasks, err := session.Load(opts.Paths, opts.Stderr)
		if err != nil {
			return problemLines(opts.Stderr, err)
		}
		printSuites(opts.Stdout, session.SuiteUses(tasks))
		_, _ = fmt.Fprintf(opts.Stdout, "%s valid\n", taskCount(session.CountTasks(tasks))) // console output: a failed write has nowhere to be reported
		return nil
	}
	out, err := os.MkdirTemp("", "runner-validate-")
	if err != nil {
		return errored(fmt.Errorf("validate: %w", err))
	}
	defer func() { _ = os.RemoveAll(out) }() // best effort: a leftover temp file harms nothing
	s, err := session.New(ctx, session.Options{
		Paths: opts.Paths, Model: DefaultModel, OutDir: out, CacheDir: session.DefaultCacheDir(), Warn: opts.Stderr,
	})
	var load *session.LoadError
	switch {
	case errors.As(err, &load):
		return problemLines(opts.Stderr, load.Err)
	case err != nil:
		return inVerb("validate", err)
	}
	tasks := s.Tasks
	plan, err := s.Plan(session.RunOptions{Parallel: max(opts.Parallel, 1), Repeat: 1})
	if err != nil { // no shard, resume or budget: cannot fail
		return inVerb("validate", err)
	}
	run := plan.Run(ctx)
	if in := interrupted(ctx); in != nil {
		return inVerb("validate --oracle", fmt.Errorf("%w: %s", in, unfinished(run.Scenarios, "task")))
	}
	var problems []string
	failed := 0
	for _, s := range run.Scenarios {
		if s.Status == result.Passed {
			continue
		}
		n := len(problems)
		for _, a := range s.Assertions {
			if !a.Passed {
				problems = append(problems, fmt.Sprintf("%s:%d:%d: %sreference solution %s: %s: %s", s.File, max(a.Line, 1), max(a.Column, 1),
					caseOf(s), s.Status, a.Kind, strings.ReplaceAll(a.Message, "\n", " ")))
			}
		}
		if len(problems) == n { // a limit or an error, not an assertion
			problems = append(problems, oracleProblem(s))
		}
		failed++
	}
	if len(problems) > 0 {
		_, _ = fmt.Fprintln(opts.Stderr, strings.Join(problems, "\n")) // console output: a failed write has nowhere to be reported
		return usageError("validate --oracle: %d of %d tasks do not pass with their reference solution", failed, len(tasks))
	}
	printSuites(opts.Stdout, session.SuiteUses(tasks))
	_, _ = fmt.Fprintf(opts.Stdout, "%s valid; every reference solution passes\n", taskCount(session.CountTasks(tasks)))
	return nil
}

// printSuites says which suite files (runner.yaml) gave defaults, and which keys each
// task took from one, so an inherited value is never a surprise.
func printSuites(w io.Writer, uses []session.SuiteUse) {
	for _, u := range uses {
		keys := "nothing: every task sets its own"
		if len(u.Keys) > 0 {
			keys = strings.Join(u.Keys, ", ")
		}
		_, _ = fmt.Fprintf(w, "suite file %s: %d task(s) inherit %s\n", u.Path, u.Tasks, keys) // console output: a failed write has nowhere to be reported
	}
}
