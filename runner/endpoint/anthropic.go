package endpoint

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentrunner/runner/runner/model"
)

// Anthropic's Messages wire shapes (POST /v1/messages), as agents send them.
type (
	messagesRequest struct {
		Model       string            `json:"model"`
		MaxTokens   int               `json:"max_tokens"`
		Stream      bool              `json:"stream"`
		System      json.RawMessage   `json:"system"` // a string or text blocks
		Messages    []messagesMessage `json:"messages"`
		Tools       []messagesTool    `json:"tools"`
		Temperature *float64          `json:"temperature"`
		TopP        *float64          `json:"top_p"`
	}
	messagesMessage struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or blocks
	}
	messagesBlock struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   json.RawMessage `json:"content,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
	}
	messagesTool struct {
		Type        string          `json:"type,omitempty"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
)

// contentBlocks reads a content field: a plain string is one text block.
func contentBlocks(raw json.RawMessage) []messagesBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []messagesBlock{{Type: "text", Text: s}}
	}
	var out []messagesBlock
	_ = json.Unmarshal(raw, &out)
	return out
}

// decodeMessages turns a Messages request into the neutral request: a user turn's tool
// results become tool messages (in order, before its text), an assistant turn's text and
// tool_use blocks one assistant message; thinking and images are left out (named, for
// images).
func (s *Server) decodeMessages(body []byte) (*inbound, error) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad messages request: %w", err)
	}
	in := &inbound{model: req.Model, stream: req.Stream, failed: map[string]bool{}}
	in.req.Options = s.options(req.Temperature, req.TopP, req.MaxTokens, nil)
	if sys := textOf(req.System); sys != "" {
		in.req.Messages = append(in.req.Messages, model.Message{Role: model.RoleSystem, Content: sys})
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			nm := model.Message{Role: model.RoleAssistant}
			for _, b := range contentBlocks(m.Content) {
				switch b.Type {
				case "text":
					nm.Content = joinText(nm.Content, b.Text)
				case "tool_use":
					nm.ToolCalls = append(nm.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
				}
			}
			in.req.Messages = append(in.req.Messages, nm)
			continue
		}
		text := ""
		for _, b := range contentBlocks(m.Content) {
			switch b.Type {
			case "tool_result":
				in.req.Messages = append(in.req.Messages, model.Message{Role: model.RoleTool, ToolCallID: b.ToolUseID, Content: textOf(b.Content)})
				if b.IsError {
					in.failed[b.ToolUseID] = true
				}
			case "text":
				text = joinText(text, b.Text)
			case "image", "document":
				text = joinText(text, "["+b.Type+"]")
			}
		}
		if text != "" {
			in.req.Messages = append(in.req.Messages, model.Message{Role: model.RoleUser, Content: text})
		}
	}
	for _, t := range req.Tools {
		if len(t.InputSchema) == 0 {
			continue // a server tool (web search): the model is not offered it through here
		}
		spec, err := toolSpec(t.Name, t.Description, t.InputSchema)
		if err != nil {
			return nil, err
		}
		in.req.Tools = append(in.req.Tools, spec)
	}
	return in, nil
}

// joinText joins a turn's text blocks as paragraphs: Claude Code sends its reminders
// and the prompt as blocks of one user turn.
func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	in, resp, step, ok := s.answer(w, r, s.decodeMessages)
	if !ok {
		return
	}
	name := s.modelName(in)
	stop := "end_turn"
	switch {
	case len(resp.ToolCalls) > 0:
		stop = "tool_use"
	case resp.StopReason == model.StopLength:
		stop = "max_tokens"
	}
	content := []messagesBlock{}
	if resp.Content != "" {
		content = append(content, messagesBlock{Type: "text", Text: resp.Content})
	}
	for _, c := range resp.ToolCalls {
		content = append(content, messagesBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: argsObject(c.Arguments)})
	}
	usage := map[string]any{"input_tokens": resp.Usage.PromptTokens - resp.Usage.CachedPromptTokens, "output_tokens": resp.Usage.CompletionTokens,
		"cache_read_input_tokens": resp.Usage.CachedPromptTokens, "cache_creation_input_tokens": 0}
	msg := map[string]any{"id": "msg_runner_" + strconv.Itoa(step), "type": "message", "role": "assistant", "model": name,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !in.stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	ev := startSSE(w)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 0,
		"cache_read_input_tokens": usage["cache_read_input_tokens"], "cache_creation_input_tokens": 0}
	ev.event("message_start", map[string]any{"type": "message_start", "message": start})
	for i, b := range content {
		if b.Type == "text" {
			ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b.Text}})
		} else {
			ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)}})
		}
		ev.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	ev.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": resp.Usage.CompletionTokens}})
	ev.event("message_stop", map[string]any{"type": "message_stop"})
	ev.flush()
}
