package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/suite"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// DefaultModel runs the tasks' reference solutions: it needs no model server.
const DefaultModel = session.DefaultModel

// RunOptions are the flags of `runner run`.
type RunOptions struct {
	Paths          []string
	Model          string
	OutDir         string
	JUnit          string
	JSON           string
	Parallel       int
	Repeat         int
	MaxSteps       int
	Timeout        time.Duration
	Filter         string
	KeepWorkspaces bool
	Approval       string
	Sandbox        string
	// Stream asks model servers for streamed responses.
	Stream bool
	// RequestTimeout bounds each model request; Retries is the attempts per step.
	RequestTimeout time.Duration
	Retries        int
	// CacheDir is the shared build cache of commands ("" for none).
	CacheDir string
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

func runCommand(stdio IO) *cli.Command {
	return &cli.Command{
		Name:        "run",
		Usage:       "run scenarios and report whether the agent did the job",
		ArgsUsage:   "PATH... (task files, directories or globs)",
		Description: examplesHelp + "\n\n" + envHelp,
		Flags: append(append([]cli.Flag{
			&cli.StringSliceFlag{Name: "model", Aliases: []string{"m"}, Usage: "`PROVIDER:MODEL` for every task (ollama, openai, openai-responses, anthropic, gemini, replay:DIR, oracle; one: several models are runner bench)", DefaultText: "the task's model, else oracle"},
			&cli.StringFlag{Name: "out", Value: "runner-out", Usage: "`DIR` for transcripts and result files"},
			&cli.StringFlag{Name: "junit", Usage: "write a JUnit XML report to `FILE`"},
			&cli.StringFlag{Name: "json", Usage: "write a JSON report to `FILE`"},
			&cli.IntFlag{Name: "parallel", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "`N` scenarios at once", DefaultText: "the number of CPUs"},
			&cli.IntFlag{Name: "repeat", Value: 1, Usage: "run each scenario `N` times (for pass@k)"},
			&cli.BoolFlag{Name: "keep-workspaces", Usage: "keep each final workspace and print its path"},
			&cli.StringFlag{Name: "engine", Usage: "container engine `NAME` or path for tasks with environment: (podman, docker)", DefaultText: "the first on PATH"},
			&cli.StringFlag{Name: "run-id", Usage: "label the run's containers runner.run=`ID`, to find what a killed run left", DefaultText: "random"},
		}, scenarioFlags()...), append(ciFlags(), reachFlags()...)...),
		Action: func(c *cli.Context) error {
			model, err := oneModel(c.StringSlice("model"))
			if err != nil {
				return err
			}
			return Execute(c.Context, RunOptions{
				Paths: c.Args().Slice(), Model: model, OutDir: c.String("out"),
				JUnit: c.String("junit"), JSON: c.String("json"), Parallel: c.Int("parallel"),
				Repeat: c.Int("repeat"), MaxSteps: c.Int("max-steps"), Timeout: c.Duration("timeout"),
				Filter: c.String("filter"), KeepWorkspaces: c.Bool("keep-workspaces"),
				Approval: c.String("approval"), Sandbox: c.String("sandbox"), Stream: c.Bool("stream"),
				RequestTimeout: c.Duration("request-timeout"), Retries: c.Int("retries"),
				CacheDir: c.String("cache-dir"), Engine: c.String("engine"), RunID: c.String("run-id"), IO: stdio,
				Shard: c.String("shard"), Resume: c.String("resume"), RerunFailed: c.String("rerun-failed"),
				ReachOptions: reachOptions(c),
			}.withResumeOut(c.IsSet("out")))
		},
	}
}

// scenarioFlags are the flags `run` and `bench` share: overrides of every task's limits and
// policy, the sandbox, the build cache and the model client.
func scenarioFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-steps", Usage: "`N` steps at most, for every task", DefaultText: "the task's"},
		&cli.DurationFlag{Name: "timeout", Usage: "`DURATION` (90s, 5m) for every task", DefaultText: "the task's"},
		&cli.StringFlag{Name: "filter", Usage: "run only scenarios whose name matches `REGEX`"},
		&cli.StringFlag{Name: "approval", Usage: "approval `MODE` for every task: auto, read-only, rules or ask", DefaultText: "the task's"},
		&cli.StringFlag{Name: "sandbox", Usage: "sandbox `MODE` for every task: auto, bwrap, landlock or none", DefaultText: "the task's"},
		&cli.StringFlag{Name: "cache-dir", Value: session.DefaultCacheDir(), Usage: "build cache `DIR` shared by commands (XDG_CACHE_HOME: Go, pip), read-only to them (setup commands write it); empty for none"},
		&cli.BoolFlag{Name: "stream", Usage: "ask the model server for streamed responses"},
		&cli.DurationFlag{Name: "request-timeout", Value: 5 * time.Minute, Usage: "`DURATION` bound on each model request"},
		&cli.IntFlag{Name: "retries", Value: 4, Usage: "`N` attempts per model request on connection errors, 429 and 5xx"},
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
	switch o.Approval {
	case "", task.ModeAuto, task.ModeReadOnly, task.ModeRules, task.ModeAsk:
	default:
		return usageError("run: --approval %q: want auto, read-only, rules or ask", o.Approval)
	}
	switch o.Sandbox {
	case "", "auto", "bwrap", "landlock", "none":
	default:
		return usageError("run: --sandbox %q: want auto, bwrap, landlock or none", o.Sandbox)
	}
	if err := o.ReachOptions.check(o.Model); err != nil {
		return err
	}
	return o.checkCI()
}

// Execute runs `runner run` with opts and returns nil or an *ExitError.
func Execute(ctx context.Context, opts RunOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	var approval *task.Approval
	if opts.Approval != "" {
		approval = &task.Approval{Mode: opts.Approval}
	}
	reg := catalog.Default()
	tasks, err := loadTasks(opts.Paths, reg, opts.Filter, opts.Stderr)
	if err != nil {
		return err
	}
	// The models' checks run in the background from here on (see session.Models.Preflight).
	models := session.NewModels(opts.Model, opts.ReachOptions.open(providers.OpenOptions{
		Stream: opts.Stream, RequestTimeout: opts.RequestTimeout, Retries: opts.Retries,
	}))
	if err := preflight(ctx, "run", models, tasks); err != nil {
		return err
	}
	tty := isatty.IsTerminal(fdOf(opts.Stdout))
	if opts.TTY != nil {
		tty = *opts.TTY
	}
	reporter := opts.reporters(tty, opts.JSON, opts.JUnit, opts.OutDir)
	sel, prior, err := opts.selection(tasks)
	if err != nil {
		return err
	}

	sandboxes := session.NewSandboxes(opts.Sandbox, opts.Stderr)
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return &ExitError{Code: ExitErrored, Err: fmt.Errorf("run: output directory: %w", err)}
	}
	cacheDir, err := session.PrepareCache(opts.CacheDir)
	if err != nil {
		return &ExitError{Code: ExitErrored, Err: fmt.Errorf("run: --cache-dir: %w", err)}
	}
	sandboxes.ProbeAll(tasks)

	var asker policy.Asker
	if opts.Approval == task.ModeAsk || anyAsk(tasks) {
		if in, ok := opts.Stdin.(*os.File); ok && policy.IsTerminal(in) && tty {
			asker = policy.NewTerminalAsker(in, opts.Stdout)
			opts.Parallel = 1 // one question at a time
		}
	}
	reporter.Start(suite.Count(tasks, opts.Repeat, sel))
	run := suite.Run(ctx, tasks, suite.Options{
		Parallel: opts.Parallel, Repeat: opts.Repeat,
		OnStart: reporter.Started, OnDone: reporter.Finished, Select: sel, Prior: prior,
		Scenario: scenario.Options{
			OutDir: opts.OutDir, Catalog: reg, Approval: approval, Asker: asker,
			MaxSteps: opts.MaxSteps, Timeout: opts.Timeout, KeepWorkspaces: opts.KeepWorkspaces, CacheDir: cacheDir,
			Model: models.ForTask, ModelName: models.Name, Judge: models.Judge, Sandbox: sandboxes.Get, Engine: opts.Engine, RunID: opts.RunID,
		},
	})
	if err := reporter.Finish(run); err != nil {
		return &ExitError{Code: ExitErrored, Err: fmt.Errorf("run: %w", err)}
	}
	_, failed, errored := run.Counts()
	switch {
	case failed > 0:
		return &ExitError{Code: ExitFailed}
	case errored > 0:
		return &ExitError{Code: ExitErrored}
	}
	return nil
}

// loadTasks loads task files as session.LoadTasks does; every problem is a usage error.
func loadTasks(paths []string, reg *tools.Registry, filter string, stderr io.Writer) ([]*task.Task, error) {
	tasks, err := session.LoadTasks(paths, reg, filter, stderr)
	if err != nil {
		if strings.HasPrefix(err.Error(), "--filter") {
			return nil, usageError("run: %v", err)
		}
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	return tasks, nil
}

// preflight checks every model once; a name that does not parse is a usage error.
func preflight(ctx context.Context, verb string, models *session.Models, tasks []*task.Task) error {
	if err := models.Preflight(ctx, tasks); err != nil {
		return usageError("%s: %v", verb, err)
	}
	return nil
}

func anyAsk(tasks []*task.Task) bool {
	for _, t := range tasks {
		if t.Approval.Mode == task.ModeAsk {
			return true
		}
	}
	return false
}

func fdOf(w io.Writer) uintptr {
	if f, ok := w.(*os.File); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
