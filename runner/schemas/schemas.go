// Package schemas generates the JSON Schemas of runner's output formats from their Go
// types by reflection (github.com/google/jsonschema-go, the MCP SDK's schema library and
// so the one the binary links anyway): bench.json (runner/bench), result.json
// (runner/result), the --json report (runner/report) and transcript lines
// (runner/transcript). Generated, they cover every field anyone adds to those types, and
// cannot drift from what is written. The task file schema is generated from runner/task's
// types too, by a test (task_gen_test.go, with invopop/jsonschema, test-only), and
// committed as runner/task/task.schema.json for editors and `runner schema task`.
package schemas

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentrunner/runner/runner/bench"
	"github.com/agentrunner/runner/runner/report"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
)

// Names are the formats Get knows, "task" first (the default of `runner schema`).
var Names = []string{"task", "suite", "bench", "result", "report", "transcript"}

// IDPrefix starts every schema's $id; the format's version follows its name.
const IDPrefix = "https://github.com/agentrunner/runner/schema/"

// draft is the JSON Schema dialect of the generated schemas.
const draft = "https://json-schema.org/draft/2020-12/schema"

// Get returns the schema of a format, indented JSON ending in a newline.
func Get(name string) ([]byte, error) {
	var s *jsonschema.Schema
	var err error
	switch name {
	case "task":
		return task.Schema(), nil
	case "suite":
		return task.SuiteSchema(), nil
	case "bench":
		s, err = reflect_(reflect.TypeFor[bench.Report]())
		if s != nil {
			s.ID = fmt.Sprintf("%sbench-v%d.json", IDPrefix, bench.FormatVersion)
			s.Title = "runner bench.json"
		}
	case "result":
		s, err = reflect_(reflect.TypeFor[result.Scenario]())
		if s != nil {
			s.ID = IDPrefix + "result-v2.json"
			s.Title = "runner result.json: one scenario's record"
		}
	case "report":
		s, err = reflect_(reflect.TypeFor[report.JSONReport]())
		if s != nil {
			s.ID = fmt.Sprintf("%sreport-v%d.json", IDPrefix, report.JSONSchemaVersion)
			s.Title = "runner run --json: the run's report"
		}
	case "transcript":
		s, err = transcriptSchema()
	default:
		return nil, fmt.Errorf("no schema named %q (known: %s)", name, strings.Join(Names, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s.Schema = draft
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return append(b, '\n'), nil
}

// typeSchemas are the types whose JSON is not what their Go kind says.
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	// A probability, or null when unknown (pass@k with fewer than k runs).
	reflect.TypeFor[bench.Ratio](): {OneOf: []*jsonschema.Schema{
		{Type: "number", Minimum: jsonschema.Ptr(0.0), Maximum: jsonschema.Ptr(1.0)}, {Type: "null"}}},
	// Any JSON value, as written (tool arguments, an event's payload).
	reflect.TypeFor[json.RawMessage](): {},
	reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
	// Every duration: milliseconds, to the microsecond (result.Millis).
	reflect.TypeFor[result.Millis](): {Type: "number", Description: "milliseconds"},
	// The task file's approval block, as a start event records it: its fields carry the
	// task schema's jsonschema tags (task_gen_test.go), which this library would read as
	// descriptions; `runner schema task` describes it.
	reflect.TypeFor[result.Approval](): {Type: "object", Description: "the approval policy as the task resolved it: mode, default and rules, as in the task file (runner schema task)"},
}

// reflect_ is the schema of t. Readers of older files must accept fields added later, and
// writers omit empty optional ones: objects allow other properties, and only fields
// without omitempty are required.
func reflect_(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		return nil, err
	}
	allowMore(s)
	return s, nil
}

// allowMore drops the additionalProperties: false the library puts on every struct.
func allowMore(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Not != nil && reflect.ValueOf(*ap.Not).IsZero() {
		s.AdditionalProperties = nil
	}
	allowMore(s.AdditionalProperties)
	allowMore(s.Items)
	for _, p := range s.Properties {
		allowMore(p)
	}
	for _, sub := range s.OneOf {
		allowMore(sub)
	}
}

// transcriptSchema is the schema of one transcript line: the event envelope, with data
// checked against the payload type of the event's type.
func transcriptSchema() (*jsonschema.Schema, error) {
	s, err := reflect_(reflect.TypeFor[transcript.Event]())
	if err != nil {
		return nil, err
	}
	s.ID = fmt.Sprintf("%stranscript-v%d.json", IDPrefix, transcript.FormatVersion)
	s.Title = "runner transcript.jsonl: one line (event)"
	types := make([]string, 0, len(transcript.Payloads))
	for typ := range transcript.Payloads {
		types = append(types, typ)
	}
	sort.Strings(types)
	if p := s.Properties["type"]; p != nil {
		for _, typ := range types {
			p.Enum = append(p.Enum, typ)
		}
	}
	if p := s.Properties["data"]; p != nil {
		p.Description = "the payload of the event's type"
	}
	s.Defs = map[string]*jsonschema.Schema{}
	for _, typ := range types {
		t := reflect.TypeOf(transcript.Payloads[typ]())
		for t.Kind() == reflect.Pointer {
			t = t.Elem() // a payload is an object, not null
		}
		payload, err := reflect_(t)
		if err != nil {
			return nil, fmt.Errorf("payload of %s: %w", typ, err)
		}
		name := "payload_" + typ
		s.Defs[name] = payload
		var c any = typ
		s.AllOf = append(s.AllOf, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"type": {Const: &c}}, Required: []string{"type"}},
			Then: &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"data": {Ref: "#/$defs/" + name}}},
		})
	}
	return s, nil
}
