package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools/exec/container"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// rewriter waits until the agent has finished, then writes the answer the task wants.
// %s is a token that marks its command line, to find it after the run.
const rewriter = `sleep 0.5; echo right > answer.txt; sleep 30; : %s`

// lifetimeTasks are three agents (the oracle playing reference:) that each start the
// rewriter in a session of its own, out of reach of the process group's kill, through
// one of the three ways a run starts processes (an MCP server, a task's tool, a command),
// then write the wrong answer and finish. Verification waits longer than the rewriter
// before it reads the answer: if the rewriter outlived the agent, the scenario passes.
var lifetimeTasks = map[string]string{
	"mcp": `name: mcp
prompt: Start the helper through the server.
tools: [srv__spawn, write_file]
mcp: [{name: srv, command: ./server}]
timeout: 1m
assert:
  - command: {run: "sleep 1.5"}
  - file_equals: {path: answer.txt, content: "right\n"}
reference:
  - srv__spawn: {token: %[1]s, detach: true, script: "sleep 0.5; echo right > answer.txt; sleep 30"}
  - write_file: {path: answer.txt, content: "wrong\n"}
  - task_complete: {summary: done}
`,
	"tool": `name: tool
prompt: Start the helper through the task's tool.
tools: [helper, write_file]
tools_defined:
  - name: helper
    command: "(setsid sh -c '%[2]s' &)"
timeout: 1m
assert:
  - command: {run: "sleep 1.5"}
  - file_equals: {path: answer.txt, content: "right\n"}
reference:
  - helper: {}
  - write_file: {path: answer.txt, content: "wrong\n"}
  - task_complete: {summary: done}
`,
	"command": `name: command
prompt: Start the helper from the shell.
tools: [run_in_terminal, write_file]
timeout: 1m
assert:
  - command: {run: "sleep 1.5"}
  - file_equals: {path: answer.txt, content: "right\n"}
reference:
  - run_in_terminal: {command: "(setsid sh -c '%[2]s' &)"}
  - write_file: {path: answer.txt, content: "wrong\n"}
  - task_complete: {summary: done}
`,
}

// Issue 24 E: under --sandbox none a child an MCP server started in a session of its own
// outlived the server and rewrote the answer after the agent, before verification. In
// every mode, nothing the run started (commands, task tools, MCP servers and what they
// start) may be left when verification begins: each scenario fails on its wrong answer,
// and no process of the rewriters is left after the run; in a task's container (podman or
// docker, where one works) the task's tool and the command do the same. The three run side by side, so
// the MCP server also lives through the other scenarios' commands ending (their sweep of
// orphans killed it before it was tracked: the scenario errored).
func TestNothingTheRunStartedOutlivesTheAgent(t *testing.T) {
	t.Parallel()
	modes := []string{"none", "landlock", "container"}
	if exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "true").Run() == nil {
		modes = append(modes, "bwrap")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := mcpTaskDir(t)
			args := []string{"run", "--sandbox", mode}
			environment := ""
			if mode == "container" {
				// The task's tool and commands run in the task's container (the test MCP
				// server is a host binary: not here).
				e := containertest.Engine(t)
				args = []string{"run", "--engine", e.Path, "--run-id", container.NewRunID()}
				environment = "environment:\n  dockerfile: " + containertest.DockerfilePath(t) + "\n"
			}
			tokens := map[string]string{}
			for name, body := range lifetimeTasks {
				if mode == "container" && name == "mcp" {
					continue
				}
				tokens[name] = fmt.Sprintf("runner-e2e-rewriter-%s-%s-%d", mode, name, time.Now().UnixNano())
				task := fmt.Sprintf(body, tokens[name], fmt.Sprintf(rewriter, tokens[name])) + environment
				assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(task), 0o644))
			}
			out := filepath.Join(t.TempDir(), "out")
			o := runner(t, run{Args: append(args, "--keep-workspaces", "--out", out, dir), Timeout: 4 * time.Minute})
			if mode == "landlock" && strings.Contains(o.Stderr, "does not support Landlock") {
				t.Skip("no Landlock here")
			}
			for name, token := range tokens {
				res := readResult(t, filepath.Join(out, name, "result.json"))
				assert.Check(t, is.Equal(res.Status, result.Failed), "%s: the rewrite happened: %s", name, res.Reason)
				if res.Workspace != "" {
					b, err := os.ReadFile(filepath.Join(res.Workspace, "answer.txt"))
					assert.Check(t, err)
					assert.Check(t, is.Equal(string(b), "wrong\n"), name)
					t.Cleanup(func() { _ = os.RemoveAll(res.Workspace) }) // test cleanup
				}
				assert.Check(t, is.Len(processesWith(token), 0), "%s: processes outlived the run", name)
			}
			assert.Check(t, is.Equal(o.Code, 1), o.Stderr)
		})
	}
}
