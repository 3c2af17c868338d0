package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/agentrunner/runner/runner/result"
)

// JSONSchemaVersion is the version of the JSON report's layout. It changes only when a
// field is renamed or removed; added fields keep it. 2: every duration a *_ms field
// (version 1's *_ns fields still read).
const JSONSchemaVersion = 2

// JSONReport is the JSON report (runner run --json): the run's scenarios as
// result.Scenario records (the same shape as each scenario's result.json, so reports can
// be merged) plus totals. Its schema is `runner schema report`.
type JSONReport struct {
	SchemaVersion int               `json:"schema_version"`
	RunnerVersion string            `json:"runner_version"`
	Started       time.Time         `json:"started"`
	Duration      result.Millis     `json:"duration_ms"`
	Totals        JSONTotals        `json:"totals"`
	Scenarios     []result.Scenario `json:"scenarios"`
	// Repeated is each scenario's runs and pass@k when scenarios ran more than once
	// (--repeat N, N > 1); absent otherwise.
	Repeated []Repeated `json:"repeated,omitempty"`
	// Warmup is runner's warming of the shared build cache before the scenarios (its
	// time is not in Duration); absent when there was nothing to warm.
	Warmup *result.Warmup `json:"warmup,omitempty"`
}

// JSONTotals are the run's totals in the JSON report.
type JSONTotals struct {
	Scenarios        int           `json:"scenarios"`
	Passed           int           `json:"passed"`
	Failed           int           `json:"failed"`
	Errored          int           `json:"errored"`
	Steps            int           `json:"steps"`
	ToolCalls        int           `json:"tool_calls"`
	Denied           int           `json:"denied"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	Duration         result.Millis `json:"duration_ms"`
	// Cost is what the model calls cost, unknown prices counted apart.
	Cost *result.CostTotal `json:"cost,omitempty"`
	// PassAtK[k-1] and PassHatK[k-1] are the means over the repeated scenarios of their
	// pass@k and pass^k (as bench's model summary), when scenarios ran more than once.
	PassAtK  []*float64 `json:"pass_at_k,omitempty"`
	PassHatK []*float64 `json:"pass_hat_k,omitempty"`
}

// WriteJSON writes the JSON report of a run. Invalid UTF-8 in model text becomes
// U+FFFD and control characters are escaped, so the report is always valid JSON.
func WriteJSON(w io.Writer, run result.Run) error {
	rep := JSONReport{
		SchemaVersion: JSONSchemaVersion,
		RunnerVersion: runnerVersion(run),
		Started:       run.Started,
		Duration:      run.Duration,
		Scenarios:     make([]result.Scenario, len(run.Scenarios)),
		Warmup:        run.Warmup,
	}
	t := &rep.Totals
	t.Scenarios = len(run.Scenarios)
	t.Passed, t.Failed, t.Errored = run.Counts()
	t.PromptTokens, t.CompletionTokens = tokens(run)
	t.Duration = run.Duration
	if cost := run.Cost(); cost.Prices != "" {
		t.Cost = &cost
	}
	if rep.Repeated = repeatedOf(run); rep.Repeated != nil {
		for k := 1; k <= maxRepeats(rep.Repeated); k++ {
			t.PassAtK = append(t.PassAtK, meanAt(rep.Repeated, k, false))
			t.PassHatK = append(t.PassHatK, meanAt(rep.Repeated, k, true))
		}
	}
	for i, s := range run.Scenarios {
		t.Steps += s.Steps
		t.ToolCalls += s.ToolCalls
		t.Denied += s.Denied
		if s.Assertions == nil {
			s.Assertions = []result.Assertion{} // readers can iterate without a null check
		}
		rep.Scenarios[i] = s
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("write JSON report: %w", err)
	}
	return nil
}

// UnmarshalJSON reads a --json report, also one written before durations were *_ms.
func (r *JSONReport) UnmarshalJSON(b []byte) error {
	type plain JSONReport
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	return result.ReadLegacy(b, result.Legacy{Key: "duration_ns", New: "duration_ms", Unit: time.Nanosecond, To: &r.Duration})
}

// UnmarshalJSON reads the totals, also ones with duration_ns.
func (t *JSONTotals) UnmarshalJSON(b []byte) error {
	type plain JSONTotals
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	return result.ReadLegacy(b, result.Legacy{Key: "duration_ns", New: "duration_ms", Unit: time.Nanosecond, To: &t.Duration})
}
