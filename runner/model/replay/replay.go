package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentrunner/runner/runner/model"
)

// Recorder is a model that stores every response of the model it wraps in a cassette.
type Recorder struct {
	inner    model.Model
	c        *Cassette
	scenario string
}

// Record wraps m so that each of its responses is stored in c, under the scenario's name.
func Record(m model.Model, c *Cassette, scenario string) *Recorder {
	return &Recorder{inner: m, c: c, scenario: scenario}
}

// Name returns the wrapped model's name.
func (r *Recorder) Name() string { return r.inner.Name() }

// Unwrap returns the wrapped model (for pre-flight checks).
func (r *Recorder) Unwrap() model.Model { return r.inner }

// Step asks the wrapped model and records its answer before returning it. A response
// that cannot be recorded fails the step: a cassette with holes would replay as a miss.
func (r *Recorder) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := r.inner.Step(ctx, req)
	if err != nil {
		return nil, err
	}
	n, tools, err := Normalise(req)
	if err != nil {
		return nil, err
	}
	if err := r.c.record(r.inner.Name(), r.scenario, req.Step(), n, tools, resp); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", r.c.dir, err)
	}
	return resp, nil
}

// Player is a model that answers from a cassette and never reaches a server.
type Player struct {
	c        *Cassette
	model    string
	scenario string
}

// Play returns a model that serves c's recordings of modelName ("" for whichever model
// recorded the request) to the scenario.
func Play(c *Cassette, modelName, scenario string) *Player {
	return &Player{c: c, model: modelName, scenario: scenario}
}

// Name is the recorded model's name, so a replayed run reports what the recorded one did;
// "replay:DIR" when the cassette holds several models and none was named.
func (p *Player) Name() string {
	if p.model != "" {
		return p.model
	}
	if ms := p.c.Models(); len(ms) == 1 {
		return ms[0]
	}
	return "replay:" + p.c.dir
}

// Step serves the recorded response to req, or a *MissError.
func (p *Player) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n, _, err := Normalise(req)
	if err != nil {
		return nil, err
	}
	e, ok := p.c.lookup(p.model, n.Hash(), p.scenario)
	if !ok {
		return nil, p.c.miss(p.model, p.scenario, req.Step(), n)
	}
	rec, err := p.c.load(e)
	if err != nil {
		return nil, err
	}
	return &rec.Response, nil
}

// lookup finds the recording for the next play of a request. The n-th identical request
// of a scenario gets its n-th recording (the last one once they run out); a request the
// scenario never recorded but another scenario did gets that one, since the request is
// the same to the byte.
func (c *Cassette) lookup(modelName, hash, scenario string) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var others []Entry
	for _, e := range c.byHash[hash] {
		if modelName == "" || e.Model == modelName {
			others = append(others, e)
		}
	}
	if len(others) == 0 {
		return Entry{}, false
	}
	// Prefer this scenario's recordings; among the rest, the first by scenario and model,
	// so that the choice does not depend on the order of the index.
	sort.SliceStable(others, func(i, j int) bool {
		a, b := others[i], others[j]
		if (a.Scenario == scenario) != (b.Scenario == scenario) {
			return a.Scenario == scenario
		}
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		return a.Model < b.Model
	})
	first := others[0]
	var list []Entry
	for _, e := range c.entries[key(first.Scenario, first.Model, hash)] {
		if e.File != "" {
			list = append(list, e)
		}
	}
	if len(list) == 0 {
		return Entry{}, false
	}
	k := key(scenario, first.Model, hash)
	i := min(c.played[k], len(list)-1)
	c.played[k]++
	return list[i], true
}

// MissError is a request the cassette holds no recording of.
type MissError struct {
	Dir      string
	Model    string
	Scenario string
	Step     int
	// Nearest is the file, relative to Dir, of the most similar recording ("" if the
	// cassette holds none) and Diff says how the request differs from it.
	Nearest string
	Diff    string
}

func (e *MissError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replay miss: scenario %q, step %d", e.Scenario, e.Step)
	if e.Nearest == "" {
		fmt.Fprintf(&b, ": cassette %s holds no recordings", e.Dir)
		if e.Model != "" {
			fmt.Fprintf(&b, " of model %s", e.Model)
		}
		b.WriteString(" (record them first)")
		return b.String()
	}
	fmt.Fprintf(&b, ": %s; nearest recording %s", e.Diff, filepath.Join(e.Dir, e.Nearest))
	if e.Model != "" {
		fmt.Fprintf(&b, " (model %s)", e.Model)
	}
	return b.String()
}

// miss builds the error for a request with no recording, comparing it with the recording
// that shares the longest conversation prefix (same scenario and step break ties).
func (c *Cassette) miss(modelName, scenario string, step int, now Request) error {
	c.mu.Lock()
	var cands []Entry
	for _, list := range c.entries {
		for _, e := range list {
			if e.File != "" && (modelName == "" || e.Model == modelName) {
				cands = append(cands, e)
			}
		}
	}
	c.mu.Unlock()
	sort.Slice(cands, func(i, j int) bool { return cands[i].File < cands[j].File })
	miss := &MissError{Dir: c.dir, Model: modelName, Scenario: scenario, Step: step}
	bestScore := -1
	var best *Recording
	for _, e := range cands {
		rec, err := c.load(e)
		if err != nil {
			continue
		}
		score := 4 * commonPrefix(rec.Request.Messages, now.Messages)
		if e.Scenario == scenario {
			score += 2
		}
		if e.Step == step {
			score++
		}
		if score > bestScore {
			bestScore, best, miss.Nearest = score, rec, filepath.FromSlash(e.File)
		}
	}
	if best != nil {
		miss.Diff = diff(best.Request, now)
	}
	return miss
}

func commonPrefix(a, b []Message) int {
	n := 0
	for n < len(a) && n < len(b) && sameMessage(a[n], b[n]) {
		n++
	}
	return n
}

func sameMessage(a, b Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolName != b.ToolName || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i].Name != b.ToolCalls[i].Name || string(a.ToolCalls[i].Arguments) != string(b.ToolCalls[i].Arguments) {
			return false
		}
	}
	return true
}
