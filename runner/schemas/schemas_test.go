package schemas

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/agentrunner/runner/runner/report"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
)

// Compile compiles the schema of a format (exported for the end-to-end tests' use too).
func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := Get(name)
	assert.NilError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	assert.NilError(t, err)
	c := jsonschema.NewCompiler()
	assert.NilError(t, c.AddResource(name+".json", doc))
	s, err := c.Compile(name + ".json")
	assert.NilError(t, err)
	return s
}

func instance(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	assert.NilError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	assert.NilError(t, err)
	return inst
}

func TestEveryFormatCompiles(t *testing.T) {
	for _, n := range Names {
		compile(t, n)
	}
	_, err := Get("nope")
	assert.ErrorContains(t, err, "known: task, suite, bench, result, report, transcript")
}

// The transcript schema checks each event's data against its own type's payload.
func TestTranscriptSchemaChecksPayloads(t *testing.T) {
	s := compile(t, "transcript")
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := transcript.Create(path, transcript.Options{NoSync: true})
	assert.NilError(t, err)
	assert.NilError(t, w.Write(0, transcript.Start{FormatVersion: 1, Task: "x", Tools: []string{"read_file"}}))
	assert.NilError(t, w.Write(1, transcript.End{Status: result.Passed, Stop: result.StopCompleted, Steps: 1}))
	assert.NilError(t, w.Close())
	events, err := transcript.ReadFile(path)
	assert.NilError(t, err)
	for _, e := range events {
		assert.NilError(t, s.Validate(instance(t, e)), "%s", e.Type)
	}
	bad := transcript.Event{Type: transcript.TypeEnd, Time: time.Now(), Data: json.RawMessage(`{"status": 3}`)}
	assert.Assert(t, s.Validate(instance(t, bad)) != nil, "an end event whose status is a number must not validate")
	unknown := transcript.Event{Type: "surprise", Time: time.Now()}
	assert.Assert(t, s.Validate(instance(t, unknown)) != nil, "an unknown event type must not validate")
}

func TestResultSchema(t *testing.T) {
	s := compile(t, "result")
	res := result.Scenario{Name: "a", File: "a.yaml", Model: "oracle", Status: result.Passed, Stop: result.StopCompleted,
		Assertions: []result.Assertion{{Kind: "completed", Passed: true, Message: "ok"}}}
	assert.NilError(t, s.Validate(instance(t, res)))
	var doc map[string]any
	b, _ := json.Marshal(res)
	assert.NilError(t, json.Unmarshal(b, &doc))
	delete(doc, "status")
	err := s.Validate(doc)
	assert.Assert(t, err != nil)
	assert.Assert(t, is.Contains(err.Error(), "status"))
	_ = os.Stdout
}

// TestTaskSchemaIsGenerated fails when the committed task.schema.json (which editors fetch
// and runner/task embeds) is not what the Go types generate; `go test ./runner/schemas
// -update` rewrites it.
func TestTaskSchemaIsGenerated(t *testing.T) {
	got, err := Task()
	assert.NilError(t, err)
	const committed = "../task/task.schema.json"
	if golden.FlagUpdate() {
		assert.NilError(t, os.WriteFile(committed, got, 0o644))
	}
	want, err := os.ReadFile(committed)
	assert.NilError(t, err)
	assert.Assert(t, bytes.Equal(got, want), "%s is not what the Go types generate: run go test ./runner/schemas -update", committed)
	served, err := Get("task")
	assert.NilError(t, err)
	assert.Assert(t, bytes.Equal(served, want), "runner schema task serves another schema")
}

// TestSuiteSchemaIsGenerated: the same for suite.schema.json (`runner schema suite`).
func TestSuiteSchemaIsGenerated(t *testing.T) {
	got, err := Suite()
	assert.NilError(t, err)
	const committed = "../task/suite.schema.json"
	if golden.FlagUpdate() {
		assert.NilError(t, os.WriteFile(committed, got, 0o644))
	}
	want, err := os.ReadFile(committed)
	assert.NilError(t, err)
	assert.Assert(t, bytes.Equal(got, want), "%s is not what the Go types generate: run go test ./runner/schemas -update", committed)
	served, err := Get("suite")
	assert.NilError(t, err)
	assert.Assert(t, bytes.Equal(served, want), "runner schema suite serves another schema")
	// It holds exactly the keys a suite file may set, and validates one.
	var doc struct {
		Properties map[string]any `json:"properties"`
	}
	assert.NilError(t, json.Unmarshal(got, &doc))
	var keys []string
	for k := range doc.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want2 := append([]string(nil), task.SuiteKeys...)
	sort.Strings(want2)
	assert.DeepEqual(t, keys, want2)
	s := compile(t, "suite")
	var good, bad map[string]any
	assert.NilError(t, json.Unmarshal([]byte(`{"model": "oracle", "max_steps": 5, "timeout": "2m", "env": {"A": "b"}, "vars": {"x": 1}}`), &good))
	assert.NilError(t, s.Validate(good))
	assert.NilError(t, json.Unmarshal([]byte(`{"prompt": "not shared"}`), &bad))
	assert.Assert(t, s.Validate(bad) != nil, "prompt is not a suite key")
}

// TestReportSchema: what runner run --json writes validates against `runner schema report`,
// and a report whose totals are not numbers does not.
func TestReportSchema(t *testing.T) {
	s := compile(t, "report")
	var b bytes.Buffer
	run := result.Run{Started: time.Now(), Duration: result.Millis(time.Second), Scenarios: []result.Scenario{{Name: "a", File: "a.yaml",
		Model: "oracle", Status: result.Passed, Stop: result.StopCompleted,
		Assertions: []result.Assertion{{Kind: "completed", Passed: true, Message: "ok"}}}}}
	assert.NilError(t, report.WriteJSON(&b, run))
	inst, err := jsonschema.UnmarshalJSON(&b)
	assert.NilError(t, err)
	assert.NilError(t, s.Validate(inst))
	var doc map[string]any
	assert.NilError(t, json.Unmarshal([]byte(`{"schema_version": 2, "runner_version": "x", "started": "2026-01-01T00:00:00Z", "duration_ms": 1.5, "totals": {"scenarios": "one"}, "scenarios": []}`), &doc))
	assert.Assert(t, s.Validate(doc) != nil, "totals.scenarios as a string must not validate")

	// Every duration is a number of milliseconds: the generated schema says so.
	got, err := Get("result")
	assert.NilError(t, err)
	assert.Assert(t, bytes.Contains(got, []byte(`"duration_ms": {
      "type": "number",
      "description": "milliseconds"`)), "%s", got)
	assert.Assert(t, !bytes.Contains(got, []byte(`_ns"`)))
}
