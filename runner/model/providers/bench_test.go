package providers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/tools"
)

// benchRequest is a mid-run step: 12 tools offered, 40 messages of conversation.
func benchRequest() *model.Request {
	req := &model.Request{Messages: []model.Message{
		{Role: model.RoleSystem, Content: strings.Repeat("You are a careful agent. ", 40)},
		{Role: model.RoleUser, Content: "Rename OldName to NewName everywhere."},
	}}
	for i := range 12 {
		req.Tools = append(req.Tools, tools.Spec{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: strings.Repeat("Does a thing. ", 10),
			Parameters: tools.Object(map[string]*tools.Schema{
				"path":  tools.String("A path."),
				"lines": tools.Integer("How many."),
				"all":   tools.Boolean("Everything."),
			}, "path"),
		})
	}
	for i := range 19 {
		id := fmt.Sprintf("call_%d_1", i+1)
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "tool_1", Arguments: []byte(`{"path":"main.go"}`)}}},
			model.Message{Role: model.RoleTool, ToolCallID: id, ToolName: "tool_1", Content: strings.Repeat("package main\n", 30)})
	}
	return req
}

// BenchmarkStep measures one step through Open's wrapped provider against the
// zero-latency fake: the runner's own cost per model call, HTTP included.
func BenchmarkStep(b *testing.B) {
	srv := fakellm.Start(fakellm.Script{Bench: true, Repeat: true, Replies: []fakellm.Reply{
		fakellm.ToolCall("tool_1", map[string]any{"path": "main.go"}),
	}})
	defer srv.Close()
	for _, spec := range []string{"ollama:m", "openai:m"} {
		for _, stream := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/stream=%v", strings.Split(spec, ":")[0], stream), func(b *testing.B) {
				m, err := providers.Open(spec, providers.OpenOptions{Stream: stream, Getenv: env(map[string]string{
					"OLLAMA_HOST": srv.URL(), "OPENAI_BASE_URL": srv.OpenAIURL(),
				})})
				if err != nil {
					b.Fatal(err)
				}
				req := benchRequest()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.Step(context.Background(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
