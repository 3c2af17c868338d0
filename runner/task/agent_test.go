package task

import (
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestAgentKey(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       Agent
	}{
		{"absent", "", Agent{}},
		{"a kind", "agent: runner\n", Agent{Kind: "runner"}},
		{"a command", "agent: {command: ./agent.sh --fast}\n", Agent{Kind: "command", Command: "./agent.sh --fast"}},
		{"kind and command", "agent:\n  kind: command\n  command: sh run.sh\n", Agent{Kind: "command", Command: "sh run.sh"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Load(writeTask(t, "t.yaml", "prompt: go\n"+c.yaml), testOptions())
			assert.NilError(t, err)
			got.Agent.Dir = ""
			assert.DeepEqual(t, got.Agent, c.want)
		})
	}
}

func TestAgentKeyErrorsArePositioned(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"typo", "agent: comand\n", `t.yaml:2:8: agent: invalid value "comand"; did you mean "command"?`},
		{"command without its line", "agent: command\n", "t.yaml:2:8: agent: the command agent needs its command line"},
		{"empty command", "agent: {command: \"\"}\n", "t.yaml:2:18: agent.command:"},
		{"command of another kind", "agent: {kind: runner, command: x}\n", "t.yaml:2:32: agent.command: only the command agent takes a command, not runner"},
		{"a list", "agent: [runner]\n", "t.yaml:2:8: agent: expected an agent"},
		{"unknown key", "agent: {comand: x}\n", `t.yaml:2:9: agent.comand: unknown field`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(writeTask(t, "t.yaml", "prompt: go\n"+c.yaml), testOptions())
			assert.ErrorContains(t, err, c.want)
		})
	}
}

// An external agent runs in the task's container as elsewhere: no load error.
func TestExternalAgentInAContainerLoads(t *testing.T) {
	got, err := Load(writeTask(t, "t.yaml", "prompt: go\nagent: {command: x}\nenvironment: {image: alpine}\n"), testOptions())
	assert.NilError(t, err)
	assert.Equal(t, got.Agent.Kind, "command")
	assert.Equal(t, got.Environment.Image, "alpine")
}

// An external agent's tools are its own: tool_called names them as the endpoint sees
// them; the built-in loop's names are still checked.
func TestToolCalledNamesAnExternalAgentsTools(t *testing.T) {
	got, err := Load(writeTask(t, "t.yaml", "prompt: go\nassert:\n  - tool_called: Bash\nagent: {command: x}\n"), testOptions())
	assert.NilError(t, err)
	assert.Equal(t, got.Assert[0].Spec.(ToolCalled).Name, "Bash")
	_, err = Load(writeTask(t, "t.yaml", "prompt: go\nassert:\n  - tool_called: Bash\n"), testOptions())
	assert.Assert(t, is.ErrorContains(err, `unknown tool "Bash"`))
}

// The agent sees of the task file's directory only what its command names through
// $TASK_DIR and what files: lists, never the task file itself.
func TestAgentFilesBesideTheTaskFile(t *testing.T) {
	p := writeTask(t, "t.yaml", "prompt: go\nagent: {command: sh $TASK_DIR/agent.sh --x, files: [lib]}\n", "agent.sh", "echo", "lib", "x")
	got, err := Load(p, testOptions())
	assert.NilError(t, err)
	dir := filepath.Dir(p)
	assert.DeepEqual(t, got.Agent.Files, []string{filepath.Join(dir, "agent.sh"), filepath.Join(dir, "lib")})
	assert.Equal(t, got.Agent.Dir, dir)

	_, err = Load(writeTask(t, "t.yaml", "prompt: go\nagent: {command: cat $TASK_DIR/t.yaml}\n"), testOptions())
	assert.ErrorContains(t, err, "t.yaml is or holds the task file itself")
}

// The loop's tools and policy do not bind an external agent: the loader says so.
func TestLoopOnlyKeysWarnWithAnExternalAgent(t *testing.T) {
	got, err := Load(writeTask(t, "t.yaml", "prompt: go\nagent: {command: x}\ntools: [read_file]\napproval: read-only\n"), testOptions())
	assert.NilError(t, err)
	assert.Assert(t, is.Len(got.Warnings, 2))
	assert.Assert(t, is.Contains(got.Warnings[0], "t.yaml:3:1: tools: applies to runner's own loop only: the command agent brings its own tools"))
	got, err = Load(writeTask(t, "t.yaml", "prompt: go\ntools: [read_file]\n"), testOptions())
	assert.NilError(t, err)
	assert.Assert(t, is.Len(got.Warnings, 0))
}
