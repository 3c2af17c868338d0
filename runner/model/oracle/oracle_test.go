package oracle_test

import (
	"context"
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/oracle"
)

func TestOraclePlaysOneCallPerStep(t *testing.T) {
	ref := []model.ToolCall{
		{Name: "replace_string_in_file", Arguments: json.RawMessage(`{"path":"main.go","old_string":"Old","new_string":"New"}`)},
		{ID: "ignored", Name: "task_complete", Arguments: json.RawMessage(`{"summary":"Renamed"}`)},
		{Name: "list_dir"}, // no arguments at all
	}
	m := oracle.New(ref)
	assert.Equal(t, m.Name(), "oracle")
	ref[0].Name = "changed" // New copied the calls

	req := &model.Request{Messages: []model.Message{{Role: model.RoleSystem}, {Role: model.RoleUser, Content: "go"}}}
	want := []model.ToolCall{
		{ID: "oracle_1", Name: "replace_string_in_file", Arguments: json.RawMessage(`{"path":"main.go","old_string":"Old","new_string":"New"}`)},
		{ID: "oracle_2", Name: "task_complete", Arguments: json.RawMessage(`{"summary":"Renamed"}`)},
		{ID: "oracle_3", Name: "list_dir", Arguments: json.RawMessage(`{}`)},
	}
	for _, w := range want {
		resp, err := m.Step(context.Background(), req)
		assert.NilError(t, err)
		assert.DeepEqual(t, resp.ToolCalls, []model.ToolCall{w})
		// The same request (a retry) gets the same call: the step comes from the request.
		again, _ := m.Step(context.Background(), req)
		assert.DeepEqual(t, again.ToolCalls, resp.ToolCalls)
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, ToolCalls: resp.ToolCalls},
			model.Message{Role: model.RoleTool, ToolCallID: w.ID, Content: "ok"})
	}
	resp, err := m.Step(context.Background(), req)
	assert.NilError(t, err)
	assert.Equal(t, len(resp.ToolCalls), 0)
	assert.Equal(t, resp.Content, oracle.FinalText)
}

// TestOracleWithoutReferenceSaysSo: on a task with no reference (an imported task whose
// source has no solution) the oracle says so, rather than answering text that the run
// would report as the task's assertions failing.
func TestOracleWithoutReferenceSaysSo(t *testing.T) {
	_, err := oracle.New(nil).Step(context.Background(), &model.Request{})
	assert.ErrorIs(t, err, oracle.ErrNoReference)
}

func TestOracleHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := oracle.New(nil).Step(ctx, &model.Request{})
	assert.ErrorIs(t, err, context.Canceled)
}
