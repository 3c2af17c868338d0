// Package bench runs a suite over several models and repeats and turns the results into
// numbers people can trust: pass rates with Wilson intervals, pass@k and pass^k, flaky
// scenarios, timings and token rates, and a comparison with a baseline that fails only
// on a statistically significant drop. It writes bench.json (typed here, with a JSON
// Schema), bench.md and a self-contained bench.html. It knows no command line.
package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
)

// FormatVersion is the version of the bench.json format; readers reject later versions
// (2 made every duration a *_ms field, version 1 files read through the old keys; 3
// counts loads from the server's /api/ps and records where each model ran: version 2's
// "reloads", a count of requests with a long load_duration, is not read).
const FormatVersion = 3

// Report is bench.json: a whole benchmark.
type Report struct {
	// Version is FormatVersion.
	Version int `json:"version"`
	// Runner is the runner version that wrote the report.
	Runner   string        `json:"runner"`
	Started  time.Time     `json:"started"`
	Duration result.Millis `json:"duration_ms"`
	Host     Host          `json:"host"`
	// Machine is the model server's hardware, where its log was given (--ollama-log):
	// Ollama's API does not say.
	Machine *Machine `json:"machine,omitempty"`
	// Repeat is how many times each (model, scenario) cell was planned to run.
	Repeat int `json:"repeat"`
	// Budget is what stopped new cells from starting, when set.
	Budget Budget `json:"budget"`
	// Tasks are the task files, with their content hashes, so two reports can be checked
	// to have run the same suite.
	Tasks  []TaskFile    `json:"tasks"`
	Models []ModelResult `json:"models"`
	// Warnings are things a reader should know (a prompt reached the context length).
	Warnings []string `json:"warnings,omitempty"`
}

// Host is where the bench ran.
type Host struct {
	Name string `json:"name"`
	OS   string `json:"os"`
	Arch string `json:"arch"`
	CPUs int    `json:"cpus"`
}

// Machine is the hardware a model server found, from its log.
type Machine struct {
	// GPUs are its devices; one named "cpu" when it found no GPU.
	GPUs []model.GPU `json:"gpus"`
	// Source is where this was read ("server log").
	Source string `json:"source"`
}

// Budget limits a bench: new cells stop starting once either is spent (0: no limit).
type Budget struct {
	Tokens int           `json:"tokens,omitempty"`
	Time   result.Millis `json:"time_ms,omitempty"`
	// USD is the --budget-usd limit on what the cells may cost.
	USD float64 `json:"usd,omitempty"`
	// Spent is true when a budget stopped cells from starting.
	Spent bool `json:"spent,omitempty"`
}

// TaskFile is one task of the suite.
type TaskFile struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Suite is the suite file (runner.yaml) whose defaults the task inherited, and
	// SuiteSHA256 its content's: a changed default changes the task too.
	Suite       string `json:"suite,omitempty"`
	SuiteSHA256 string `json:"suite_sha256,omitempty"`
}

// definition is what a task is defined by: its file's hash and its suite file's.
func (t TaskFile) definition() string {
	if t.SHA256 == "" {
		return ""
	}
	return t.SHA256 + " " + t.SuiteSHA256
}

// Model statuses.
const (
	// ModelRan: the model was benchmarked (some cells may still have errored).
	ModelRan = "ran"
	// ModelSkipped: the probe found the model unusable (not pulled, no tools, server
	// unreachable); its cells are not run and Reason says why.
	ModelSkipped = "skipped"
	// ModelNotRun: a budget was spent before the model's turn.
	ModelNotRun = "not_run"
)

// ModelResult is one model's line of the leaderboard and its row of the grid.
type ModelResult struct {
	// Name is PROVIDER:MODEL as requested, kept even when the model could not be used.
	Name string `json:"name"`
	// Agent is the agent kind that ran the cells (runner/agent/kinds) when the bench
	// compares agents (--agent a,b): one line per agent and model. "" for the task's own.
	Agent  string `json:"agent,omitempty"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Probe is what the server said about the model before the run (Ollama).
	Probe *model.Info `json:"probe,omitempty"`
	// WarmUp is the time of the model's first load, before its cells (a few
	// milliseconds when the model was loaded so already).
	WarmUp result.Millis `json:"warm_up_ms,omitempty"`
	// Placement is where the server held the model for its first cells (/api/ps): the
	// share in GPU memory, its size and the context it was loaded with. Loads holds the
	// placement of each later load.
	Placement *model.Placement `json:"placement,omitempty"`
	// Loads are the loads runner asked the server for: one before the first cell, one
	// for each group of cells with other options (num_ctx), and one before a cell that
	// found the model unloaded. Each says whether the server did load the model.
	Loads []model.Load `json:"loads,omitempty"`
	// LoadCount is how many times the server loaded the model during the model's turn:
	// the asked loads it did, and CellLoads, the loads /api/ps showed while cells ran,
	// unasked. Load is their time: the asked loads' requests, and the waits of the
	// cells that ran during an unasked one, kept out of those cells' times.
	LoadCount int           `json:"load_count"`
	CellLoads int           `json:"cell_loads,omitempty"`
	Load      result.Millis `json:"load_ms"`
	// LoggedLoads is how many loads the server's log shows during the model's turn,
	// where it was given (--ollama-log).
	LoggedLoads *int `json:"logged_loads,omitempty"`
	// Parallel is how the cells ran at once and where their time went.
	Parallel Parallel `json:"parallel"`
	// OutDir holds the model's transcripts and result files.
	OutDir    string           `json:"out_dir"`
	Summary   Stats            `json:"summary"`
	Scenarios []ScenarioResult `json:"scenarios"`
}

// Label names the line in tables: the model, or "AGENT @ MODEL" when agents are compared.
func (m ModelResult) Label() string {
	if m.Agent == "" {
		return m.Name
	}
	return m.Agent + " @ " + m.Name
}

// Parallel is how a model's cells ran at once, and where their time went.
type Parallel struct {
	// Cells is how many cells ran at once at most (-j, capped at Slots when known).
	Cells int `json:"cells"`
	// Slots is how many requests the server runs at once for the model (Ollama's
	// OLLAMA_NUM_PARALLEL), where its log says (0: unknown). The server keeps a context
	// of num_ctx tokens for each slot.
	Slots int `json:"slots,omitempty"`
	// Wall is the model's cells from the first start to the last end, loads between
	// groups excluded; CellTime is their own times summed (loads kept out). CellTime over
	// Wall is how many ran at once on average.
	Wall     result.Millis `json:"wall_ms"`
	CellTime result.Millis `json:"cell_time_ms"`
	// Requests is the cells' model requests; the rest are the server's own times summed
	// over them (Ollama): reading prompts, generating, being scheduled (a load included),
	// and waiting (its total time less the other three: for a free slot, or for other
	// requests' turn in a batch they share; it grows with the cells run at once).
	Requests   int           `json:"requests"`
	PromptEval result.Millis `json:"prompt_eval_ms,omitempty"`
	Eval       result.Millis `json:"eval_ms,omitempty"`
	Schedule   result.Millis `json:"schedule_ms,omitempty"`
	Wait       result.Millis `json:"wait_ms,omitempty"`
}

// Concurrency is how many cells ran at once on average (0 when nothing ran).
func (p Parallel) Concurrency() float64 {
	if p.Wall <= 0 {
		return 0
	}
	return float64(p.CellTime) / float64(p.Wall)
}

// time fills the figures from a model's run and its cells.
func (p *Parallel) time(run result.Run, cells []result.Scenario, loads result.Millis) {
	p.Wall = max(run.Duration-loads, 0)
	var server result.Millis
	for _, c := range cells {
		if c.Stop == result.StopNotRun {
			continue
		}
		p.CellTime += c.Duration - c.LoadTime
		p.Requests += c.Steps
		p.PromptEval += c.Usage.PromptEvalTime
		p.Eval += c.Usage.EvalTime
		p.Schedule += c.Usage.ScheduleTime
		server += c.Usage.ServerTime
	}
	p.Wait = max(server-p.PromptEval-p.Eval-p.Schedule, 0)
}

// ScenarioResult is one (model, scenario) cell: its repeats and their statistics.
type ScenarioResult struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Stats Stats  `json:"stats"`
	// Flaky is true when the scenario both passed and failed.
	Flaky bool `json:"flaky"`
	// Runs are the statuses of the repeats in order: passed, failed, error, not_run.
	Runs []string `json:"runs"`
}

// Cell statuses in ScenarioResult.Runs.
const (
	RunPassed = "passed"
	RunFailed = "failed"
	RunError  = "error"
	RunNotRun = "not_run"
)

// Stats are the numbers of a set of runs: a cell's repeats, or a model's whole row.
type Stats struct {
	// Planned = Passed + Failed + Errored + NotRun: no run is ever dropped.
	Planned int `json:"planned"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	// Errored runs failed for infrastructure reasons; they count neither as passes nor
	// as failures.
	Errored int `json:"errored"`
	NotRun  int `json:"not_run"`
	// PassRate is Passed / (Passed + Failed), the measured runs; Interval is its Wilson
	// 95% score interval. With nothing measured the rate is 0 and the interval [0, 1].
	PassRate float64    `json:"pass_rate"`
	Interval [2]float64 `json:"interval"`
	// PassAtK[k-1] is pass@k and PassHatK[k-1] pass^k, for k = 1..repeat: per scenario
	// over its measured runs, and for a model the mean over its scenarios (a scenario
	// with fewer than k measured runs has no value for k and is left out of that mean).
	PassAtK  []Ratio `json:"pass_at_k"`
	PassHatK []Ratio `json:"pass_hat_k"`
	// Flaky counts scenarios that both passed and failed (a model's row only).
	Flaky int `json:"flaky,omitempty"`
	// The rest are over the measured runs (passed or failed).
	Steps            Dist `json:"steps"`
	PromptTokens     Dist `json:"prompt_tokens"`
	CompletionTokens Dist `json:"completion_tokens"`
	// WallMS is each run's wall time in milliseconds.
	WallMS Dist `json:"wall_ms"`
	// TokensPerSecond's mean is the total completion tokens over the total generation
	// time, where the server reports that time (Ollama); its p95 is over runs' rates.
	TokensPerSecond Dist `json:"tokens_per_second"`
	ToolErrors      int  `json:"tool_errors"`
	Denials         int  `json:"policy_denials"`
	// Cost is what every run that ran cost (errored ones included: they were paid for),
	// unknown prices counted apart; absent when no run has a cost.
	Cost *result.CostTotal `json:"cost,omitempty"`
}

// Dist is the mean and 95th percentile (nearest rank) of a measure.
type Dist struct {
	Mean float64 `json:"mean"`
	P95  float64 `json:"p95"`
}

// Ratio is a probability that may be unknown (NaN), such as pass@k for a cell with fewer
// than k measured runs; JSON writes an unknown one as null.
type Ratio float64

// Known reports whether the value is a number.
func (r Ratio) Known() bool { return !math.IsNaN(float64(r)) }

// MarshalJSON writes null for an unknown value.
func (r Ratio) MarshalJSON() ([]byte, error) {
	if !r.Known() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(r), 'g', -1, 64), nil
}

// UnmarshalJSON reads a number or null (unknown).
func (r *Ratio) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*r = Ratio(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("ratio %s: %w", b, err)
	}
	*r = Ratio(f)
	return nil
}

// UnmarshalJSON reads bench.json, also one written before durations were *_ms (a
// baseline from an older runner).
func (r *Report) UnmarshalJSON(b []byte) error {
	type plain Report
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	return result.ReadLegacy(b, result.Legacy{Key: "duration_ns", New: "duration_ms", Unit: time.Nanosecond, To: &r.Duration})
}

// UnmarshalJSON reads a budget, also one with time_ns.
func (bu *Budget) UnmarshalJSON(b []byte) error {
	type plain Budget
	if err := json.Unmarshal(b, (*plain)(bu)); err != nil {
		return err
	}
	return result.ReadLegacy(b, result.Legacy{Key: "time_ns", New: "time_ms", Unit: time.Nanosecond, To: &bu.Time})
}

// UnmarshalJSON reads a model's results, also ones with warm_up_ns.
func (m *ModelResult) UnmarshalJSON(b []byte) error {
	type plain ModelResult
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	return result.ReadLegacy(b, result.Legacy{Key: "warm_up_ns", New: "warm_up_ms", Unit: time.Nanosecond, To: &m.WarmUp})
}

// UnmarshalJSON reads statistics, also ones with wall_seconds (a Dist in seconds).
func (s *Stats) UnmarshalJSON(b []byte) error {
	type plain Stats
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(`"wall_seconds"`)) {
		return nil
	}
	var old struct {
		Wall *Dist `json:"wall_seconds"`
		New  *Dist `json:"wall_ms"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	if old.Wall != nil && old.New == nil {
		s.WallMS = Dist{Mean: old.Wall.Mean * 1000, P95: old.Wall.P95 * 1000}
	}
	return nil
}
