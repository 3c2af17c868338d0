package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools/exec/container"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// An MCP server in the task's container (its image holds it) lives through the agent's
// commands: the scripted model calls the server, runs a command that leaves a background
// job, and calls the server again, which answers. Before, each command's reaper (kill -9
// -1 in the container) ended the server with the command's leftovers, and the second call
// was told the server was gone.
func TestMCPServerInAContainerOutlivesTheAgentsCommands(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	dir := t.TempDir()
	linkOrCopy(t, mcpServerBin(t), filepath.Join(dir, "env", "server"))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "env", "Dockerfile"),
		[]byte("FROM "+containertest.BaseImage+"\nCOPY server /usr/local/bin/server\n"), 0o644))
	task := `name: mcpbox
prompt: Use the server.
environment: {dockerfile: env/Dockerfile}
tools: [srv__*, run_command]
mcp: [{name: srv, command: /usr/local/bin/server}]
max_steps: 6
assert:
  - completed: true
  - file_exists: leftover-ran
`
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "mcpbox.yaml"), []byte(task), 0o644))
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
		fakellm.ToolCall("srv__echo", map[string]any{"text": "one"}),
		fakellm.ToolCall("run_command", map[string]any{"command": "touch leftover-ran; sleep 975 & echo started"}),
		fakellm.ToolCall("srv__echo", map[string]any{"text": "two"}),
		fakellm.ToolCall("task_complete", map[string]any{"summary": "done"}),
	}})
	defer srv.Close()
	out, runID := t.TempDir(), container.NewRunID()
	res := runner(t, run{Args: []string{"run", "--model", "openai:fake", "--engine", e.Path, "--run-id", runID, "--out", out, dir},
		Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=x"}, Timeout: 3 * time.Minute})
	assert.Equal(t, res.Code, 0, res.Stdout+res.Stderr)
	got := readResult(t, filepath.Join(out, "mcpbox", "result.json"))
	assert.Equal(t, got.Status, result.Passed, got.Reason)
	var echoes []string
	for _, ev := range readTranscript(t, filepath.Join(out, "mcpbox", "transcript.jsonl")) {
		if ev.Type != transcript.TypeToolCall {
			continue
		}
		var call struct {
			Name   string `json:"name"`
			Result struct {
				Success bool   `json:"success"`
				Output  string `json:"output"`
			} `json:"result"`
		}
		assert.NilError(t, json.Unmarshal(ev.Data, &call))
		if call.Name == "srv__echo" {
			assert.Check(t, call.Result.Success, call.Result.Output)
			echoes = append(echoes, call.Result.Output)
		}
	}
	assert.Check(t, is.DeepEqual(echoes, []string{"echo: one", "echo: two"}))
	assert.Check(t, is.Equal(leftovers(t, e, runID), ""))
}
