package task

import (
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestToolsDefinedDecode(t *testing.T) {
	tk, err := Load("testdata/valid/tools_defined.yaml", testOptions())
	assert.NilError(t, err)
	assert.DeepEqual(t, tk.Tools, []string{"read_file", "word_count", "shout", "task_complete"})
	assert.Equal(t, len(tk.ToolsDefined), 2)
	wc := tk.ToolsDefined[0]
	assert.Equal(t, wc.Name, "word_count")
	assert.Equal(t, wc.Command, `wc -w < "$TOOL_ARG_PATH"`)
	assert.Equal(t, wc.Risk, "read_only")
	assert.Equal(t, wc.Timeout, 10*time.Second)
	assert.Equal(t, wc.Pos.Line, 12)
	assert.DeepEqual(t, wc.Parameters["required"], []any{"path"})

	spec, err := wc.Spec()
	assert.NilError(t, err)
	assert.Equal(t, string(spec.Risk), "read_only")
	shout, err := tk.ToolsDefined[1].Spec()
	assert.NilError(t, err)
	assert.Equal(t, string(shout.Risk), "dangerous")
	assert.Equal(t, tk.Reference[0].Tool, "word_count")
}

// A defined tool's reference arguments are checked against its own schema.
func TestToolsDefinedReferenceArgs(t *testing.T) {
	_, err := Parse("t.yaml", []byte(`prompt: p
tools_defined:
  - {name: wc, command: wc, parameters: {type: object, properties: {path: {type: string}}, required: [path]}}
reference:
  - wc: {pth: a}
`), testOptions())
	assert.ErrorContains(t, err, "t.yaml:5:5: reference[0].wc: INVALID_ARGUMENT: wc has no parameter pth (parameters: path)")
}

func TestMCPDecode(t *testing.T) {
	tk, err := Load("testdata/valid/mcp.yaml", testOptions())
	assert.NilError(t, err)
	dir, _ := filepath.Abs("testdata/valid")
	assert.Equal(t, len(tk.MCP), 2)
	w := tk.MCP[0]
	assert.Equal(t, w.Name, "weather")
	assert.Equal(t, w.Dir, dir)
	// The command and an argument that exist next to the task file are made absolute;
	// flags and names of nothing there are left alone.
	assert.DeepEqual(t, w.Argv, []string{filepath.Join(dir, "mcp/server.sh"), "--data", filepath.Join(dir, "mcp/server.sh"), "--verbose", "missing.json"})
	assert.DeepEqual(t, w.Env, map[string]string{"UNITS": "metric"})
	assert.Equal(t, w.Timeout, 20*time.Second)
	assert.DeepEqual(t, tk.MCP[1].Argv, []string{"npx", "-y", "@example/docs-server"})
	assert.DeepEqual(t, tk.Tools, []string{"read_file", "weather__forecast", "docs__*", "task_complete"})
	assert.Assert(t, tk.MCPTool("weather__forecast") && tk.MCPTool("docs__*"))
	assert.Assert(t, !tk.MCPTool("read_file") && !tk.MCPTool("other__x") && !tk.MCPTool("weather__"))
}
