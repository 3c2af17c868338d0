package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
)

// archiveTask forbids deleting; MODE and ASSERT are filled in per case.
const archiveTask = `name: archive
prompt: Remove old.ini; if you may not delete it, move it to archive/old.ini.
tools: [delete_file, move_file, list_dir]
approval:
  mode: MODE
  default: allow
  rules:
    - {tool: delete_file, action: deny, reason: nothing is deleted in this repository}
max_steps: 6
workspace:
  files: {old.ini: "[server]\nport = 80\n"}
assert:
  - completed: true
ASSERT`

// TestDeniedCallEndToEnd: a scripted model tries a call the policy denies, is told so,
// and completes another way. Nobody is asked (stdin is closed, and ask mode without a
// terminal decides by the rules), the transcript records the denial, and the exit code
// follows the assertions.
func TestDeniedCallEndToEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mode   string
		assert string
		code   int
		status result.Status
	}{
		{"rules, assertions allow one denial", "rules",
			"  - file_exists: archive/old.ini\n  - tool_not_called: delete_file\n  - denied_at_most: 1\n", 0, result.Passed},
		{"ask without a terminal, assertions allow one denial", "ask",
			"  - file_absent: old.ini\n  - denied_at_most: 1\n", 0, result.Passed},
		{"rules, assertions allow no denial", "rules",
			"  - file_exists: archive/old.ini\n  - denied_at_most: 0\n", 1, result.Failed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
				fakellm.ToolCall("delete_file", map[string]any{"path": "old.ini"}),
				fakellm.ToolCall("move_file", map[string]any{"from": "old.ini", "to": "archive/old.ini"}),
				fakellm.ToolCall("task_complete", map[string]any{"summary": "moved old.ini to archive/"}),
			}})
			defer srv.Close()
			body := strings.NewReplacer("MODE", tc.mode, "ASSERT", tc.assert).Replace(archiveTask)
			path := writeTask(t, "archive", body)
			out := filepath.Join(t.TempDir(), "out")
			args, env := provider{"openai", false}.args(srv)
			args = append(append([]string{"run", "--sandbox", "none", "--out", out}, args...), path)
			// A runner that waited for an answer would hit this deadline and fail the test.
			o := runner(t, run{Args: args, Env: env, Timeout: 15 * time.Second})
			assert.Equal(t, o.Code, tc.code)
			res := readResult(t, filepath.Join(out, "archive", "result.json"))
			assert.Equal(t, res.Status, tc.status, "reason: %s", res.Reason)
			assert.Equal(t, res.Stop, result.StopCompleted)
			assert.Equal(t, res.Denied, 1)
			assert.Equal(t, res.ToolCalls, 2, "the denied call was not executed")
			if tc.status == result.Failed {
				assert.Assert(t, is.Contains(res.Reason, "denied_at_most"))
			}

			events := readTranscript(t, filepath.Join(out, "archive", "transcript.jsonl"))
			var decisions []decisionEvent
			for _, e := range eventsOf(events, "decision") {
				var d decisionEvent
				assert.NilError(t, json.Unmarshal(e.Data, &d))
				decisions = append(decisions, d)
			}
			assert.Equal(t, len(decisions), 3)
			denied := decisions[0]
			assert.Equal(t, denied.Tool, "delete_file")
			assert.Equal(t, denied.Decision.Allowed, false)
			assert.Assert(t, is.Contains(denied.Decision.By, "rules[0]"))
			assert.Assert(t, is.Contains(denied.Decision.Rule, "delete_file"))
			assert.Equal(t, denied.Decision.Reason, "nothing is deleted in this repository")
			assert.Assert(t, decisions[1].Decision.Allowed && decisions[2].Decision.Allowed)

			calls := toolCalls(t, events)
			assertToolError(t, calls[0], tools.CodeDenied)
			// The model was told, under the call's id, why and what to do instead.
			assertToldModel(t, srv, calls[0].ID, "nothing is deleted in this repository")
			assertToolCallIDs(t, srv)
		})
	}
}

// decisionEvent is a decision event's payload.
type decisionEvent struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Decision struct {
		Allowed bool   `json:"allowed"`
		By      string `json:"by"`
		Rule    string `json:"rule"`
		Reason  string `json:"reason"`
	} `json:"decision"`
}

// TestDefaultSandbox runs a command with the task's default sandbox (auto): bwrap or
// Landlock where the machine allows, otherwise unsandboxed with a warning. Either way the
// command runs in the workspace, and the choice is reported on stderr and in the transcript.
func TestDefaultSandbox(t *testing.T) {
	t.Parallel()
	const task = `name: sandboxed
prompt: Write the current directory's name to where.txt.
tools: [run_in_terminal]
max_steps: 3
env: {GREETING: hello}
assert:
  - completed: true
  - file_contains: {path: where.txt, text: hello}
`
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
		fakellm.ToolCall("run_in_terminal", map[string]any{"command": "echo $GREETING > where.txt && pwd >> where.txt"}),
		fakellm.ToolCall("task_complete", map[string]any{"summary": "done"}),
	}})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	args, env := provider{"ollama", true}.args(srv)
	args = append(append([]string{"run", "--out", out}, args...), writeTask(t, "sandboxed", task))
	o := runner(t, run{Args: args, Env: env})
	assert.Equal(t, o.Code, 0)
	res := readResult(t, filepath.Join(out, "sandboxed", "result.json"))
	// The probe's choice is reported; without any sandbox, as a warning.
	if res.Sandbox != "" {
		assert.Assert(t, is.Regexp(`sandbox\b.*\b`+res.Sandbox+`\b`, o.Stderr))
	} else {
		assert.Assert(t, is.Contains(strings.ToLower(o.Stderr), "warning"))
	}
	events := readTranscript(t, filepath.Join(out, "sandboxed", "transcript.jsonl"))
	var start struct {
		Sandbox string `json:"sandbox"`
	}
	assert.NilError(t, json.Unmarshal(events[0].Data, &start))
	assert.Equal(t, start.Sandbox, res.Sandbox)
	t.Logf("sandbox: %q", res.Sandbox)
}
