package model

import "testing"

func TestRequestStep(t *testing.T) {
	req := &Request{Messages: []Message{{Role: RoleSystem}, {Role: RoleUser}}}
	if got := req.Step(); got != 1 {
		t.Fatalf("first request: step %d, want 1", got)
	}
	req.Messages = append(req.Messages, Message{Role: RoleAssistant}, Message{Role: RoleTool},
		Message{Role: RoleAssistant}, Message{Role: RoleUser})
	if got := req.Step(); got != 3 {
		t.Fatalf("after two answers: step %d, want 3", got)
	}
}
