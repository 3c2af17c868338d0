package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/model"
	modelbudget "github.com/agentrunner/runner/runner/model/budget"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/suite"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/version"
)

// Options configure a benchmark run.
type Options struct {
	// Models are the PROVIDER:MODEL names, benchmarked one after another in this order:
	// one model loaded at a time suits Ollama, and keeps timings free of model swaps.
	Models []string
	// Agents, when set, are the agent kinds to compare: every model runs the suite once per
	// agent (the model prepared once), each a line of its own. Empty: the tasks' own agents.
	Agents []string
	Tasks  []*task.Task
	// Repeat and Parallel are as in suite.Options.
	Repeat, Parallel int
	// OutDir receives OUT/<model-slug>/<scenario>.rK/ for every cell (result.Scenario.DirName).
	OutDir string
	// Scenario returns the options of one model's cells (session.Session.Scenario, which
	// finds the model ready: see Models); OutDir is set per model.
	Scenario func(ctx context.Context, model string) scenario.Options
	// Ready makes each model ready for its cells (session.Models.Prepare: opened once,
	// probed, first loaded): the session's models, so that its Scenario checks none
	// again. Nil: a set of its own that opens models with Open (stream, request timeout,
	// retries).
	Ready *session.Models
	Open  providers.OpenOptions
	// BudgetTokens, BudgetTime and BudgetUSD (0: none) stop new cells from starting once
	// spent.
	BudgetTokens int
	BudgetTime   time.Duration
	BudgetUSD    float64
	// Prices prices every model call against BudgetUSD as it is made (nil: the shipped
	// table), so a spent budget also refuses the next call of every running cell.
	Prices *price.Table
	// OnModel is told when a model's turn starts (after its probe and warm-up) or when it
	// is skipped; OnStart and OnDone observe cells as in suite.Options.
	OnModel func(ModelResult)
	// OnModelDone is told when a benchmarked model's cells have all finished.
	OnModelDone func(ModelResult, result.Run)
	OnStart     func(result.Scenario)
	OnDone      func(result.Scenario)
	// Checkpoint, when set, gets the report so far after each model (later models not
	// yet in it), so a bench killed midway leaves the finished models' reports on disk.
	Checkpoint func(*Report)
	// ServerLog, when set, is the Ollama server's log file: runner reads the machine's
	// GPUs, each model's parallel slots and the loads the server logged from it.
	ServerLog string
	// Warn receives warnings as they happen ("runner: warning: ...").
	Warn io.Writer
	Now  func() time.Time
}

// Run benchmarks every model over every task Repeat times and returns the report (not
// yet written). Models that cannot be used are skipped with their reason; cells after a
// spent budget, or after ctx ends, are not run. Run never drops a planned cell.
func Run(ctx context.Context, opts Options) *Report {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	warn := opts.Warn
	if warn == nil {
		warn = io.Discard
	}
	repeat := max(opts.Repeat, 1)
	host, _ := os.Hostname()
	rep := &Report{
		Version: FormatVersion, Runner: version.String(), Started: now(), Repeat: repeat,
		Host:   Host{Name: host, OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()},
		Budget: Budget{Tokens: opts.BudgetTokens, Time: result.Millis(opts.BudgetTime), USD: opts.BudgetUSD},
		Tasks:  taskFiles(opts.Tasks),
	}
	b := &budget{tokens: opts.BudgetTokens, time: opts.BudgetTime, start: rep.Started, now: now, usd: modelbudget.New(opts.BudgetUSD, opts.Prices)}
	var warnings []string
	warnf := func(w string) {
		_, _ = fmt.Fprintf(warn, "runner: warning: %s\n", w) // console output: a failed write has nowhere to be reported
		warnings = append(warnings, w)
	}
	slog := openServerLog(opts.ServerLog, warnf)
	rep.Machine = slog.machine()
	if opts.Ready == nil {
		opts.Ready = session.NewModels("", opts.Open)
	}
	agents := opts.Agents
	if len(agents) == 0 {
		agents = []string{""}
	}
	lines := len(opts.Models) * len(agents)
	for _, name := range opts.Models {
		var turn modelTurn // the model's probe and first load, shared by its agents' lines
		for _, agent := range agents {
			mr := ModelResult{Name: name, Agent: agent, Status: ModelRan, OutDir: filepath.Join(opts.OutDir, Slug(name), agent)}
			var cells []result.Scenario
			switch {
			case ctx.Err() != nil || b.spent():
				mr.Status, mr.Reason = ModelNotRun, "not run: interrupted"
				if ctx.Err() == nil {
					mr.Reason = "not run: the budget was spent"
					rep.Budget.Spent = true
				}
				cells = unrun(opts.Tasks, repeat, name, mr.Reason)
			default:
				cells = benchModel(ctx, &mr, &turn, opts, b, slog, warnf)
			}
			if mr.Status != ModelRan && opts.OnModel != nil {
				opts.OnModel(mr)
			}
			mr.Summary, mr.Scenarios = Aggregate(cells, repeat)
			rep.Models = append(rep.Models, mr)
			if opts.Checkpoint != nil && len(rep.Models) < lines {
				rep.Duration = result.Millis(now().Sub(rep.Started))
				rep.Warnings = warnings
				opts.Checkpoint(rep)
			}
		}
	}
	for _, w := range placementWarnings(rep) {
		warnf(w)
	}
	rep.Warnings = warnings
	rep.Budget.Spent = rep.Budget.Spent || b.wasSpent()
	rep.Duration = result.Millis(now().Sub(rep.Started))
	return rep
}

// modelTurn is what one model's lines share when agents are compared: the model is
// probed and loaded once, before its first line.
type modelTurn struct {
	prepared bool
	reason   string // why the model cannot be benchmarked, or ""
	probe    *model.Info
	ld       *loads
	first    *model.Load // the model's first load (its warm-up), nil when it has none
	lines    int         // lines run so far
}

// benchModel is one line of a model's turn (one per agent compared): the probe and first
// load on the first line, the cells, then the loads, time and warnings of this line; it
// returns the line's cells (not run ones when the model was skipped).
func benchModel(ctx context.Context, mr *ModelResult, turn *modelTurn, opts Options, b *budget, slog *serverLog, warnf func(string)) []result.Scenario {
	name, repeat := mr.Name, max(opts.Repeat, 1)
	mark := slog.mark()
	if !turn.prepared {
		turn.ld, turn.reason = prepare(ctx, mr, opts.Ready, opts.Tasks, func(w string) { warnf(name + ": " + w) })
		turn.probe, turn.prepared, turn.first = mr.Probe, true, turn.ld.first()
	}
	mr.Probe = turn.probe
	if turn.reason != "" {
		mr.Status, mr.Reason = ModelSkipped, turn.reason
		return unrun(opts.Tasks, repeat, name, turn.reason)
	}
	ld := turn.ld
	if turn.first != nil {
		mr.WarmUp, mr.Placement = turn.first.Duration, turn.first.Placement
	}
	turn.lines++
	mr.Parallel = Parallel{Cells: max(opts.Parallel, 1), Slots: slog.slots(mark)}
	if mr.Parallel.Slots > 0 && mr.Parallel.Cells > mr.Parallel.Slots {
		// More cells than slots would only queue at the server, their wait counted in
		// their times as if the model were slower.
		warnf(fmt.Sprintf("%s: -j %d but the server runs %d request(s) at once for it (its log): cells ran %d at a time",
			name, mr.Parallel.Cells, mr.Parallel.Slots, mr.Parallel.Slots))
		mr.Parallel.Cells = mr.Parallel.Slots
	}
	if opts.OnModel != nil {
		opts.OnModel(*mr)
	}
	run := runModel(ctx, name, mr.Agent, mr.OutDir, opts, b, mr.Parallel.Cells, ld)
	if opts.OnModelDone != nil {
		opts.OnModelDone(*mr, run)
	}
	cells := run.Scenarios
	sum := ld.summary(cells)
	mr.Loads, mr.LoadCount, mr.CellLoads, mr.Load = sum.asked, sum.count, sum.unasked, sum.time
	// The loads inside the line's wall time: between its groups; the first line's first
	// load (the warm-up) came before its cells.
	var later result.Millis
	before := 0
	if turn.lines == 1 {
		before = 1
	}
	for _, l := range sum.asked[min(before, len(sum.asked)):] {
		later += l.Duration
	}
	ld.reset() // the next agent's line counts its own loads
	mr.Parallel.time(run, cells, later)
	if logged := slog.since(mark); slog.ok() {
		mr.LoggedLoads = &logged.Loads
		if logged.Parallel > 0 {
			mr.Parallel.Slots = logged.Parallel
		}
	}
	for _, w := range append(contextWarnings(name, mr.Probe, opts.Tasks, cells), loadWarnings(name, *mr)...) {
		warnf(w)
	}
	if mr.LoggedLoads != nil && *mr.LoggedLoads != mr.LoadCount {
		warnf(fmt.Sprintf("%s: the server's log shows %d load(s) during the model's turn where runner saw %d through /api/ps: another client used the server, or a reload left the same placement behind",
			name, *mr.LoggedLoads, mr.LoadCount))
	}
	return cells
}

// prepare has the model made ready (session.Models.Prepare: opened once, probed, loaded
// with the options of the cells that run first), filling mr; it returns the loads that
// count from that first one on, and why the model cannot be benchmarked, or "".
func prepare(ctx context.Context, mr *ModelResult, models *session.Models, tasks []*task.Task, warn func(string)) (*loads, string) {
	p, err := models.Prepare(ctx, mr.Name, firstGroup(tasks))
	if p != nil {
		mr.Probe = p.Probe
	}
	switch {
	case err != nil:
		return nil, err.Error()
	case p.Loader == nil:
		return nil, ""
	}
	ld := newLoads(p.Loader, warn)
	ld.loaded(p.NumCtx, *p.First)
	return ld, ""
}

// runModel runs one model's cells through the suite, parallel at a time, grouped by the
// options that make the server load the model again, each cell started on a model
// loaded for it; cells that ran while the server loaded the model unasked get that
// wait as their load time.
func runModel(ctx context.Context, name, agent, outDir string, opts Options, b *budget, parallel int, ld *loads) result.Run {
	so := opts.Scenario(ctx, name) // the name parsed in prepare; a failed check errors the cells
	so.OutDir, so.Budget = outDir, b.usd
	if agent != "" {
		so.Agent = agent
	}
	hit := map[int]bool{}
	var mu sync.Mutex
	run := suite.Run(ctx, opts.Tasks, suite.Options{
		Scenario: so, Parallel: parallel, Repeat: opts.Repeat,
		Admit: b.admit, Group: loadGroup,
		BeforeStart: func(ctx context.Context, t *task.Task) { ld.ensure(ctx, loadGroup(t)) },
		OnStart: func(s result.Scenario) {
			ld.begin(s.Index)
			if opts.OnStart != nil {
				opts.OnStart(s)
			}
		},
		OnDone: func(s result.Scenario) {
			if ld.end(ctx, s.Index) {
				mu.Lock()
				hit[s.Index] = true
				mu.Unlock()
			}
			b.add(result.AddCount(s.Usage.PromptTokens, s.Usage.CompletionTokens))
			if opts.OnDone != nil {
				opts.OnDone(s)
			}
		},
	})
	for i := range run.Scenarios {
		if c := &run.Scenarios[i]; hit[c.Index] {
			c.Reloads, c.LoadTime = 1, c.Usage.ScheduleTime
		}
	}
	return run
}

// unrun is the cells of a model that did not run, in suite order, so they stay in every
// denominator.
func unrun(tasks []*task.Task, repeat int, name, reason string) []result.Scenario {
	out := make([]result.Scenario, 0, len(tasks)*repeat)
	for rep := 1; rep <= repeat; rep++ {
		for _, t := range tasks {
			s := result.Scenario{
				Name: t.Name, File: t.Path, Tags: t.Tags, Model: name, Repeat: rep, Repeats: repeat,
				Status: result.Errored, Stop: result.StopNotRun, Reason: reason,
			}
			scenario.SetCase(t, &s)
			out = append(out, s)
		}
	}
	return out
}

// contextWarnings flags cells whose prompt reached the context the model ran with: Ollama
// truncates such a prompt silently, and tool calling breaks.
func contextWarnings(name string, info *model.Info, tasks []*task.Task, cells []result.Scenario) []string {
	numCtx := map[string]int{}
	for _, t := range tasks {
		numCtx[t.Path+"\x00"+t.Name] = t.ModelOptions.NumCtx
	}
	var out []string
	for _, c := range cells {
		limit := numCtx[c.File+"\x00"+c.Name]
		if limit == 0 && info != nil {
			limit = info.LoadedContext
		}
		if limit > 0 && c.MaxPromptTokens >= limit {
			out = append(out, fmt.Sprintf("%s / %s: a prompt of %d tokens reached the context length %d (num_ctx): Ollama truncates it silently and tool calling breaks; raise model_options.num_ctx",
				name, c.DisplayName(), c.MaxPromptTokens, limit))
		}
	}
	return out
}

// budget admits new cells until the token or time budget is spent.
type budget struct {
	tokens int
	time   time.Duration
	start  time.Time
	now    func() time.Time

	usd *modelbudget.Budget // charged by every model call, as it is made

	mu      sync.Mutex
	used    int
	refused bool
}

func (b *budget) add(n int) {
	b.mu.Lock()
	b.used = result.AddCount(b.used, n)
	b.mu.Unlock()
}

func (b *budget) spent() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return (b.tokens > 0 && b.used >= b.tokens) || (b.time > 0 && b.now().Sub(b.start) >= b.time) || b.usd.Spent()
}

func (b *budget) admit() bool {
	if b.spent() {
		b.mu.Lock()
		b.refused = true
		b.mu.Unlock()
		return false
	}
	return true
}

func (b *budget) wasSpent() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// taskFiles lists the suite's task files with the SHA-256 of their content.
func taskFiles(tasks []*task.Task) []TaskFile {
	out := make([]TaskFile, 0, len(tasks))
	for _, t := range tasks {
		tf := TaskFile{Name: t.Name, File: t.Path}
		tf.SHA256 = fileSHA256(t.Path)
		if t.Suite != "" {
			tf.Suite, tf.SuiteSHA256 = t.Suite, fileSHA256(t.Suite)
		}
		out = append(out, tf)
	}
	return out
}

// fileSHA256 is the hex SHA-256 of a file's content, "" when it cannot be read.
func fileSHA256(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Slug is a model name as a directory name: "ollama:qwen3:4b" -> "ollama-qwen3-4b".
func Slug(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '-'
	}, name)
	if s == "" || s == "." || s == ".." {
		return "model"
	}
	return s
}
