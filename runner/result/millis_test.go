package result

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestMillisIsAFloatOfMilliseconds(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{12*time.Millisecond + 345*time.Microsecond, "12.345"},
		{12*time.Millisecond + 345*time.Microsecond + 600*time.Nanosecond, "12.346"}, // to the microsecond
		{83 * time.Second, "83000"},
		{-1500 * time.Microsecond, "-1.5"},
	} {
		b, err := json.Marshal(Millis(c.d))
		assert.NilError(t, err)
		assert.Equal(t, string(b), c.want, "%v", c.d)
	}
	var m Millis
	assert.NilError(t, json.Unmarshal([]byte("1234.567"), &m))
	assert.Equal(t, m.Duration(), 1234567*time.Microsecond)
	assert.NilError(t, json.Unmarshal([]byte("42"), &m)) // older transcripts wrote integers
	assert.Equal(t, m.Duration(), 42*time.Millisecond)
	assert.ErrorContains(t, json.Unmarshal([]byte("1e300"), &m), "milliseconds")
	assert.ErrorContains(t, json.Unmarshal([]byte(`"12ms"`), &m), "milliseconds")
}

// TestOldResultFilesStillRead: a result.json written before every duration became *_ms
// (duration_ns, model_time_ns, tool_time_ns, load_time_ns, eval_time_ns and a test's
// duration_ns) reads with the same durations, so old output directories still merge,
// view and rerun.
func TestOldResultFilesStillRead(t *testing.T) {
	old := `{"name":"a","file":"a.yaml","model":"m","repeat":0,"index":0,"status":"failed",
	  "stop_reason":"completed","steps":2,"tool_calls":1,"denied":0,"tool_errors":0,
	  "usage":{"prompt_tokens":1,"completion_tokens":2,"eval_time_ns":250000000},
	  "started":"2026-01-01T00:00:00Z","duration_ns":1234567891,"model_time_ns":900000000,
	  "tool_time_ns":210000000,"load_time_ns":1500000,"summary":"\"duration_ms\": 5",
	  "assertions":[{"kind":"command","passed":false,"message":"x",
	    "tests":[{"name":"t1","status":"passed","duration_ns":2000000}]}]}`
	var s Scenario
	assert.NilError(t, json.Unmarshal([]byte(old), &s))
	assert.Equal(t, s.Duration.Duration(), 1234567891*time.Nanosecond)
	assert.Equal(t, s.ModelTime.Duration(), 900*time.Millisecond)
	assert.Equal(t, s.ToolTime.Duration(), 210*time.Millisecond)
	assert.Equal(t, s.LoadTime.Duration(), 1500*time.Microsecond)
	assert.Equal(t, s.Usage.EvalTime.Duration(), 250*time.Millisecond)
	assert.Equal(t, s.Assertions[0].Tests[0].Duration.Duration(), 2*time.Millisecond)
	assert.Equal(t, s.Repeat, 1, "the older format counted repeats from 0")

	// Written again, every duration is a *_ms field and reads back the same.
	b, err := json.Marshal(s)
	assert.NilError(t, err)
	for _, key := range []string{`"duration_ns"`, `"model_time_ns"`, `"eval_time_ns"`, `"load_time_ns"`} {
		assert.Assert(t, !strings.Contains(string(b), key), "%s written again", key)
	}
	assert.Assert(t, strings.Contains(string(b), `"duration_ms":1234.568`), "%s", b)
	var back Scenario
	assert.NilError(t, json.Unmarshal(b, &back))
	assert.Equal(t, back.ModelTime, s.ModelTime)
	assert.Equal(t, back.Assertions[0].Tests[0].Duration, s.Assertions[0].Tests[0].Duration)

	// A new file's *_ms wins over a stray old key; text that merely mentions a key is data.
	var both Scenario
	assert.NilError(t, json.Unmarshal([]byte(`{"duration_ms":5,"duration_ns":9000000000,"summary":"\"model_time_ns\": 7"}`), &both))
	assert.Equal(t, both.Duration.Duration(), 5*time.Millisecond)
	assert.Equal(t, both.ModelTime, Millis(0))

	var run Run
	assert.NilError(t, json.Unmarshal([]byte(`{"duration_ns":3000000000,"scenarios":[`+old+`]}`), &run))
	assert.Equal(t, run.Duration.Duration(), 3*time.Second)
	assert.Equal(t, run.Scenarios[0].ToolTime.Duration(), 210*time.Millisecond)
}
