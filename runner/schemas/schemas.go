// Package schemas generates the JSON Schemas of runner's output formats from their Go
// types by reflection (github.com/invopop/jsonschema): bench.json (runner/bench),
// result.json (runner/result), the --json report (runner/report) and transcript lines
// (runner/transcript). Generated, they
// cover every field anyone adds to those types, and cannot drift from what is written.
// The task file schema is generated the same way from runner/task's types (Task), and
// committed as runner/task/task.schema.json for editors; a test keeps the two equal.
package schemas

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"

	"github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"

	"github.com/agentrunner/runner/runner/bench"
	"github.com/agentrunner/runner/runner/report"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
)

// Names are the formats Get knows, "task" first (the default of `runner schema`).
var Names = []string{"task", "bench", "result", "report", "transcript"}

// IDPrefix starts every schema's $id; the format's version follows its name.
const IDPrefix = "https://github.com/agentrunner/runner/schema/"

// Get returns the schema of a format, indented JSON ending in a newline.
func Get(name string) ([]byte, error) {
	var s *jsonschema.Schema
	switch name {
	case "task":
		return task.Schema(), nil
	case "bench":
		s = reflector().Reflect(&bench.Report{})
		s.ID = jsonschema.ID(fmt.Sprintf("%sbench-v%d.json", IDPrefix, bench.FormatVersion))
		s.Title = "runner bench.json"
	case "result":
		s = reflector().Reflect(&result.Scenario{})
		s.ID = IDPrefix + "result-v1.json"
		s.Title = "runner result.json: one scenario's record"
	case "report":
		s = reflector().Reflect(&report.JSONReport{})
		s.ID = jsonschema.ID(fmt.Sprintf("%sreport-v%d.json", IDPrefix, report.JSONSchemaVersion))
		s.Title = "runner run --json: the run's report"
	case "transcript":
		s = transcriptSchema()
	default:
		return nil, fmt.Errorf("no schema named %q (known: %s)", name, strings.Join(Names, ", "))
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return append(b, '\n'), nil
}

func reflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		// Readers of older files must accept fields added later, and writers omit
		// empty optional ones: only fields without omitempty are required.
		AllowAdditionalProperties: true,
		// Package-qualified names: transcript.Decision holds a policy.Decision.
		Namer: func(t reflect.Type) string {
			if t.Name() == "" || t.PkgPath() == "" {
				return "" // unnamed and builtin types: the reflector's default
			}
			return path.Base(t.PkgPath()) + "." + t.Name()
		},
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == reflect.TypeOf(bench.Ratio(0)) {
				// A probability, or null when unknown (pass@k with fewer than k runs).
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "number", Minimum: "0", Maximum: "1"}, {Type: "null"}}}
			}
			return nil
		},
	}
}

// transcriptSchema is the schema of one transcript line: the event envelope, with data
// checked against the payload type of the event's type.
func transcriptSchema() *jsonschema.Schema {
	r := reflector()
	s := r.Reflect(&transcript.Event{})
	s.ID = jsonschema.ID(fmt.Sprintf("%stranscript-v%d.json", IDPrefix, transcript.FormatVersion))
	s.Title = "runner transcript.jsonl: one line (event)"
	types := make([]string, 0, len(transcript.Payloads))
	for typ := range transcript.Payloads {
		types = append(types, typ)
	}
	sort.Strings(types)
	def := s.Definitions["transcript.Event"]
	if def == nil {
		def = s
	}
	if p, ok := def.Properties.Get("type"); ok {
		for _, typ := range types {
			p.Enum = append(p.Enum, typ)
		}
	}
	if p, ok := def.Properties.Get("data"); ok {
		p.Description = "the payload of the event's type"
	}
	for _, typ := range types {
		payload := r.Reflect(transcript.Payloads[typ]())
		name := "payload_" + typ
		for k, v := range payload.Definitions {
			s.Definitions[k] = v
		}
		payload.Definitions = nil
		payload.Version, payload.ID = "", "" // one document: refs resolve against the root
		if payload.Ref != "" && !strings.HasPrefix(payload.Ref, "#/$defs/") {
			payload.Ref = ""
		}
		s.Definitions[name] = payload
		def.AllOf = append(def.AllOf, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: props("type", &jsonschema.Schema{Const: typ}), Required: []string{"type"}},
			Then: &jsonschema.Schema{Properties: props("data", &jsonschema.Schema{Ref: "#/$defs/" + name})},
		})
	}
	return s
}

func props(name string, s *jsonschema.Schema) *orderedmap.OrderedMap[string, *jsonschema.Schema] {
	p := orderedmap.New[string, *jsonschema.Schema]()
	p.Set(name, s)
	return p
}
