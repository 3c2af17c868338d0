package task

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/model/textcall"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	assert.NilError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	assert.NilError(t, c.AddResource(SchemaURL, doc))
	s, err := c.Compile(SchemaURL)
	assert.NilError(t, err)
	return s
}

// yamlInstance decodes a task file the way an editor's YAML language server sees it.
func yamlInstance(t *testing.T, file string) any {
	t.Helper()
	data, err := os.ReadFile(file)
	assert.NilError(t, err)
	var v any
	assert.NilError(t, yaml.Unmarshal(data, &v))
	js, err := json.Marshal(v)
	assert.NilError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	assert.NilError(t, err)
	return inst
}

func TestSchemaAcceptsValidTasks(t *testing.T) {
	s := compileSchema(t)
	files, err := filepath.Glob("testdata/valid/*.y*ml")
	assert.NilError(t, err)
	assert.Assert(t, len(files) >= 3)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := Load(f, testOptions())
			assert.NilError(t, err, "the loader must accept it too")
			assert.NilError(t, s.Validate(yamlInstance(t, f)))
		})
	}
}

func TestSchemaRejectsInvalidTasks(t *testing.T) {
	s := compileSchema(t)
	tests := []struct{ file, want string }{
		{"unknown_top_key", "'max_step'"},
		{"unknown_nested_key", "at '/assert/2/file_contains': additional properties 'regex' not allowed"},
		{"wrong_type", "at '/max_steps': got string, want integer"},
		{"unknown_kind", "at '/assert/1': additional properties 'llm_judge' not allowed"},
		{"missing_prompt", "missing property 'prompt'"},
		{"bad_duration", "at '/timeout': '5 minutes' does not match pattern"},
		{"indentation", "at '/assert/0': maxProperties: got 3, want 1"},
		{"bad_approval", "at '/approval/rules/1': missing property 'action'"},
		{"bad_protect", "at '/verify/protect/2': 'not' failed"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			err := s.Validate(yamlInstance(t, filepath.Join("testdata/bad", tc.file+".yaml")))
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestSchemaReturnsACopy(t *testing.T) {
	a := Schema()
	a[0] = 'x'
	assert.Equal(t, Schema()[0], byte('{'))
}

// schemaDoc is the schema as plain maps, for the drift tests below.
func schemaDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	assert.NilError(t, json.Unmarshal(Schema(), &doc))
	return doc
}

func propKeys(m any) []string {
	var out []string
	for k := range m.(map[string]any) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return out
}

func def(doc map[string]any, name string) map[string]any {
	return doc["$defs"].(map[string]any)[name].(map[string]any)
}

// TestSchemaMatchesLoader keeps the schema and the loader's field tables in step. Both
// come from the Go types (keysOf, runner/schemas.Task); this catches a generator that
// drops or renames a key, or a committed schema that was not regenerated.
func TestSchemaMatchesLoader(t *testing.T) {
	doc := schemaDoc(t)
	props := func(m map[string]any) []string { return propKeys(m["properties"]) }
	assert.DeepEqual(t, props(doc), sorted(taskFields))
	assert.DeepEqual(t, props(def(doc, "modelOptions")), sorted(modelOptionFields))
	assert.DeepEqual(t, props(def(doc, "approvalBlock")), sorted(approvalFields))
	assert.DeepEqual(t, props(def(doc, "agentBlock")), sorted(agentFields))
	assert.DeepEqual(t, props(def(doc, "rule")), sorted(ruleFields))
	assert.DeepEqual(t, props(def(doc, "commandRule")), sorted(commandRuleFields))
	assert.DeepEqual(t, props(def(doc, "limits")), sorted(limitFields))
	assert.DeepEqual(t, props(def(doc, "workspace")), sorted(workspaceFields))
	assert.DeepEqual(t, props(def(doc, "verify")), sorted(verifyFields))
	assert.DeepEqual(t, props(def(doc, "toolDef")), sorted(toolDefFields))
	assert.DeepEqual(t, props(def(doc, "mcpServer")), sorted(mcpFields))

	enum := func(m map[string]any) []string {
		var out []string
		for _, v := range m["enum"].([]any) {
			out = append(out, v.(string))
		}
		return sorted(out)
	}
	assert.DeepEqual(t, enum(def(doc, "approvalMode")), sorted(approvalModes))
	assert.DeepEqual(t, enum(def(doc, "agentKind")), sorted(kinds.Names()))
	assert.DeepEqual(t, enum(def(doc, "toolDef")["properties"].(map[string]any)["risk"].(map[string]any)), sorted(risks))
	assert.DeepEqual(t, enum(def(doc, "action")), sorted(actions))
	assert.DeepEqual(t, enum(doc["properties"].(map[string]any)["sandbox"].(map[string]any)), sorted(sandboxes))
	assert.DeepEqual(t, enum(doc["properties"].(map[string]any)["tool_call_parser"].(map[string]any)), sorted(textcall.Modes))

	assert.DeepEqual(t, props(def(doc, "assertion")), sorted(AssertionKinds))
	assert.DeepEqual(t, props(def(doc, "assert_"+KindFileContains)), sorted(fileContainsFields))
	assert.DeepEqual(t, props(def(doc, "assert_"+KindFileMatches)), sorted(fileMatchesFields))
	assert.DeepEqual(t, props(def(doc, "assert_"+KindFileEquals)), sorted(fileEqualsFields))
	assert.DeepEqual(t, props(def(doc, "assert_"+KindCommand)), sorted(commandFields))
	assert.DeepEqual(t, props(def(doc, "assert_"+KindJudge)), sorted(judgeFields))
	assert.DeepEqual(t, props(def(doc, "assert_"+KindToolCalled)), sorted(toolCalledFields))
	assert.DeepEqual(t, props(def(doc, "scoreFile")), sorted(scoreFields))
	assert.DeepEqual(t, props(def(doc, "environment")), sorted(environmentFields))
}

// TestSchemaDescribesEveryKey checks that editors have a description to show for every
// property, directly or through its $ref.
func TestSchemaDescribesEveryKey(t *testing.T) {
	doc := schemaDoc(t)
	var missing []string
	var walk func(node any, path string)
	walk = func(node any, path string) {
		switch v := node.(type) {
		case map[string]any:
			if p, ok := v["properties"].(map[string]any); ok {
				for name, sub := range p {
					s := sub.(map[string]any)
					if _, ok := s["description"]; ok {
						continue
					}
					ref, _ := s["$ref"].(string)
					target := def(doc, strings.TrimPrefix(ref, "#/$defs/"))
					if _, ok := target["description"]; !ok {
						missing = append(missing, path+"."+name)
					}
				}
			}
			for k, sub := range v {
				walk(sub, path+"/"+k)
			}
		case []any:
			for _, sub := range v {
				walk(sub, path)
			}
		}
	}
	walk(doc, "")
	assert.DeepEqual(t, missing, []string(nil))
}
