package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/bench"
	"github.com/agentrunner/runner/runner/report"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/session"
)

// BenchOptions are the flags of `runner bench`.
type BenchOptions struct {
	Paths []string
	// Models are PROVIDER:MODEL names (--model repeated, or --models a,b).
	Models   []string
	OutDir   string
	Parallel int
	Repeat   int
	ScenarioOptions
	// BudgetTokens and BudgetTime stop new cells from starting once spent (0: none).
	BudgetTokens int
	BudgetTime   time.Duration
	// Baseline is a bench.json to compare with; a significant drop exits 1.
	Baseline string
	// Gate is what a significant drop must be in to fail: "models" (their totals, the
	// default) or "scenarios" (any scenario too).
	Gate string
	// AllowMissing lets rows of the baseline go unmeasured without failing.
	AllowMissing bool
	// OllamaLog is the Ollama server's log file, read for the machine's GPUs, the
	// parallel slots and the loads it logged.
	OllamaLog string
	// TTY forces the live console (nil: detect from Stdout); Getenv reads NO_COLOR and
	// TERM (nil: os.Getenv).
	TTY    *bool
	Getenv func(string) string
	IO
}

// gateFlag is --gate, shared by bench and bench compare.
func gateFlag(dest *string) cli.Flag {
	return &cli.StringFlag{Name: "gate", Destination: dest, Value: "models", Usage: "`WHAT` a significant drop must be in to exit 1: models (their totals) or scenarios (any scenario too; exploratory otherwise)"}
}

// allowMissingFlag is --allow-missing, shared by bench and bench compare.
func allowMissingFlag(dest *bool) cli.Flag {
	return &cli.BoolFlag{Name: "allow-missing", Destination: dest, Usage: "let models and scenarios of the baseline go unmeasured (renamed, dropped) without failing; by default each fails the comparison, named"}
}

// gateScenarios checks --gate's value.
func gateScenarios(cmd, gate string) (bool, error) {
	switch gate {
	case "", "models":
		return false, nil
	case "scenarios":
		return true, nil
	}
	return false, usageError("%s: --gate %q: want models or scenarios", cmd, gate)
}

// benchExamplesHelp are bench's usual invocations, for --help (each fits 80 columns).
const benchExamplesHelp = `Examples:
   # two Ollama models, 5 runs of every scenario each: pass rates, pass@k
   runner bench -m ollama:qwen3:4b -m ollama:qwen3:8b --repeat 5 scenarios/
   # a minute, no model server: the reference solutions, and an oracle
   # that fails a seeded 30% of its runs
   runner bench -m oracle -m oracle:fail=0.3,seed=1 scenarios/
   # exit 1 on a significant drop from last night's numbers
   runner bench -m ollama:qwen3:4b --baseline last-good/bench.json scenarios/
   runner bench compare last-good/bench.json bench-out/bench.json`

func benchCommand(stdio IO) *cli.Command {
	o := &BenchOptions{IO: stdio}
	var compare CompareOptions
	var models cli.StringSlice
	return &cli.Command{
		Name:        "bench",
		Usage:       "benchmark models over scenarios and repeats: pass rates with intervals, pass@k, bench.json/md/html (exit 0 done, 1 significant drop from --baseline, 2 usage, 3 cells unmeasured, 130 interrupted)",
		ArgsUsage:   "PATH... (task files, directories or globs)",
		Description: benchExamplesHelp + "\n\n" + envHelp,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "model", Aliases: []string{"m", "models"}, Destination: &models, Usage: "`PROVIDER:MODEL` to benchmark; repeat the flag or give a comma-separated list"},
			&cli.StringFlag{Name: "out", Destination: &o.OutDir, Value: "bench-out", Usage: "`DIR` for bench.json, bench.md, bench.html and every cell's transcript (OUT/<model>/<scenario>.rK)"},
			&cli.IntFlag{Name: "parallel", Aliases: []string{"j"}, Destination: &o.Parallel, Value: runtime.NumCPU(), Usage: "`N` scenarios at once (one model at a time)", DefaultText: "the number of CPUs"},
			&cli.IntFlag{Name: "repeat", Destination: &o.Repeat, Value: 5, Usage: "`N` runs of each (model, scenario) cell"},
			&cli.IntFlag{Name: "budget-tokens", Destination: &o.BudgetTokens, Usage: "stop starting cells once `N` tokens (in + out) are spent; the rest are not run"},
			&cli.DurationFlag{Name: "budget-time", Destination: &o.BudgetTime, Usage: "stop starting cells after `DURATION`; the rest are not run"},
			&cli.StringFlag{Name: "ollama-log", Destination: &o.OllamaLog, Usage: "the Ollama server's log `FILE` (what `ollama serve` writes): records the machine's GPUs and the parallel slots, which Ollama's API does not say, and checks runner's load count against the log's"},
			&cli.StringFlag{Name: "baseline", Destination: &o.Baseline, Usage: "compare with the bench.json `FILE`; exit 1 on a significant drop"},
			gateFlag(&o.Gate),
			allowMissingFlag(&o.AllowMissing),
		}, o.ScenarioOptions.flags()...),
		// `runner help bench` and --help say it; a "help, h" subcommand is noise.
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:      "compare",
			Usage:     "compare two bench.json files without running anything (exit 1 on a significant drop)",
			ArgsUsage: "BASELINE.json NEW.json",
			Flags: []cli.Flag{
				gateFlag(&compare.Gate),
				allowMissingFlag(&compare.AllowMissing),
				&cli.StringFlag{Name: "markdown", Destination: &compare.Markdown, Usage: "also write the comparison as Markdown to `FILE` (a PR comment: verdict, improvements, every row)"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 2 {
					return usageError("bench compare: want BASELINE.json NEW.json, got %d argument(s)", c.NArg())
				}
				return BenchCompare(c.Args().Get(0), c.Args().Get(1), compare, stdio)
			},
		}},
		Action: func(c *cli.Context) error {
			o.Paths, o.Models = c.Args().Slice(), models.Value()
			return Bench(c.Context, *o)
		},
	}
}

// Check reports the first flag value that cannot work, as a usage error, and tidies the
// model list (commas split, blanks and duplicates dropped). A model's name is checked,
// the model is not opened: that is its turn's.
func (o *BenchOptions) Check() error {
	if len(o.Paths) == 0 {
		return usageError("bench: no task files given (try: runner bench --model ollama:qwen3:4b scenarios/)")
	}
	models := session.SplitModels(o.Models...)
	if len(models) == 0 {
		return usageError("bench: no model given: --model PROVIDER:MODEL (repeatable) or --models a,b")
	}
	o.Models = models
	for _, name := range o.Models {
		if err := session.CheckModel(name); err != nil {
			return usageError("bench: %v", err)
		}
	}
	if o.Parallel < 1 || o.Repeat < 1 || o.MaxSteps < 0 || o.Timeout < 0 || o.BudgetTokens < 0 || o.BudgetTime < 0 {
		return usageError("bench: --parallel and --repeat must be at least 1; --max-steps, --timeout and the budgets not negative")
	}
	return o.ScenarioOptions.check("bench")
}

// Bench runs `runner bench` with opts and returns nil or an error classify maps to the
// exit code.
func Bench(ctx context.Context, opts BenchOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	if _, err := gateScenarios("bench", opts.Gate); err != nil {
		return err
	}
	var baseline *bench.Report
	if opts.Baseline != "" {
		var err error
		if baseline, err = bench.ReadFile(opts.Baseline); err != nil {
			return usageError("bench: --baseline: %v", err)
		}
	}
	so := opts.ScenarioOptions.session(opts.Paths, opts.OutDir, opts.Stderr)
	so.Bench = true
	agents := agentList(opts.Agent) // each a line of its own on every model
	so.Agent = ""
	s, err := session.New(ctx, so)
	if err != nil {
		return inVerb("bench", err)
	}
	loadProblems(s, opts.Stderr)
	if opts.BudgetUSD > 0 {
		if err := s.CheckPrices(opts.Models); err != nil {
			return inVerb("bench", err)
		}
	}
	bo := bench.Options{
		Models: opts.Models, Agents: agents, Tasks: s.Tasks, Repeat: opts.Repeat, Parallel: opts.Parallel, OutDir: opts.OutDir,
		Scenario: s.Scenario, Ready: s.Models,
		BudgetTokens: opts.BudgetTokens, BudgetTime: opts.BudgetTime, BudgetUSD: opts.BudgetUSD, Prices: s.Prices, Warn: opts.Stderr,
		ServerLog: opts.OllamaLog,
		Checkpoint: func(r *bench.Report) {
			if err := bench.WriteFiles(opts.OutDir, r, nil); err != nil {
				_, _ = fmt.Fprintf(opts.Stderr, "runner: warning: bench: %v\n", err) // console output: a failed write has nowhere to be reported
			}
		},
	}
	opts.console(&bo, len(s.Tasks)*opts.Repeat)
	rep := bench.Run(ctx, bo)
	var cmp *bench.Comparison
	if baseline != nil {
		c := bench.Compare(baseline, rep, bench.Alpha)
		c.GateScenarios, _ = gateScenarios("bench", opts.Gate) // checked before the run
		c.AllowMissing = opts.AllowMissing
		cmp = &c
	}
	if err := bench.WriteFiles(opts.OutDir, rep, cmp); err != nil {
		return errored(fmt.Errorf("bench: %w", err))
	}
	writeView(opts.OutDir, opts.Stderr) // bench.html's grid cells link into its pages
	_, _ = fmt.Fprintf(opts.Stdout, "\nbench: reports in %s/{%s,%s,%s,index.html}\n", opts.OutDir, bench.JSONFile, bench.MarkdownFile, bench.HTMLFile)
	if s.LoadProblems != nil && ctx.Err() == nil { // an interrupt's exit code comes first
		return s.LoadProblems
	}
	return benchExit(ctx, rep, cmp, opts)
}

// console has each model's turn shown as it runs: a header with its probe, then run's
// console of its cells (cells of them), so that a row looks the same in both (an
// interrupted one was "!" in run on a terminal and "ERR" here).
func (o *BenchOptions) console(bo *bench.Options, cells int) {
	var console *report.Console
	tty := isatty.IsTerminal(fdOf(o.Stdout))
	if o.TTY != nil {
		tty = *o.TTY
	}
	bo.OnModel = func(m bench.ModelResult) {
		switch m.Status {
		case bench.ModelNotRun: // its reason says "not run: ..."
			_, _ = fmt.Fprintf(o.Stdout, "== %s: %s\n", m.Label(), m.Reason)
			return
		case bench.ModelSkipped:
			_, _ = fmt.Fprintf(o.Stdout, "== %s: skipped (%s)\n", m.Label(), m.Reason)
			return
		}
		_, _ = fmt.Fprintf(o.Stdout, "== %s%s\n", m.Label(), describeProbe(m))
		console = report.NewConsole(o.Stdout, consoleOptions(tty, o.Getenv, m.OutDir))
		console.Start(cells)
	}
	bo.OnStart = func(s result.Scenario) { console.Started(s) }
	bo.OnDone = func(s result.Scenario) { console.Finished(s) }
	bo.OnModelDone = func(_ bench.ModelResult, run result.Run) { _ = console.Finish(run) }
}

// benchExit prints the leaderboard's verdict and maps it to the exit code: 128 + the
// signal when interrupted (every cell not measured counted, the models never reached
// too), else 1 for a significant drop from the baseline, else 3 when infrastructure left
// cells unmeasured.
func benchExit(ctx context.Context, rep *bench.Report, cmp *bench.Comparison, opts BenchOptions) error {
	if cmp != nil {
		_ = cmp.WriteText(opts.Stdout)
	}
	if in := interrupted(ctx); in != nil {
		planned, unmeasured := 0, 0
		for _, m := range rep.Models {
			planned += m.Summary.Planned
			unmeasured += m.Summary.Errored + m.Summary.NotRun
		}
		return inVerb("bench", fmt.Errorf("%w: %d of %d cells unmeasured; the reports hold every cell", in, unmeasured, planned))
	}
	if cmp != nil && cmp.Fails() {
		return failed(nil)
	}
	unmeasured := 0
	for _, m := range rep.Models {
		unmeasured += m.Summary.Errored
		if m.Status == bench.ModelSkipped {
			unmeasured += m.Summary.NotRun
		}
	}
	if unmeasured > 0 {
		return &verdictError{Errored: unmeasured, Err: fmt.Errorf("bench: %d cell(s) unmeasured because of errors (see the reports)", unmeasured)}
	}
	return nil
}

func describeProbe(m bench.ModelResult) string {
	p := m.Probe
	if p == nil {
		return ""
	}
	var parts []string
	for _, s := range []string{p.Family, p.ParameterSize, p.Quantization} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if p.ContextLength > 0 {
		parts = append(parts, fmt.Sprintf("context %d", p.ContextLength))
	}
	if p := m.Placement; p != nil && p.Size > 0 {
		parts = append(parts, p.Processor())
	}
	if m.WarmUp > 0 {
		parts = append(parts, fmt.Sprintf("loaded in %s", m.WarmUp.Duration().Round(time.Millisecond)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// CompareOptions are bench compare's flags.
type CompareOptions struct {
	// Gate and AllowMissing are as in BenchOptions.
	Gate         string
	AllowMissing bool
	// Markdown, when set, is where the comparison is also written as Markdown.
	Markdown string
}

// BenchCompare prints the comparison of two bench.json files: exit 1 on a significant
// drop, 2 when a file cannot be read.
func BenchCompare(basePath, newPath string, opts CompareOptions, stdio IO) error {
	gate, err := gateScenarios("bench compare", opts.Gate)
	if err != nil {
		return err
	}
	base, err := bench.ReadFile(basePath)
	if err != nil {
		return usageError("bench compare: %v", err)
	}
	cur, err := bench.ReadFile(newPath)
	if err != nil {
		return usageError("bench compare: %v", err)
	}
	cmp := bench.Compare(base, cur, bench.Alpha)
	cmp.GateScenarios, cmp.AllowMissing = gate, opts.AllowMissing
	if err := cmp.WriteText(stdio.Stdout); err != nil {
		return errored(err)
	}
	if opts.Markdown != "" {
		var b strings.Builder
		if err := bench.WriteMarkdown(&b, cur, &cmp); err != nil {
			return errored(err)
		}
		if err := os.WriteFile(opts.Markdown, []byte(b.String()), 0o644); err != nil {
			return errored(fmt.Errorf("bench compare: --markdown: %w", err))
		}
	}
	if cmp.Fails() {
		return failed(nil)
	}
	return nil
}

// oneModel is run's --model: a second one used to win silently; comparing models is
// what bench is for.
func oneModel(models []string) (string, error) {
	switch len(models) {
	case 0:
		return "", nil
	case 1:
		return models[0], nil
	}
	return "", usageError("run: --model given %d models (%s): run takes one; compare models with runner bench --models %s",
		len(models), strings.Join(models, ", "), strings.Join(models, ","))
}
