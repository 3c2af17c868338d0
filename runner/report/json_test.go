package report

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"

	"github.com/agentrunner/runner/runner/result"
)

func TestJSONGolden(t *testing.T) {
	var out bytes.Buffer
	assert.NilError(t, WriteJSON(&out, fixedRun()))
	golden.Assert(t, out.String(), "report.golden.json")

	var back JSONReport
	assert.NilError(t, json.Unmarshal(out.Bytes(), &back))
	assert.Equal(t, back.SchemaVersion, JSONSchemaVersion)
	one := 1.0
	assert.DeepEqual(t, back.Totals, JSONTotals{
		Scenarios: 5, Passed: 2, Failed: 2, Errored: 1, Steps: 31, ToolCalls: 32, Denied: 1,
		PromptTokens: 33200, CompletionTokens: 2940, Duration: fixedRun().Duration,
		// Only rename-function ran twice (2/2): the means are its pass@k and pass^k.
		PassAtK: []*float64{&one, &one}, PassHatK: []*float64{&one, &one},
	})
	assert.DeepEqual(t, back.Scenarios[0], fixedRun().Scenarios[0])
}

func TestJSONHostileTextStaysValid(t *testing.T) {
	run := result.Run{Scenarios: []result.Scenario{{Name: "x", Status: result.Failed, Summary: hostile}}}
	var out bytes.Buffer
	assert.NilError(t, WriteJSON(&out, run))
	assert.Check(t, json.Valid(out.Bytes()))
	var back JSONReport
	assert.NilError(t, json.Unmarshal(out.Bytes(), &back))
	assert.Check(t, back.Scenarios[0].Assertions != nil, "assertions is [] rather than null")
}

// TestJSONReadsTheNanosecondReport: a --json report written before every duration became
// *_ms (duration_ns, model_time_ns, ...) still reads, with the same durations, so older
// reports still merge.
func TestJSONReadsTheNanosecondReport(t *testing.T) {
	old, err := os.ReadFile("testdata/report-ns.json")
	assert.NilError(t, err)
	assert.Assert(t, bytes.Contains(old, []byte(`"model_time_ns": 900000000`)), "the fixture is the old format")
	var back JSONReport
	assert.NilError(t, json.Unmarshal(old, &back))
	want := fixedRun()
	assert.Equal(t, back.Duration, want.Duration)
	assert.Equal(t, back.Totals.Duration, want.Duration)
	// The older format counted repeats from 0; read, they count from 1 as runs do now (the
	// fixture leaves a run that was not repeated at 0).
	first := want.Scenarios[0]
	first.Repeat = 1
	assert.DeepEqual(t, back.Scenarios[0], first)
	for i, s := range back.Scenarios {
		assert.Equal(t, s.Repeat, max(want.Scenarios[i].Repeat, 1), "scenario %d", i)
		assert.Equal(t, s.Duration, want.Scenarios[i].Duration, "scenario %d", i)
		assert.Equal(t, s.ModelTime, want.Scenarios[i].ModelTime, "scenario %d", i)
		assert.Equal(t, s.ToolTime, want.Scenarios[i].ToolTime, "scenario %d", i)
	}
}
