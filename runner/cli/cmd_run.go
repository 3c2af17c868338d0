package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/report"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/session"
)

// DefaultModel runs the tasks' reference solutions: it needs no model server.
const DefaultModel = session.DefaultModel

// RunOptions are the flags of `runner run`.
type RunOptions struct {
	Paths  []string
	Model  string
	OutDir string
	JUnit  string
	JSON   string
	// Parallel is the scenarios run at once; Repeat the runs of each.
	Parallel       int
	Repeat         int
	KeepWorkspaces bool
	ScenarioOptions
	// Engine is the container engine of tasks with an environment ("" for podman or docker on PATH).
	Engine string
	// RunID labels the run's containers (runner.run=ID); "" for a random one.
	RunID string
	// Shard is "I/N" or "auto[/N]": run only this part of the suite ("" for all).
	Shard string
	// Resume and RerunFailed name an earlier run's output directory whose finished
	// (Resume) or passed (RerunFailed) results are reported instead of run again.
	Resume, RerunFailed string
	ReachOptions
	// TTY forces the live console (nil: detect from Stdout).
	TTY *bool
	// Getenv reads the environment (GITHUB_ACTIONS, JOB_COMPLETION_INDEX, NO_COLOR);
	// nil means os.Getenv.
	Getenv func(string) string
	IO
}

// ScenarioOptions are the flags `run` and `bench` share: overrides of every task's limits
// and policy, the sandbox, the build cache and the model client.
type ScenarioOptions struct {
	// MaxSteps and Timeout, when not 0, override every task's.
	MaxSteps int
	Timeout  time.Duration
	// Filter keeps the scenarios whose name matches ("" for all).
	Filter string
	// Approval and Sandbox, when set, override every task's mode.
	Approval string
	Sandbox  string
	// Agent, when set, is every task's agent kind.
	Agent string
	// CacheDir is the shared build cache of commands ("" for none).
	CacheDir string
	// Stream asks model servers for streamed responses.
	Stream bool
	// RequestTimeout bounds each model request; Retries is the attempts per step.
	RequestTimeout time.Duration
	Retries        int
	CaseOptions
}

// flags binds the shared flags to o.
func (o *ScenarioOptions) flags() []cli.Flag {
	return append([]cli.Flag{
		&cli.IntFlag{Name: "max-steps", Destination: &o.MaxSteps, Usage: "`N` steps at most, for every task", DefaultText: "the task's"},
		&cli.DurationFlag{Name: "timeout", Destination: &o.Timeout, Usage: "`DURATION` (90s, 5m) for every task", DefaultText: "the task's"},
		&cli.StringFlag{Name: "filter", Destination: &o.Filter, Usage: "run only scenarios whose name matches `REGEX`"},
		&cli.StringFlag{Name: "approval", Destination: &o.Approval, Usage: "approval `MODE` for every task: " + session.ApprovalChoices(), DefaultText: "the task's"},
		&cli.StringFlag{Name: "sandbox", Destination: &o.Sandbox, Usage: "sandbox `MODE` for every task: " + session.SandboxChoices(), DefaultText: "the task's"},
		&cli.StringFlag{Name: "agent", Destination: &o.Agent, Usage: "agent `KIND` for every task: " + session.AgentChoices() + " (runner agents lists them); bench compares a comma-separated list on each model", DefaultText: "the task's, else runner"},
		&cli.StringFlag{Name: "cache-dir", Destination: &o.CacheDir, Value: session.DefaultCacheDir(), Usage: "build cache `DIR` shared by commands (XDG_CACHE_HOME: Go, pip), read-only to them (setup commands write it); empty for none"},
		&cli.BoolFlag{Name: "stream", Destination: &o.Stream, Usage: "ask the model server for streamed responses"},
		&cli.DurationFlag{Name: "request-timeout", Destination: &o.RequestTimeout, Value: 5 * time.Minute, Usage: "`DURATION` bound on each model request"},
		&cli.IntFlag{Name: "retries", Destination: &o.Retries, Value: 4, Usage: "`N` attempts per model request on connection errors, 429 and 5xx"},
	}, o.CaseOptions.flags()...)
}

// check reports the first shared flag value that cannot work, as a usage error of verb.
func (o *ScenarioOptions) check(verb string) error {
	if err := session.CheckApproval(o.Approval); err != nil {
		return usageError("%s: --approval: %v", verb, err)
	}
	if err := session.CheckSandbox(o.Sandbox); err != nil {
		return usageError("%s: --sandbox: %v", verb, err)
	}
	agents := agentList(o.Agent)
	for _, a := range agents {
		if err := session.CheckAgent(a); err != nil {
			return usageError("%s: --agent: %v", verb, err)
		}
	}
	if len(agents) > 1 && verb != "bench" {
		return usageError("%s: --agent given %d agents (%s): %s takes one; compare agents with runner bench --agent %s",
			verb, len(agents), strings.Join(agents, ", "), verb, strings.Join(agents, ","))
	}
	return o.CaseOptions.check(verb)
}

// agentList splits --agent's comma-separated kinds (blanks and duplicates dropped).
func agentList(v string) []string {
	var out []string
	for _, a := range strings.Split(v, ",") {
		if a = strings.TrimSpace(a); a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// session is what the shared flags ask of the runtime; the command fills in the rest.
func (o *ScenarioOptions) session(paths []string, outDir string, warn io.Writer) session.Options {
	so := session.Options{
		Paths: paths, Filter: o.Filter, OutDir: outDir, MaxSteps: o.MaxSteps, Timeout: o.Timeout,
		Approval: o.Approval, Sandbox: o.Sandbox, Agent: o.Agent, CacheDir: o.CacheDir, Warn: warn,
		Open:      session.ModelOptions{Stream: o.Stream, RequestTimeout: o.RequestTimeout, Retries: o.Retries},
		KeepGoing: true, // one task file that does not load stops no other (see loadProblems)
		OnMoved: func(dir, prev string) {
			_, _ = fmt.Fprintf(warn, "runner: %s held an earlier run: moved to %s (an output directory holds one run; --resume continues one)\n", dir, prev) // console output: a failed write has nowhere to be reported
		},
	}
	o.CaseOptions.apply(&so)
	return so
}

func runCommand(stdio IO) *cli.Command {
	o := &RunOptions{IO: stdio}
	var models cli.StringSlice
	return &cli.Command{
		Name:        "run",
		Usage:       "run scenarios and report whether the agent did the job",
		ArgsUsage:   "PATH... (task files, directories or globs)",
		Description: examplesHelp + "\n\n" + envHelp,
		Flags: append(append([]cli.Flag{
			&cli.StringSliceFlag{Name: "model", Aliases: []string{"m"}, Destination: &models, Usage: "`PROVIDER:MODEL` for every task (" + strings.Join(session.ProviderNames(), ", ") + "; one: several models are runner bench)", DefaultText: "the task's model, else oracle"},
			&cli.StringFlag{Name: "out", Destination: &o.OutDir, Value: "runner-out", Usage: "`DIR` for transcripts and result files"},
			&cli.StringFlag{Name: "junit", Destination: &o.JUnit, Usage: "write a JUnit XML report to `FILE` (- for standard output; the console then goes to standard error)"},
			&cli.StringFlag{Name: "json", Destination: &o.JSON, Usage: "write a JSON report to `FILE` (- for standard output; the console then goes to standard error)"},
			&cli.IntFlag{Name: "parallel", Aliases: []string{"j"}, Destination: &o.Parallel, Value: runtime.NumCPU(), Usage: "`N` scenarios at once", DefaultText: "the number of CPUs"},
			&cli.IntFlag{Name: "repeat", Destination: &o.Repeat, Value: 1, Usage: "run each scenario `N` times (for pass@k)"},
			&cli.BoolFlag{Name: "keep-workspaces", Destination: &o.KeepWorkspaces, Usage: "keep each final workspace and print its path"},
			&cli.StringFlag{Name: "engine", Destination: &o.Engine, Usage: "container engine `NAME` or path for tasks with environment: (podman, docker)", DefaultText: "the first on PATH"},
			&cli.StringFlag{Name: "run-id", Destination: &o.RunID, Usage: "label the run's containers runner.run=`ID`, to find what a killed run left", DefaultText: "random"},
		}, o.ScenarioOptions.flags()...), append(o.ciFlags(), o.ReachOptions.flags()...)...),
		Action: func(c *cli.Context) error {
			model, err := oneModel(session.SplitModels(models.Value()...))
			if err != nil {
				return err
			}
			o.Paths, o.Model = c.Args().Slice(), model
			return Execute(c.Context, o.withResumeOut(c.IsSet("out")))
		},
	}
}

// Check reports the first flag value that cannot work, as a usage error.
func (o *RunOptions) Check() error {
	if len(o.Paths) == 0 {
		return usageError("run: no task files given (try: runner run scenarios/)")
	}
	if o.Parallel < 1 || o.Repeat < 1 || o.MaxSteps < 0 || o.Timeout < 0 {
		return usageError("run: --parallel and --repeat must be at least 1, --max-steps and --timeout not negative")
	}
	if err := o.ScenarioOptions.check("run"); err != nil {
		return err
	}
	if err := o.ReachOptions.check(o.Model); err != nil {
		return err
	}
	return o.checkCI()
}

// Execute runs `runner run` with opts and returns nil or an error classify maps to the
// exit code.
func Execute(ctx context.Context, opts RunOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	tty := isatty.IsTerminal(fdOf(opts.Stdout))
	if opts.TTY != nil {
		tty = *opts.TTY
	}
	so := opts.ScenarioOptions.session(opts.Paths, opts.OutDir, opts.Stderr)
	so.Model, so.Open = opts.Model, opts.ReachOptions.open(so.Open)
	so.KeepWorkspaces, so.Engine, so.RunID = opts.KeepWorkspaces, opts.Engine, opts.RunID
	so.ResumeOut = opts.continuesOut()
	if in, ok := opts.Stdin.(*os.File); ok {
		out := opts.Stdout
		if opts.JSON == report.Stdout || opts.JUnit == report.Stdout {
			out = opts.Stderr // standard output is the report's
		}
		so.Terminal = &session.Terminal{In: in, Out: out, TTY: tty}
	}
	s, err := session.New(ctx, so)
	if err != nil {
		return inVerb("run", err)
	}
	loadProblems(s, opts.Stderr)
	reporter := opts.reporters(tty, opts.JSON, opts.JUnit, opts.OutDir)
	plan, err := s.Plan(opts.runOptions(reporter))
	if err != nil {
		return inVerb("run", err)
	}
	reporter.Start(plan.Count())
	run := plan.Run(ctx)
	if plan.BudgetSpent() {
		_, _ = fmt.Fprintf(opts.Stderr, "runner: %s\n", budgetNote(opts.BudgetUSD)) // console output: a failed write has nowhere to be reported
	}
	writeView(opts.OutDir, opts.Stderr)
	if err := reporter.Finish(run); err != nil {
		return errored(fmt.Errorf("run: %w", err))
	}
	if in := interrupted(ctx); in != nil {
		return inVerb("run", fmt.Errorf("%w: %s", in, unfinished(run.Scenarios, "scenario")))
	}
	if s.LoadProblems != nil {
		return s.LoadProblems // exit 2, every problem listed again under the results
	}
	_, nFailed, nErrored := run.Counts()
	return outcome(nFailed, nErrored)
}

// loadProblems lists, before anything runs, the task files that did not load (each
// problem a file:line:col: line): the others run, and the command then exits 2 with the
// same list, so a file that cannot be read stops no other and is never silently skipped.
func loadProblems(s *session.Session, stderr io.Writer) {
	if s.LoadProblems == nil {
		return
	}
	_, _ = fmt.Fprintln(stderr, "runner: these task files did not load; the others run, then runner exits 2:") // console output: a failed write has nowhere to be reported
	_ = problemLines(stderr, s.LoadProblems.Err)
}

func fdOf(w io.Writer) uintptr {
	if f, ok := w.(interface{ Fd() uintptr }); ok { // an *os.File, or the scrubber around one
		return f.Fd()
	}
	return ^uintptr(0)
}

// unfinished says how many of an interrupted run's scenarios did not finish.
func unfinished(scenarios []result.Scenario, noun string) string {
	n := 0
	for _, s := range scenarios {
		if s.Stop == result.StopInterrupt || s.Stop == result.StopNotRun {
			n++
		}
	}
	return fmt.Sprintf("%d of %d %ss did not finish; the reports hold every result", n, len(scenarios), noun)
}
