package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
)

// Results of one turn's calls go back together in one user turn, followed by a reminder
// in the same turn; empty text is never sent; string arguments are sent as objects.
func TestParamsMapping(t *testing.T) {
	m, err := New(Config{Model: "claude-x", APIKey: "k"})
	assert.NilError(t, err)
	p, err := m.request(&model.Request{Messages: []model.Message{
		{Role: model.RoleSystem, Content: "sys"},
		{Role: model.RoleUser, Content: "go"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "t1", Name: "read_file", Arguments: json.RawMessage(`"{\"path\":\"a\"}"`)},
			{ID: "t2", Name: "list_dir", Arguments: json.RawMessage(`not json`)},
		}},
		{Role: model.RoleTool, ToolCallID: "t1", Content: "A"},
		{Role: model.RoleTool, ToolCallID: "t2", Content: ""},
		{Role: model.RoleAssistant},
		{Role: model.RoleUser, Content: "call a tool"},
	}})
	assert.NilError(t, err)
	b, err := json.Marshal(p)
	assert.NilError(t, err)
	body := string(b)
	assert.Equal(t, len(p.Messages), 5, body)
	assert.Equal(t, len(p.Messages[2].Content), 2, body)
	assert.Assert(t, strings.Contains(body, `"system":[{"type":"text","text":"sys"}]`), body)
	assert.Assert(t, strings.Contains(body, `"input":{"path":"a"}`), body)
	assert.Assert(t, strings.Contains(body, `"name":"list_dir","input":{}`), body)
	assert.Assert(t, strings.Contains(body, `"tool_use_id":"t2"`), body)
	assert.Assert(t, !strings.Contains(body, `"text":""`), body)
	assert.Equal(t, p.MaxTokens, int64(DefaultMaxTokens))
	assert.Assert(t, !strings.Contains(body, `"tools"`), body)
}
