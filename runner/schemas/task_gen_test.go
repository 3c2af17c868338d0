package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/invopop/jsonschema"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// Task generates the task file's schema (runner/task/task.schema.json) from the Go types
// the loader decodes into: their json keys, jsonschema tags and descriptions, and the
// registries (assertion kinds, sandbox and approval modes, tool-call parsers). A field
// tagged jsonschema_extras:"use=NAME" is written as the shared definition NAME (a path, a
// regex, text that may be a number, ...); the few shapes a Go type cannot say (approval:
// a mode or a block, score: pass_fraction or a block) are mapped here.
func Task() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // descriptions quote <tool_call>
	enc.SetIndent("", "  ")
	if err := enc.Encode(taskSchema()); err != nil {
		return nil, fmt.Errorf("schema task: %w", err)
	}
	return b.Bytes(), nil
}

// Suite generates the suite file's schema (runner/task/suite.schema.json): the task
// schema's properties that a suite file may set (task.SuiteKeys), none required, and the
// definitions they use.
func Suite() ([]byte, error) {
	s := taskSchema()
	props := jsonschema.NewProperties()
	for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
		if slices.Contains(task.SuiteKeys, pair.Key) {
			props.Set(pair.Key, pair.Value)
		}
	}
	s.Properties, s.Required = props, nil
	s.ID = task.SuiteSchemaURL
	s.Title = "runner suite file (" + task.SuiteFile + ")"
	s.Description = "Defaults for every task file in this directory and below (up to the repository root): each key as in a task file; a task's own value wins, env: and vars: merge by name. Unknown keys are errors."
	// Only the definitions the suite's keys reach.
	b, err := json.Marshal(s.Properties)
	if err != nil {
		return nil, fmt.Errorf("schema suite: %w", err)
	}
	used := map[string]bool{}
	for todo := []string{string(b)}; len(todo) > 0; todo = todo[1:] {
		for _, m := range defRef.FindAllStringSubmatch(todo[0], -1) {
			if !used[m[1]] {
				used[m[1]] = true
				d, _ := json.Marshal(s.Definitions[m[1]])
				todo = append(todo, string(d))
			}
		}
	}
	for name := range s.Definitions {
		if !used[name] {
			delete(s.Definitions, name)
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("schema suite: %w", err)
	}
	return out.Bytes(), nil
}

var defRef = regexp.MustCompile(`"\$ref":"#/\$defs/([^"]+)"`)

func taskSchema() *jsonschema.Schema {
	r := taskReflector()
	s := r.Reflect(&task.Task{})
	s.ID = task.SchemaURL
	s.Title = "runner task file"
	s.Description = "A scenario for runner: a prompt, the tools and policy the agent works under, the workspace it starts from, and the assertions that decide pass or fail. Unknown keys are errors."
	defs := s.Definitions
	add := func(name string, v any) { defs[name] = expand(r, defs, v) }
	add("approvalBlock", approvalBlock{})
	add("agentBlock", agentBlock{})
	add("scoreFile", scoreBlock{})
	for _, k := range task.Kinds {
		if k.Spec != nil {
			add(kindDef(k.Name), k.Spec)
		}
	}
	for name, d := range sharedDefs() {
		defs[name] = d
	}
	defs["assertion"] = assertionSchema()
	setBounds(defs)
	walk(s, uses)
	for _, d := range defs {
		walk(d, uses)
	}
	return s
}

func taskReflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		ExpandedStruct:             true,
		RequiredFromJSONSchemaTags: true,
		Namer: func(t reflect.Type) string {
			switch t {
			case reflect.TypeOf(model.Options{}):
				return "modelOptions"
			case reflect.TypeOf(tools.Limits{}):
				return "limits"
			case reflect.TypeOf(task.WorkspaceSpec{}):
				return "workspace"
			case reflect.TypeOf(task.VerifySpec{}):
				return "verify"
			case reflect.TypeOf(task.MCPServer{}):
				return "mcpServer"
			}
			return lowerFirst(t.Name())
		},
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case reflect.TypeOf(time.Duration(0)):
				return ref("duration")
			case reflect.TypeOf(time.Time{}):
				return ref("date")
			case reflect.TypeOf(task.Approval{}):
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{ref("approvalMode"), ref("approvalBlock")}}
			case reflect.TypeOf(task.Agent{}):
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{ref("agentKind"), ref("agentBlock")}}
			case reflect.TypeOf(task.Score{}):
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string", Enum: []any{"pass_fraction"}}, ref("scoreFile")}}
			case reflect.TypeOf(task.Assertion{}):
				return ref("assertion")
			case reflect.TypeOf(task.Call{}):
				return ref("call")
			}
			return nil
		},
	}
}

// approvalBlock is task.Approval as a block: the Mapper writes task.Approval as "a mode
// or a block", so the block needs a type of its own to be reflected.
type approvalBlock task.Approval

// agentBlock is task.Agent as a block, for the same reason.
type agentBlock task.Agent

// scoreBlock is task.Score as a block, for the same reason.
type scoreBlock task.Score

// expand reflects v's type as a definition of its own, its nested types joining defs.
func expand(r *jsonschema.Reflector, defs jsonschema.Definitions, v any) *jsonschema.Schema {
	s := r.Reflect(v)
	for k, d := range s.Definitions {
		defs[k] = d
	}
	s.Definitions, s.Version, s.ID = nil, "", ""
	return s
}

func ref(name string) *jsonschema.Schema { return &jsonschema.Schema{Ref: "#/$defs/" + name} }

func kindDef(kind string) string { return "assert_" + kind }

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// assertionSchema is one assert: entry, a single-key mapping with a property per row of
// task.Kinds.
func assertionSchema() *jsonschema.Schema {
	s := &jsonschema.Schema{
		Type:                 "object",
		Description:          "One assertion: a single-key mapping whose key is the kind.",
		MinProperties:        ptr(uint64(1)),
		MaxProperties:        ptr(uint64(1)),
		AdditionalProperties: jsonschema.FalseSchema,
		Properties:           jsonschema.NewProperties(),
	}
	for _, k := range task.Kinds {
		var p *jsonschema.Schema
		var frag *jsonschema.Schema
		if k.Schema != "" {
			frag = &jsonschema.Schema{}
			if err := json.Unmarshal([]byte(k.Schema), frag); err != nil {
				panic(fmt.Sprintf("schemas: assertion kind %s: bad schema fragment: %v", k.Name, err)) // a registry row is wrong
			}
		}
		switch {
		case k.Spec != nil && frag != nil:
			p = &jsonschema.Schema{OneOf: []*jsonschema.Schema{frag, ref(kindDef(k.Name))}}
		case k.Spec != nil:
			p = ref(kindDef(k.Name))
		default:
			p = frag
		}
		p.Description = k.Doc
		s.Properties.Set(k.Name, p)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// sharedDefs are the definitions fields name with use=NAME, and the formats Go types
// cannot carry (durations, dates, calls).
func sharedDefs() map[string]*jsonschema.Schema {
	unit := `([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)`
	return map[string]*jsonschema.Schema{
		"duration": {Type: "string", Description: "A Go duration: a number and a unit (ns, us, ms, s, m, h), e.g. 90s, 5m, 1h30m.",
			Pattern: `^\s*` + unit + `(` + unit + `)*\s*$`},
		"date": {Type: "string", Description: "A date (YYYY-MM-DD, midnight UTC) or RFC 3339 time.",
			Pattern: `^\s*\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?\s*$`},
		"path": {Type: "string", MinLength: ptr(uint64(1)), Pattern: `^[^/\\]`,
			Description: "A path relative to the workspace root; absolute paths and .. are refused."},
		"regex": {Type: "string", MinLength: ptr(uint64(1)),
			Description: "A Go regular expression (RE2 syntax, https://pkg.go.dev/regexp/syntax)."},
		"toolName": {Type: "string", MinLength: ptr(uint64(1)),
			Description: "A tool name or alias, e.g. read_file. Unknown names are an error."},
		"action": {Type: "string", Enum: []any{"allow", "deny"}, Description: "allow or deny."},
		"files": {Type: "object", Description: "Inline files: path (relative, inside the workspace) -> content.",
			PropertyNames:        ref("path"),
			AdditionalProperties: &jsonschema.Schema{Extras: map[string]any{"type": []string{"string", "number"}}, Description: "The file's content."}},
		"copyDir": {Type: "string", MinLength: ptr(uint64(1)),
			Description: "A directory copied in, relative to the task file. It must exist."},
		"approvalMode": {Type: "string", Enum: names(task.ApprovalModes, func(m task.ApprovalMode) string { return m.Name }),
			Description: helps(task.ApprovalModes, func(m task.ApprovalMode) (string, string) { return m.Name, m.Help })},
		"agentKind": {Type: "string", Enum: names(kinds.Kinds, func(k kinds.Kind) string { return k.Name }),
			Description: helps(kinds.Kinds, func(k kinds.Kind) (string, string) { return k.Name, k.Help })},
		"call": {Type: "object", Description: "One tool call of the reference solution: a single-key mapping, tool name -> arguments.",
			MinProperties: ptr(uint64(1)), MaxProperties: ptr(uint64(1)),
			AdditionalProperties: &jsonschema.Schema{Extras: map[string]any{"type": []string{"object", "null"}},
				Description: "The call's arguments, as the model would send them."}},
	}
}

func names[T any](rows []T, name func(T) string) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = name(r)
	}
	return out
}

// helps joins a registry's help lines as "a: help. b: help." for a description.
func helps[T any](rows []T, line func(T) (string, string)) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		n, h := line(r)
		parts[i] = n + ": " + h + "."
	}
	return strings.Join(parts, " ")
}

// uses rewrites a field tagged use=NAME; it keeps the field's description.
func uses(s *jsonschema.Schema) {
	use, _ := s.Extras["use"].(string)
	if use == "" {
		return
	}
	delete(s.Extras, "use")
	if len(s.Extras) == 0 {
		s.Extras = nil
	}
	switch use {
	case "path", "regex", "toolName", "copyDir", "files", "action", "approvalMode", "agentKind":
		*s = jsonschema.Schema{Ref: "#/$defs/" + use, Description: s.Description}
	case "paths":
		s.Items = ref("path")
	case "toolNames":
		s.Items = ref("toolName")
	case "text":
		s.Type, s.Extras = "", map[string]any{"type": []string{"string", "number"}}
	case "texts":
		s.Items = &jsonschema.Schema{Extras: map[string]any{"type": []string{"string", "number"}}}
	case "date":
		*s = jsonschema.Schema{Ref: "#/$defs/date", Description: s.Description}
	case "env":
		s.PropertyNames = &jsonschema.Schema{Pattern: `^[A-Za-z_][A-Za-z0-9_]*$`}
		s.AdditionalProperties = &jsonschema.Schema{Extras: map[string]any{"type": []string{"string", "number", "boolean"}}}
	case "protect":
		// Absolute globs name paths inside a task's container (environment:); the loader
		// refuses them without one.
		s.Items = &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1)), Not: &jsonschema.Schema{Pattern: `\\|(^|/)\.\.?(/|$)`}}
	case "parameters":
		s.Properties = jsonschema.NewProperties()
		s.Properties.Set("type", &jsonschema.Schema{Const: "object", Description: "Always object."})
		s.Required = []string{"type"}
		s.AdditionalProperties = nil
	case "sandbox":
		s.Enum = names(sandbox.Modes, func(m sandbox.Mode) string { return m.Name })
		s.Description += " " + helps(sandbox.Modes, func(m sandbox.Mode) (string, string) { return m.Name, m.Help })
	case "parser":
		s.Enum = names(textcall.Parsers, func(p textcall.Parser) string { return p.Name })
		s.Description += " " + helps(textcall.Parsers, func(p textcall.Parser) (string, string) { return p.Name, p.Help })
	case "risk":
		s.Enum = []any{string(tools.RiskReadOnly), string(tools.RiskSafeWrite), string(tools.RiskDangerous)}
	default:
		panic("schemas: unknown use=" + use) // a tag in runner/task names no definition
	}
}

// walk calls fn on s and every schema inside it.
func walk(s *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	fn(s)
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			walk(p.Value, fn)
		}
	}
	walk(s.Items, fn)
	walk(s.AdditionalProperties, fn)
	walk(s.Not, fn)
	for _, l := range [][]*jsonschema.Schema{s.OneOf, s.AnyOf, s.AllOf} {
		for _, x := range l {
			walk(x, fn)
		}
	}
}

// bounds are the numeric limits of the types the task file shares with the output
// formats (model.Options in transcript start events, tools.Limits): their jsonschema tag
// belongs to the output schemas' library (google/jsonschema-go), which reads it as a
// description, so the limits are kept here. Each entry is {minimum, maximum}; "" is none.
var bounds = map[string]map[string][2]string{
	"modelOptions": {"temperature": {"0", ""}, "num_ctx": {"0", ""}, "max_tokens": {"0", ""}, "top_p": {"0", "1"}},
	"limits": {"cpu_seconds": {"0", "3153600000"}, "memory_mb": {"0", "1099511627776"},
		"file_size_mb": {"0", "1099511627776"}, "processes": {"0", "4194304"}},
}

func setBounds(defs jsonschema.Definitions) {
	for def, props := range bounds {
		for name, b := range props {
			p, ok := defs[def].Properties.Get(name)
			if !ok {
				panic("schemas: bounds name " + def + "." + name + ", which the type does not have")
			}
			p.Minimum, p.Maximum = json.Number(b[0]), json.Number(b[1])
		}
	}
}
