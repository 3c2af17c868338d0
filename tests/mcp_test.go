package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
)

var mcpServer struct {
	once sync.Once
	bin  string
	err  error
}

// mcpServerBin builds the test MCP server (tools/mcp/testdata/server) once.
func mcpServerBin(t *testing.T) string {
	t.Helper()
	mcpServer.once.Do(func() {
		dir, err := os.MkdirTemp("", "runner-e2e-mcp-")
		if err != nil {
			mcpServer.err = err
			return
		}
		mcpServer.bin = filepath.Join(dir, "server")
		build := exec.Command("go", "build", "-o", mcpServer.bin, "../tools/mcp/testdata/server")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // static: it runs in a container's image too
		out, err := build.CombinedOutput()
		if err != nil {
			mcpServer.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	assert.NilError(t, mcpServer.err)
	return mcpServer.bin
}

// mcpTaskDir is a task directory holding the server binary and its data file, as a user
// would keep them next to the task file.
func mcpTaskDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(mcpServerBin(t))
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "server"), b, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "data.txt"), []byte("forecast: sunny"), 0o644))
	return dir
}

const mcpTask = `name: mcp
prompt: Use the server.
tools: [srv__*, read_file]
mcp:
  - name: srv
    command: ./server
    args: [--data, data.txt]
    env: {GREETING: hello}
approval:
  mode: rules
  default: allow
  rules:
    - {tool: srv__env, action: deny, reason: no peeking}
max_steps: 10
assert:
  - completed: true
  - tool_called: {name: srv__echo, args_match: '"text":"hi"'}
  - file_equals: {path: note.txt, content: noted}
`

// TestMCPEndToEnd: a scripted model calls an MCP server's tools through the built binary,
// under bwrap where it works. The server starts from the task's directory (relative paths;
// under /tmp, which bwrap hides but for the read-only bind), works in the workspace, its
// errors and the policy's denials reach the model, and nothing it started survives the
// run: under bwrap not even a process in a session of its own.
func TestMCPEndToEnd(t *testing.T) {
	t.Parallel()
	sandboxMode, detach := "none", false
	if exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "true").Run() == nil {
		sandboxMode, detach = "bwrap", true
	}
	dir := mcpTaskDir(t)
	path := filepath.Join(dir, "mcp.yaml")
	assert.NilError(t, os.WriteFile(path, []byte(mcpTask), 0o644))
	token := fmt.Sprintf("runner-e2e-mcp-survivor-%d", time.Now().UnixNano())
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
		fakellm.ToolCall("srv__echo", map[string]any{"text": "hi"}),
		fakellm.ToolCall("srv__read_data", map[string]any{}),
		fakellm.ToolCall("srv__write_note", map[string]any{"path": "note.txt", "text": "noted"}),
		fakellm.ToolCall("srv__spawn", map[string]any{"token": token, "detach": detach}),
		fakellm.ToolCall("srv__fail", map[string]any{}),
		fakellm.ToolCall("srv__env", map[string]any{"name": "GREETING"}),
		fakellm.ToolCall("task_complete", map[string]any{"summary": "done"}),
	}})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	args, env := provider{"openai", false}.args(srv)
	args = append(append([]string{"run", "--sandbox", sandboxMode, "--out", out}, args...), path)
	o := runner(t, run{Args: args, Env: env})
	res := readResult(t, filepath.Join(out, "mcp", "result.json"))
	assert.Equal(t, res.Sandbox, sandboxMode)
	assert.Equal(t, o.Code, 0, res.Reason)
	assert.Equal(t, res.Status, result.Passed)

	reqs := srv.Requests()
	assert.DeepEqual(t, reqs[0].Tools, []string{"read_file", "task_complete", "srv__echo", "srv__env", "srv__fail", "srv__read_data", "srv__spawn", "srv__write_note"})
	events := readTranscript(t, filepath.Join(out, "mcp", "transcript.jsonl"))
	mcpEvents := eventsOf(events, "mcp")
	assert.Equal(t, len(mcpEvents), 2) // started, stopped
	assert.Check(t, is.Contains(string(mcpEvents[0].Data), `"server":"srv"`))
	calls := toolCalls(t, events)
	assert.Equal(t, len(calls), 7)
	assert.Equal(t, calls[0].Result.Output, "echo: hi")
	assert.Equal(t, calls[1].Result.Output, "forecast: sunny", "the data file next to the task is readable")
	assertToolError(t, calls[4], tools.CodeExecutionError)
	assertToldModel(t, srv, calls[4].ID, "the backend said no")
	assertToolError(t, calls[5], tools.CodeDenied)
	assertToldModel(t, srv, calls[5].ID, "no peeking")
	assertToolCallIDs(t, srv)

	// The run is over: nothing the server started may still run.
	assert.Check(t, is.Contains(calls[3].Result.Output, "spawned"))
	deadline := time.Now().Add(3 * time.Second)
	for len(processesWith(token)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived the run: %v", processesWith(token))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMCPServerFailsToStart: the scenario errors (exit 3), naming the server and its
// stderr, and the transcript is complete.
func TestMCPServerFailsToStart(t *testing.T) {
	t.Parallel()
	dir := mcpTaskDir(t)
	path := filepath.Join(dir, "broken.yaml")
	assert.NilError(t, os.WriteFile(path, []byte(`name: broken
prompt: p
mcp:
  - {name: db, command: ./server, args: [--fail-start]}
reference:
  - task_complete: {summary: never}
`), 0o644))
	out := filepath.Join(t.TempDir(), "out")
	o := runner(t, run{Args: []string{"run", "--out", out, path}})
	assert.Equal(t, o.Code, 3)
	res := readResult(t, filepath.Join(out, "broken", "result.json"))
	assert.Equal(t, res.Status, result.Errored)
	assert.Check(t, is.Contains(res.Reason, "mcp server db:"))
	assert.Check(t, is.Contains(res.Reason, "cannot open the database: no such file"))
	assert.Check(t, is.Contains(o.Stdout, "cannot open the database"))
	events := readTranscript(t, filepath.Join(out, "broken", "transcript.jsonl"))
	assert.Equal(t, events[len(events)-1].Type, "end")
	var end map[string]any
	assert.NilError(t, json.Unmarshal(events[len(events)-1].Data, &end))
	assert.Equal(t, end["status"], string(result.Errored))
}

// processesWith lists the live processes whose command line contains token.
func processesWith(token string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), token) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if s := string(stat); strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}

// TestMCPUnknownToolInTools: tools: naming a tool the server does not have is a scenario
// error that lists the tools it does have.
func TestMCPUnknownToolInTools(t *testing.T) {
	t.Parallel()
	dir := mcpTaskDir(t)
	path := filepath.Join(dir, "typo.yaml")
	assert.NilError(t, os.WriteFile(path, []byte(`name: typo
prompt: p
tools: [srv__ecko]
mcp: [{name: srv, command: ./server}]
reference:
  - task_complete: {summary: never}
`), 0o644))
	out := filepath.Join(t.TempDir(), "out")
	o := runner(t, run{Args: []string{"run", "--sandbox", "none", "--out", out, path}})
	assert.Equal(t, o.Code, 3)
	res := readResult(t, filepath.Join(out, "typo", "result.json"))
	assert.Check(t, is.Contains(res.Reason, `mcp server srv has no tool "ecko" (it has: srv__echo, srv__env`))
}
