package tests

import (
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
)

// helloTask is a one-file task: the scripted model writes hello.txt and completes.
const helloTask = `name: hello
prompt: Write hello.txt containing hello, then call task_complete.
tools: [write_file, read_file]
max_steps: 6
assert:
  - completed: true
  - file_contains: {path: hello.txt, text: hello}
`

// writeHello and complete are the replies that solve helloTask.
var (
	writeHello = fakellm.ToolCall("write_file", map[string]any{"path": "hello.txt", "content": "hello\n"})
	complete   = fakellm.ToolCall("task_complete", map[string]any{"summary": "wrote hello.txt"})
)

// TestProviderFaults runs helloTask against every provider, streamed and not, with a
// fault in front of the solution. Passing faults cost a retry; the rest are told to the
// model (bad arguments, unknown tools) or end the scenario as an error (a malformed body).
func TestProviderFaults(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, sr scenarioRun, srv *fakellm.Server)
	tests := []struct {
		name    string
		replies []fakellm.Reply
		code    int
		status  result.Status
		check   check
	}{
		{
			name:    "500 then success",
			replies: []fakellm.Reply{fakellm.Status(500, "model is overloaded"), writeHello, complete},
			code:    0, status: result.Passed,
			check: func(t *testing.T, sr scenarioRun, srv *fakellm.Server) { assertRetried(t, sr, srv, 1) },
		},
		{
			name:    "429 with Retry-After",
			replies: []fakellm.Reply{fakellm.TooMany("1"), writeHello, complete},
			code:    0, status: result.Passed,
			check: func(t *testing.T, sr scenarioRun, srv *fakellm.Server) {
				assertRetried(t, sr, srv, 1)
				// Retry-After: 1 is honoured even though the first backoff is shorter.
				assert.Assert(t, sr.Took >= 950*time.Millisecond, "took %s, want >= 1s (Retry-After: 1)", sr.Took)
			},
		},
		{
			name:    "dropped connection then success",
			replies: []fakellm.Reply{fakellm.Drop(), writeHello, complete},
			code:    0, status: result.Passed,
			check: func(t *testing.T, sr scenarioRun, srv *fakellm.Server) { assertRetried(t, sr, srv, 1) },
		},
		{
			name:    "malformed body",
			replies: []fakellm.Reply{fakellm.Malformed(), writeHello, complete},
			code:    3, status: result.Errored,
			check: func(t *testing.T, sr scenarioRun, srv *fakellm.Server) {
				// A body that does not parse will not heal: no retry.
				assert.Equal(t, srv.Served(), 1)
				assert.Equal(t, sr.Result.Stop, result.StopError)
				// The reason names the provider, where it was, and what was wrong: the
				// body itself (Ollama) or the decoder's complaint (go-openai).
				provider := srv.Requests()[0].API
				said := map[string]string{"ollama": "<html>not json</html>", "openai": "invalid character '<'"}[provider]
				for _, want := range []string{provider + " at ", srv.URL(), said} {
					assert.Assert(t, is.Contains(sr.Result.Reason, want))
				}
				assert.Assert(t, len(eventsOf(sr.Events, "model_error")) == 1)
			},
		},
		{
			name: "malformed tool arguments",
			replies: []fakellm.Reply{
				fakellm.MalformedArgs("write_file", `{"path": "hello.txt", "content": `), writeHello, complete,
			},
			code: 0, status: result.Passed,
			check: func(t *testing.T, sr scenarioRun, srv *fakellm.Server) {
				calls := toolCalls(t, sr.Events)
				assert.Assert(t, len(calls) == 3, "tool calls: %+v", calls)
				assertToolError(t, calls[0], tools.CodeInvalidArgument)
				assertToldModel(t, srv, calls[0].ID, "Error:")
			},
		},
		{
			name:    "unknown tool",
			replies: []fakellm.Reply{fakellm.ToolCall("teleport", map[string]any{"to": "mars"}), writeHello, complete},
			code:    0, status: result.Passed,
			check: func(t *testing.T, sr scenarioRun, srv *fakellm.Server) {
				calls := toolCalls(t, sr.Events)
				assert.Assert(t, len(calls) == 3, "tool calls: %+v", calls)
				assertToolError(t, calls[0], tools.CodeInvalidArgument)
				// The model learns which tools exist.
				assertToldModel(t, srv, calls[0].ID, "write_file")
			},
		},
	}
	for _, tc := range tests {
		for _, p := range providers {
			t.Run(tc.name+"/"+p.String(), func(t *testing.T) {
				t.Parallel()
				srv := fakellm.Start(fakellm.Script{Replies: tc.replies})
				defer srv.Close()
				sr := runScenario(t, p, srv, writeTask(t, "hello", helloTask), "hello")
				assert.Equal(t, sr.Code, tc.code, "stdout:\n%s\nstderr:\n%s", sr.Stdout, sr.Stderr)
				assert.Equal(t, sr.Result.Status, tc.status, "reason: %s", sr.Result.Reason)
				for _, r := range srv.Requests() {
					assert.Equal(t, r.Stream, p.Stream, "the request's stream flag follows --stream")
					assert.Equal(t, r.Model, "fake-model")
				}
				if tc.status == result.Passed {
					assert.Equal(t, sr.Result.Stop, result.StopCompleted)
					assert.Equal(t, sr.Result.Summary, "wrote hello.txt")
					assertToolCallIDs(t, srv)
				}
				assertEnded(t, sr)
				tc.check(t, sr, srv)
			})
		}
	}
}

// assertRetried checks that the fake answered the first step's request retries+1 times
// with the same conversation, i.e. the runner retried instead of failing the step.
func assertRetried(t *testing.T, sr scenarioRun, srv *fakellm.Server, retries int) {
	t.Helper()
	reqs := srv.Requests()
	assert.Equal(t, len(reqs), retries+2, "requests: the first step (retried), then the completing step")
	for i := 0; i <= retries; i++ {
		assert.Equal(t, len(reqs[i].Messages), 2, "request %d is the first step again", i)
	}
	// Retries are not model errors: the step succeeded in the end.
	assert.Equal(t, len(eventsOf(sr.Events, "model_error")), 0)
	assert.Equal(t, sr.Result.Steps, 2)
	// The transcript says why the step took longer: one retry event per retried attempt.
	assert.Equal(t, len(eventsOf(sr.Events, "retry")), retries)
}

// assertToolError checks that a call reached the model as a failed result with code.
func assertToolError(t *testing.T, c transcript.ToolCall, code tools.ErrorCode) {
	t.Helper()
	assert.Assert(t, !c.Result.Success, "call %s succeeded: %+v", c.ID, c.Result)
	assert.Assert(t, c.Result.Error != nil, "call %s has no error: %+v", c.ID, c.Result)
	assert.Equal(t, c.Result.Error.Code, string(code), "message: %s", c.Result.Error.Message)
}

// assertToldModel checks that the fake received the result of call id, containing text.
func assertToldModel(t *testing.T, srv *fakellm.Server, id, text string) {
	t.Helper()
	got, ok := toolResults(srv)[id]
	assert.Assert(t, ok, "no tool result for %s reached the model; results: %v", id, toolResults(srv))
	assert.Assert(t, is.Contains(got, text))
}

// assertToolCallIDs checks, in every request the fake received, that each assistant tool
// call is answered by the next tool messages, in order, under its own id and tool name.
func assertToolCallIDs(t *testing.T, srv *fakellm.Server) {
	t.Helper()
	for ri, r := range srv.Requests() {
		msgs := r.Messages
		for i, m := range msgs {
			if m.Role != model.RoleAssistant {
				continue
			}
			for j, tc := range m.ToolCalls {
				k := i + 1 + j
				where := fmt.Sprintf("request %d, message %d (answer to %s)", ri, k, tc.ID)
				assert.Assert(t, k < len(msgs), "%s: missing", where)
				assert.Equal(t, msgs[k].Role, model.RoleTool, where)
				assert.Assert(t, tc.ID != "", "%s: the call has no id", where)
				assert.Equal(t, msgs[k].ToolCallID, tc.ID, where)
				if r.API == "ollama" {
					assert.Equal(t, msgs[k].ToolName, tc.Name, where)
				}
			}
		}
	}
}

// assertEnded checks that the transcript starts with start and ends with an end event
// that agrees with result.json.
func assertEnded(t *testing.T, sr scenarioRun) {
	t.Helper()
	assert.Assert(t, len(sr.Events) >= 2)
	assert.Equal(t, sr.Events[0].Type, "start")
	last := sr.Events[len(sr.Events)-1]
	assert.Equal(t, last.Type, "end")
	assert.Assert(t, is.Contains(string(last.Data), fmt.Sprintf(`"status":"%s"`, sr.Result.Status)))
	assert.Assert(t, is.Contains(string(last.Data), fmt.Sprintf(`"stop_reason":"%s"`, sr.Result.Stop)))
}
