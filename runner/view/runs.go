package view

// runs.go: several output directories side by side (`runner view A B ...`): a page listing
// the runs (date, model, pass rate, counts) with a grid of every scenario's verdict in
// each, and for each scenario two consecutive runs share, a page comparing the two: the
// verdicts, steps, tokens, the assertions that changed, and the steps side by side from
// the first divergence. Everything is read from result.json files and transcripts alone.

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/version"
)

//go:embed assets/runs.html.tmpl
var runsHTML string

//go:embed assets/versus.html.tmpl
var versusHTML string

var (
	runsTmpl   = template.Must(template.New("runs").Funcs(funcs).Parse(runsHTML))
	versusTmpl = template.Must(template.New("versus").Funcs(funcs).Parse(versusHTML))
)

// limitCell bounds a side-by-side cell's text (a step's words, a call's arguments and
// output): the scenario's own page has the rest.
const limitCell = 600

// Run is one output directory, summed up for the comparison of several.
type Run struct {
	// N numbers the runs from 1, in the order given; Dir is the directory as given.
	N   int
	Dir string
	// Started is the earliest scenario start; Models the models that ran, in order.
	Started time.Time
	Models  []string
	Passed  int
	Failed  int
	Errored int
	Tokens  int
	Entries []Entry
	// Link leads from the comparison's directory to this run's index ("" when there is
	// no relative path between them).
	Link  string
	byKey map[string]Entry
	multi bool
}

// PassRate is passed / (passed + failed), errors apart, as "75% (3/4)"; "–" when none was
// measured.
func (r *Run) PassRate() string {
	n := r.Passed + r.Failed
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%d%% (%d/%d)", (r.Passed*100+n/2)/n, r.Passed, n)
}

// key names a scenario across runs: its display name ("name #2"), and its model when the
// run holds several (a bench's output), so one model's scenario meets the same model's.
func (r *Run) key(e Entry) string {
	if r.multi {
		return e.DisplayName() + " @ " + e.Model
	}
	return e.DisplayName()
}

// LoadRun reads one output directory's results.
func LoadRun(dir string, n int) (*Run, error) {
	entries, err := Load(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{N: n, Dir: dir, Entries: entries, byKey: map[string]Entry{}}
	for _, e := range entries {
		if !slices.Contains(r.Models, e.Model) {
			r.Models = append(r.Models, e.Model)
		}
		if !e.Started.IsZero() && (r.Started.IsZero() || e.Started.Before(r.Started)) {
			r.Started = e.Started
		}
		switch e.Status {
		case result.Passed:
			r.Passed++
		case result.Failed:
			r.Failed++
		default:
			r.Errored++
		}
		r.Tokens += e.Usage.PromptTokens + e.Usage.CompletionTokens
	}
	slices.Sort(r.Models)
	r.multi = len(r.Models) > 1
	for _, e := range entries {
		r.byKey[r.key(e)] = e
	}
	return r, nil
}

// GridRow is one scenario across the runs.
type GridRow struct {
	Key   string
	Cells []GridCell
}

// GridCell is a scenario in one run: its verdict, a link to its page, and (from the
// second run on) a link to its comparison with the run before.
type GridCell struct {
	Entry   *Entry
	Link    string
	Versus  string
	Changed bool // the verdict differs from the run before
}

// runsData is the comparison page.
type runsData struct {
	Runs    []*Run
	Rows    []GridRow
	Changed int
	Version string
	Written time.Time
}

// WriteRuns writes the comparison of the output directories dirs into out: out/index.html
// (the runs and the grid) and a page per scenario and pair of consecutive runs that both
// ran it. It returns the index's path.
func WriteRuns(out string, dirs []string) (string, *RunsSummary, error) {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return "", nil, fmt.Errorf("view: %w", err)
	}
	runs := make([]*Run, len(dirs))
	for i, d := range dirs {
		if runs[i], err = LoadRun(d, i+1); err != nil {
			return "", nil, err
		}
		if abs, err := filepath.Abs(d); err == nil {
			if rel, err := filepath.Rel(absOut, abs); err == nil {
				runs[i].Link = pathLink(filepath.ToSlash(rel))
			}
		}
	}
	data := runsData{Runs: runs, Version: version.String(), Written: time.Now()}
	sum := &RunsSummary{Runs: runs}
	var keys []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, e := range r.Entries {
			if k := r.key(e); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	for _, k := range keys {
		row := GridRow{Key: k}
		for i, r := range runs {
			e, ok := r.byKey[k]
			if !ok {
				row.Cells = append(row.Cells, GridCell{})
				continue
			}
			c := GridCell{Entry: &e}
			if r.Link != "" {
				c.Link = r.Link + Link(e.Dir)
			}
			if i > 0 {
				if prev, ok := runs[i-1].byKey[k]; ok {
					c.Versus = versusFile(i+1, k)
					c.Changed = prev.Status != e.Status
					if err := writeVersus(filepath.Join(out, filepath.FromSlash(c.Versus)), runs[i-1], runs[i], prev, e); err != nil {
						return "", nil, err
					}
					if c.Changed {
						data.Changed++
						sum.Changes = append(sum.Changes, Change{Key: k, From: runs[i-1], To: r, Was: prev.Status, Now: e.Status})
					}
				}
			}
			row.Cells = append(row.Cells, c)
		}
		data.Rows = append(data.Rows, row)
	}
	index := filepath.Join(out, Page)
	if err := mkdirAll(out); err != nil {
		return "", nil, err
	}
	if err := writeFile(index, func(w io.Writer) error { return runsTmpl.Execute(w, data) }); err != nil {
		return "", nil, err
	}
	return index, sum, nil
}

// pathLink escapes each segment of a relative directory path and ends it with "/".
func pathLink(rel string) string {
	if rel == "." {
		return ""
	}
	l := Link(rel)
	return strings.TrimSuffix(l, Page)
}

// versusFile is the page comparing scenario key in run n with run n-1, relative to the
// comparison's directory: a name made of the key's safe characters and a hash of it all.
func versusFile(n int, key string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, key)
	if len(safe) > 60 {
		safe = safe[:60]
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key)) // a hash.Hash never fails to write
	return fmt.Sprintf("run%d/%s-%08x.html", n, strings.Trim(safe, "."), h.Sum32())
}

// RunsSummary is what the console prints: the runs and the verdicts that changed.
type RunsSummary struct {
	Runs    []*Run
	Changes []Change
}

// Change is a scenario whose verdict differs between two consecutive runs.
type Change struct {
	Key      string
	From, To *Run
	Was, Now result.Status
}

// WriteText prints the runs side by side and the verdicts that changed (at most max), every
// name cleaned for the terminal.
func (s *RunsSummary) WriteText(w io.Writer, maxChanges int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "run\tstarted\tmodel\tpass rate\tpassed\tfailed\terrored\ttokens\tdirectory")
	for _, r := range s.Runs {
		started := "–"
		if !r.Started.IsZero() {
			started = r.Started.UTC().Format("2006-01-02 15:04 UTC")
		}
		_, _ = fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", r.N, started, Short(strings.Join(r.Models, ", "), 60),
			r.PassRate(), r.Passed, r.Failed, r.Errored, r.Tokens, Short(r.Dir, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, c := range s.Changes {
		if i == maxChanges {
			_, err := fmt.Fprintf(w, "… and %d more changed verdicts (see the page)\n", len(s.Changes)-maxChanges)
			return err
		}
		if _, err := fmt.Fprintf(w, "run %d -> %d: %s: %s -> %s\n", c.From.N, c.To.N, Short(c.Key, 120), c.Was, c.Now); err != nil {
			return err
		}
	}
	return nil
}

// Metric is one line of a comparison's table.
type Metric struct {
	Name    string
	A, B    string
	Changed bool
}

// AssertionChange is an assertion whose outcome or message differs between the two runs.
type AssertionChange struct {
	Kind string
	Line int
	A, B *result.Assertion
}

// StepPair is step N of both runs, as compared.
type StepPair struct {
	N        int
	A, B     *StepView
	Diverges bool // the first step at which the runs differ
	Differs  bool
}

// StepView is one step, shortened for a side-by-side cell.
type StepView struct {
	Text  string
	Calls []CallView
	Error string
}

// CallView is one tool call of a step.
type CallView struct {
	Name, Args, Output string
	Status             string // ok, failed or denied
}

// versusData is the page comparing one scenario in two runs.
type versusData struct {
	Key          string
	RunA, RunB   *Run
	A, B         *Story
	LinkA, LinkB string
	Up           string
	Metrics      []Metric
	Assertions   []AssertionChange
	Same         int // assertions with the same outcome and message
	Steps        []StepPair
	Divergence   int
	Version      string
}

// writeVersus writes the page comparing entry a of run ra with entry b of run rb.
func writeVersus(path string, ra, rb *Run, a, b Entry) error {
	sa, sb := ReadStory(ra.Dir, a), ReadStory(rb.Dir, b)
	d := versusData{Key: rb.key(b), RunA: ra, RunB: rb, A: sa, B: sb, Up: "../" + Page, Version: version.String()}
	if ra.Link != "" {
		d.LinkA = "../" + ra.Link + Link(a.Dir)
	}
	if rb.Link != "" {
		d.LinkB = "../" + rb.Link + Link(b.Dir)
	}
	d.Metrics = metrics(a.Scenario, b.Scenario)
	d.Assertions, d.Same = assertionChanges(a.Assertions, b.Assertions)
	d.Steps, d.Divergence = pairSteps(sa, sb)
	if err := mkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	return writeFile(path, func(w io.Writer) error { return versusTmpl.Execute(w, d) })
}

func metrics(a, b result.Scenario) []Metric {
	row := func(name, x, y string) Metric { return Metric{Name: name, A: x, B: y, Changed: x != y} }
	n := func(v int) string { return fmt.Sprint(v) }
	files := func(s result.Scenario) string {
		if s.FilesChanged == nil {
			return "–"
		}
		return n(s.FilesChanged.Total)
	}
	return []Metric{
		row("verdict", string(a.Status), string(b.Status)),
		row("stopped", string(a.Stop), string(b.Stop)),
		row("reason", Short(a.Reason, 300), Short(b.Reason, 300)),
		row("model", Short(a.Model, 120), Short(b.Model, 120)),
		row("steps", n(a.Steps), n(b.Steps)),
		row("tool calls", n(a.ToolCalls), n(b.ToolCalls)),
		row("tool errors", n(a.ToolErrors), n(b.ToolErrors)),
		row("denied", n(a.Denied), n(b.Denied)),
		row("prompt tokens", n(a.Usage.PromptTokens), n(b.Usage.PromptTokens)),
		row("completion tokens", n(a.Usage.CompletionTokens), n(b.Usage.CompletionTokens)),
		row("time", Duration(a.Duration), Duration(b.Duration)),
		row("files changed", files(a), files(b)),
	}
}

// assertionChanges pairs the assertions of two runs by kind, task-file line and
// occurrence, and returns those whose outcome or message differ (one side nil when only
// one run evaluated it), and how many are the same.
func assertionChanges(as, bs []result.Assertion) ([]AssertionChange, int) {
	type id struct {
		kind string
		line int
		k    int
	}
	ids := func(list []result.Assertion) []id {
		count := map[[2]any]int{}
		out := make([]id, len(list))
		for i, x := range list {
			c := [2]any{x.Kind, x.Line}
			out[i] = id{x.Kind, x.Line, count[c]}
			count[c]++
		}
		return out
	}
	ia, ib := ids(as), ids(bs)
	inB := map[id]int{}
	for i, x := range ib {
		inB[x] = i
	}
	var out []AssertionChange
	same := 0
	matched := map[int]bool{}
	for i, x := range ia {
		a := &as[i]
		j, ok := inB[x]
		if !ok {
			out = append(out, AssertionChange{Kind: x.kind, Line: x.line, A: a})
			continue
		}
		matched[j] = true
		b := &bs[j]
		if a.Passed == b.Passed && a.Error == b.Error && a.Message == b.Message {
			same++
			continue
		}
		out = append(out, AssertionChange{Kind: x.kind, Line: x.line, A: a, B: b})
	}
	for j, x := range ib {
		if !matched[j] {
			out = append(out, AssertionChange{Kind: x.kind, Line: x.line, B: &bs[j]})
		}
	}
	return out, same
}

// maxPairedSteps bounds the side-by-side table; the scenarios' own pages have every step.
const maxPairedSteps = 300

// pairSteps lines up the steps of two stories and finds the first at which they differ:
// what the model said, the tools it called and their arguments, or a step only one has.
func pairSteps(a, b *Story) ([]StepPair, int) {
	n := min(max(len(a.Turns), len(b.Turns)), maxPairedSteps)
	out := make([]StepPair, 0, n)
	divergence := 0
	for i := range n {
		p := StepPair{N: i + 1}
		var sa, sb string
		if i < len(a.Turns) {
			p.A, sa = stepView(a.Turns[i])
		}
		if i < len(b.Turns) {
			p.B, sb = stepView(b.Turns[i])
		}
		p.Differs = p.A == nil || p.B == nil || sa != sb
		if p.Differs && divergence == 0 {
			divergence, p.Diverges = p.N, true
		}
		out = append(out, p)
	}
	return out, divergence
}

// stepView shortens a step for its cell and returns its signature: what the model said and
// called, which two runs must share for the step to be the same.
func stepView(s *Step) (*StepView, string) {
	v := &StepView{}
	var sig strings.Builder
	if s.Response != nil {
		v.Text = Short(s.Response.Content, limitCell)
		sig.WriteString(strings.TrimSpace(s.Response.Content))
		for _, c := range s.Response.ToolCalls {
			sig.WriteString("\x00" + c.Name + "\x00" + string(c.Arguments))
		}
	}
	if s.ModelErr != nil {
		v.Error = Short(s.ModelErr.Error, limitCell)
		sig.WriteString("\x00error")
	}
	for _, c := range s.Calls {
		cv := CallView{Name: Short(c.Name, 80), Args: Short(PrettyJSON(c.Args), limitCell), Output: Short(c.Result.Output, limitCell), Status: "ok"}
		switch {
		case c.Decision != nil && !c.Decision.Decision.Allowed:
			cv.Status = "denied"
		case !c.Result.Success:
			cv.Status = "failed"
		}
		v.Calls = append(v.Calls, cv)
	}
	return v, sig.String()
}

func mkdirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	return nil
}
