package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
)

// definedToolsTask brings three tools: one that records its input, one that fails, one
// the rules deny. Only the first two and read_file are offered.
const definedToolsTask = `name: defined
prompt: Record a note.
tools: [record, broken, forbidden, read_file]
tools_defined:
  - name: record
    description: Record a note.
    parameters:
      type: object
      properties:
        note: {type: string, minLength: 1}
        count: {type: integer}
      required: [note]
    command: 'cat > stdin.json; printf "%s|%s" "$TOOL_ARG_NOTE" "$TOOL_ARG_COUNT" > env.txt; echo recorded'
  - name: broken
    command: 'echo "database is down" >&2; exit 3'
  - name: forbidden
    command: 'touch forbidden-ran'
  - name: unlisted
    command: 'touch unlisted-ran'
approval:
  mode: rules
  default: allow
  rules:
    - {tool: forbidden, action: deny, reason: not in this task}
max_steps: 8
assert:
  - completed: true
  - tool_called: {name: record, args_match: '"note":"hi"'}
  - file_equals: {path: stdin.json, content: '{"count":2,"note":"hi"}'}
  - file_equals: {path: env.txt, content: 'hi|2'}
  - file_absent: forbidden-ran
`

// TestDefinedToolsEndToEnd: a model calls task-defined tools through each provider's wire
// format; arguments arrive on stdin and in the environment, a failing command reaches the
// model as an error with its stderr, the policy denies as for built-in tools, and an
// unlisted tool is neither offered nor run.
func TestDefinedToolsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, p := range []provider{{"openai", false}, {"ollama", true}} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
				fakellm.ToolCall("record", map[string]any{"note": "hi", "count": "2"}),
				fakellm.ToolCall("record", map[string]any{"count": 1}),
				fakellm.ToolCall("broken", map[string]any{}),
				fakellm.ToolCall("forbidden", map[string]any{}),
				fakellm.ToolCall("unlisted", map[string]any{}),
				fakellm.ToolCall("task_complete", map[string]any{"summary": "recorded"}),
			}})
			defer srv.Close()
			path := writeTask(t, "defined", definedToolsTask)
			sr := runScenario(t, p, srv, path, "defined", "--keep-workspaces")
			assert.Equal(t, sr.Code, 0, sr.Result.Reason)
			assert.Equal(t, sr.Result.Status, result.Passed)

			reqs := srv.Requests()
			assert.Assert(t, len(reqs) > 0)
			assert.DeepEqual(t, reqs[0].Tools, []string{"read_file", "task_complete", "record", "broken", "forbidden"})

			calls := toolCalls(t, sr.Events)
			assert.Equal(t, len(calls), 6)
			assert.Equal(t, calls[0].Result.Output, "recorded\n")
			assertToolError(t, calls[1], tools.CodeInvalidArgument) // the schema holds
			assert.Check(t, is.Contains(calls[1].Result.Output, "'note' is required"))
			assertToolError(t, calls[2], tools.CodeExecutionError)
			assertToldModel(t, srv, calls[2].ID, "database is down")
			assertToldModel(t, srv, calls[2].ID, "broken exited with code 3")
			assertToolError(t, calls[3], tools.CodeDenied)
			assertToldModel(t, srv, calls[3].ID, "not in this task")
			assertToolError(t, calls[4], tools.CodeInvalidArgument)
			assertToolCallIDs(t, srv)

			var meta struct {
				Exit int `json:"exit_code"`
			}
			b, _ := json.Marshal(calls[2].Result.Metadata)
			assert.NilError(t, json.Unmarshal(b, &meta))
			assert.Equal(t, meta.Exit, 3)
			_, err := os.Stat(filepath.Join(sr.Result.Workspace, "unlisted-ran"))
			assert.Check(t, os.IsNotExist(err))
			_ = os.RemoveAll(sr.Result.Workspace) // test cleanup: its error does not change what the test checked
		})
	}
}
