package openairesponses

import (
	"context"
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/tools"
)

// A free-form tool (an external agent's custom tool, Codex's apply_patch) reaches the
// Responses API as a custom tool with its grammar, not as a function; the model's
// custom_tool_call comes back as a call whose one argument is the text, and the call and
// its result go back in the next request as custom_tool_call and custom_tool_call_output,
// streamed or not.
func TestFreeformToolsAreCustomTools(t *testing.T) {
	const patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
	ff := &tools.Freeform{Syntax: "lark", Definition: "start: /[\\s\\S]+/"}
	specs := []tools.Spec{
		{Name: "apply_patch", Description: "Edit files.", Parameters: tools.FreeformParameters(ff), Freeform: ff},
		{Name: "exec_command", Description: "Run.", Parameters: tools.Object(map[string]*tools.Schema{"cmd": tools.String("")}, "cmd")},
	}
	for _, stream := range []bool{false, true} {
		srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
			fakellm.ToolCall("apply_patch", map[string]any{"input": patch}),
			fakellm.Text("done"),
		}})
		m, err := New(Config{Model: "gpt-5.5", BaseURL: srv.OpenAIURL(), Stream: stream})
		assert.NilError(t, err)
		req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "patch it"}}, Tools: specs}
		resp, err := m.Step(context.Background(), req)
		assert.NilError(t, err)
		assert.Assert(t, is.Len(resp.ToolCalls, 1))
		c := resp.ToolCalls[0]
		assert.Equal(t, c.Name, "apply_patch")
		var args map[string]string
		assert.NilError(t, json.Unmarshal(c.Arguments, &args))
		assert.DeepEqual(t, args, map[string]string{"input": patch})

		req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{c}},
			model.Message{Role: model.RoleTool, ToolCallID: c.ID, Content: "Success. A a.txt"})
		resp, err = m.Step(context.Background(), req)
		assert.NilError(t, err)
		assert.Equal(t, resp.Content, "done")

		reqs := srv.Requests()
		assert.Assert(t, is.Len(reqs, 2))
		var first struct {
			Tools []map[string]any `json:"tools"`
		}
		assert.NilError(t, json.Unmarshal(reqs[0].Body, &first))
		assert.Equal(t, first.Tools[0]["type"], "custom", "stream=%v", stream)
		assert.DeepEqual(t, first.Tools[0]["format"], map[string]any{"type": "grammar", "syntax": "lark", "definition": "start: /[\\s\\S]+/"})
		assert.Equal(t, first.Tools[1]["type"], "function")
		var second struct {
			Input []map[string]any `json:"input"`
		}
		assert.NilError(t, json.Unmarshal(reqs[1].Body, &second))
		assert.Assert(t, is.Len(second.Input, 3))
		assert.DeepEqual(t, second.Input[1], map[string]any{"type": "custom_tool_call", "call_id": c.ID, "name": "apply_patch", "input": patch})
		assert.DeepEqual(t, second.Input[2], map[string]any{"type": "custom_tool_call_output", "call_id": c.ID, "output": "Success. A a.txt"})
		srv.Close()
	}
}
