package bench

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
)

// loadGroup is the suite's grouping for a bench: Ollama loads a model again whenever a
// request's num_ctx differs from the loaded one's, so cells run grouped by num_ctx, the
// model's default (0) first, and a group starts only once the one before has finished.
func loadGroup(t *task.Task) int { return t.ModelOptions.NumCtx }

// firstGroup is the num_ctx of the cells that run first (loadGroup's order).
func firstGroup(tasks []*task.Task) int {
	first := 0
	for i, t := range tasks {
		if i == 0 || loadGroup(t) < first {
			first = loadGroup(t)
		}
	}
	return first
}

// loads keeps one model loaded with the options of the cells that run, and counts the
// loads its server did, from what the server says (/api/ps) rather than from each
// request's load_duration, which on a big model is tens of milliseconds every time.
//
// Before a cell starts, ensure has the model loaded with the cell's num_ctx (a load
// request of its own, outside every cell's time) unless /api/ps shows it loaded so
// already. Before and after every cell, /api/ps is compared with the placement last
// seen: a model the server loaded meanwhile without being asked (another client asked
// for other options, or it was evicted and a cell's request brought it back) shows up
// loaded again or otherwise; that is a load, and the cells running then are marked,
// their wait for it kept out of their times. A reload inside one cell that leaves the
// same placement behind is invisible to the API; the server's log (--ollama-log) counts
// those too, and the bench warns when the two disagree.
type loads struct {
	loader providers.Loader
	warn   func(string)

	mu      sync.Mutex
	started bool             // the first load was done: changes from now on are loads
	numCtx  int              // the options the model was last loaded with by runner; -1: unknown
	have    *model.Placement // where /api/ps last showed the model; nil: not loaded
	asked   []model.Load     // the loads runner asked for, in order
	unasked int              // loads the server did that runner did not ask for
	running map[int]bool     // cells running, by index
	hit     map[int]bool     // cells that ran while the server loaded the model unasked
	failed  bool             // a load failed: warned once
}

func newLoads(l providers.Loader, warn func(string)) *loads {
	return &loads{loader: l, warn: warn, numCtx: -1, running: map[int]bool{}, hit: map[int]bool{}}
}

// ensure has the model loaded with num_ctx; a load that fails is left to the cell's
// own request, which then reports the error.
func (l *loads) ensure(ctx context.Context, numCtx int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.loader.Placement(ctx)
	if err == nil {
		l.observe(p)
		if l.numCtx == numCtx && p != nil {
			return // loaded for these options, as last seen
		}
	}
	if err := l.loadLocked(ctx, numCtx); err != nil && !l.failed && ctx.Err() == nil {
		l.failed = true
		l.warn(fmt.Sprintf("loading the model ahead of its cells failed (%v): the cells load it themselves, and their times hold the load", err))
	}
}

// load has the model loaded with num_ctx, whatever /api/ps says (the first load).
func (l *loads) load(ctx context.Context, numCtx int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loadLocked(ctx, numCtx)
}

func (l *loads) loadLocked(ctx context.Context, numCtx int) error {
	ld, err := l.loader.Load(ctx, model.Options{NumCtx: numCtx})
	if err != nil {
		l.numCtx = -1
		return err
	}
	l.record(numCtx, ld)
	return nil
}

// loaded counts the load the model's preparation asked for (session.Models.Prepare): the
// first, from which on changes are loads.
func (l *loads) loaded(numCtx int, ld model.Load) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record(numCtx, ld)
}

// record counts a load runner asked for. The caller holds l.mu.
func (l *loads) record(numCtx int, ld model.Load) {
	l.asked = append(l.asked, ld)
	l.started = true
	l.numCtx, l.have = numCtx, ld.Placement
}

// observe compares what /api/ps shows with the placement last seen. A model listed
// otherwise than last seen, or listed again after it was seen unloaded, was loaded by
// the server unasked: counted, with the running cells marked; the options it was
// loaded with are then unknown, so the next cell loads it for its own.
func (l *loads) observe(p *model.Placement) {
	switch {
	case !l.started:
	case p == nil:
		l.have = nil
	case l.have == nil || *p != *l.have:
		l.unasked++
		for i := range l.running {
			l.hit[i] = true
		}
		l.have, l.numCtx = p, -1
	}
}

// first is the model's first load (nil: none, or a provider with nothing to load).
func (l *loads) first() *model.Load {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.asked) == 0 {
		return nil
	}
	ld := l.asked[0]
	return &ld
}

// begin marks a cell as running.
func (l *loads) begin(index int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.running[index] = true
	l.mu.Unlock()
}

// end looks at /api/ps as a cell finishes and marks it finished; it returns whether the
// server loaded the model unasked while the cell ran.
func (l *loads) end(ctx context.Context, index int) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, err := l.loader.Placement(ctx); err == nil {
		l.observe(p)
	}
	delete(l.running, index)
	hit := l.hit[index]
	delete(l.hit, index)
	return hit
}

// reset forgets the loads counted so far, keeping what is loaded: the next line of the
// same model (another agent) counts only the loads it causes.
func (l *loads) reset() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked, l.unasked = nil, 0
}

// loadSummary is what the loads add up to, for the model's record.
type loadSummary struct {
	asked   []model.Load
	count   int           // the server's loads: those it did when asked, and unasked ones
	unasked int           // of count, those while cells ran
	time    result.Millis // the asked loads' time, and the marked cells' waits
}

func (l *loads) summary(cells []result.Scenario) loadSummary {
	if l == nil {
		return loadSummary{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := loadSummary{asked: l.asked, unasked: l.unasked, count: l.unasked}
	for _, ld := range l.asked {
		if ld.Loaded {
			s.count++
			s.time += ld.Duration
		}
	}
	for _, c := range cells {
		s.time += c.LoadTime
	}
	return s
}

// loadWarnings says when the server loaded the model while cells ran.
func loadWarnings(name string, m ModelResult) []string {
	if m.CellLoads == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: the server loaded the model %d time(s) while cells ran, unasked (another model evicted it, its keep_alive expired, or another client asked for other options): the cells running then are marked and their wait for it is kept out of their times",
		name, m.CellLoads)}
}
