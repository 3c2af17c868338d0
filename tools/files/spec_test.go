package files_test

import (
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/files"
)

func TestToolsOrderAndRisk(t *testing.T) {
	want := []struct {
		name string
		risk tools.Risk
	}{
		{"read_file", tools.RiskReadOnly},
		{"write_file", tools.RiskSafeWrite},
		{"create_file", tools.RiskSafeWrite},
		{"replace_string_in_file", tools.RiskSafeWrite},
		{"delete_file", tools.RiskDangerous},
		{"move_file", tools.RiskSafeWrite},
		{"create_directory", tools.RiskSafeWrite},
		{"list_dir", tools.RiskReadOnly},
	}
	got := files.Tools()
	assert.Equal(t, len(got), len(want))
	for i, w := range want {
		spec := got[i].Spec()
		assert.Equal(t, spec.Name, w.name)
		assert.Equal(t, spec.Risk, w.risk, spec.Name)
	}
	reg := tools.NewRegistry()
	assert.NilError(t, registerAll(reg), "every schema compiles")
}

func registerAll(reg *tools.Registry) error {
	for _, tool := range files.Tools() {
		if err := reg.Register(tool); err != nil {
			return err
		}
	}
	return nil
}

// Models only see the schema: every property must say what it is, optional flags must
// state their default, and closed choices must list them.
func TestSchemasAreComplete(t *testing.T) {
	for _, tool := range files.Tools() {
		spec := tool.Spec()
		t.Run(spec.Name, func(t *testing.T) {
			assert.Assert(t, len(spec.Description) > 80, "a model-oriented description")
			assert.Equal(t, spec.Parameters.Type, "object")
			required := map[string]bool{}
			for _, r := range spec.Parameters.Required {
				required[r] = true
				assert.Assert(t, spec.Parameters.Properties[r] != nil, "required %q is a property", r)
			}
			for name, p := range spec.Parameters.Properties {
				assert.Assert(t, p.Type != "", "%s has a type", name)
				assert.Assert(t, len(p.Description) > 10, "%s has a description", name)
				if p.Type == "boolean" {
					assert.Assert(t, p.Default != nil, "%s states its default", name)
				}
				if name == "encoding" {
					assert.DeepEqual(t, p.Enum, []any{"utf-8", "base64"})
					assert.Equal(t, p.Default, "utf-8")
				}
				if p.Default != nil {
					assert.Assert(t, !required[name], "%s has a default, so it is optional", name)
				}
			}
			// The schema is plain JSON Schema.
			b, err := json.Marshal(spec.Parameters)
			assert.NilError(t, err)
			var m map[string]any
			assert.NilError(t, json.Unmarshal(b, &m))
			assert.Equal(t, m["type"], "object")
		})
	}
}
