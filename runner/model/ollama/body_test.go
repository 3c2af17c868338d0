package ollama

import (
	"encoding/json"
	"testing"

	"github.com/ollama/ollama/api"
	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
)

// TestBodyIsWhatTheWholeRequestEncodesTo: the spliced body, step after step, is byte for
// byte json.Marshal of the api.ChatRequest holding the whole conversation.
func TestBodyIsWhatTheWholeRequestEncodesTo(t *testing.T) {
	m, err := New(Config{Model: "qwen3:4b", KeepAlive: 60e9})
	assert.NilError(t, err)
	temp := 0.2
	req := &model.Request{
		Messages: []model.Message{{Role: model.RoleSystem, Content: "<sys> & \u2028"}, {Role: model.RoleUser, Content: "go"}},
		Tools:    []tools.Spec{{Name: "read_file", Description: "Read.", Parameters: tools.Object(map[string]*tools.Schema{"path": tools.String("P.")}, "path")}},
		Options:  model.Options{Temperature: &temp, NumCtx: 4096},
	}
	args := []string{`{"path":"a.go","n":1.50}`, `"{\"path\":\"b.go\"}"`, `"not an object"`, `{bad`, ``}
	for step, a := range args {
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, Content: "thinking", ToolCalls: []model.ToolCall{{ID: "c", Name: "read_file", Arguments: json.RawMessage(a)}}},
			model.Message{Role: model.RoleTool, ToolCallID: "c", ToolName: "read_file", Content: "result <&>"})
		got, err := m.body(req)
		assert.NilError(t, err)
		chat, err := m.chatRequest(req)
		assert.NilError(t, err)
		chat.Messages = make([]api.Message, len(req.Messages))
		for i := range req.Messages {
			chat.Messages[i] = message(&req.Messages[i])
		}
		want, err := json.Marshal(chat)
		assert.NilError(t, err)
		assert.Equal(t, string(got), string(want), "step %d", step+1)
	}
}
