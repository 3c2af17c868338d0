package endpoint

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentrunner/runner/runner/model"
)

// OpenAI's chat completions wire shapes (POST /v1/chat/completions), as agents send them.
type (
	chatRequest struct {
		Model         string        `json:"model"`
		Messages      []chatMessage `json:"messages"`
		Tools         []chatTool    `json:"tools"`
		Stream        bool          `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Temperature         *float64 `json:"temperature"`
		TopP                *float64 `json:"top_p"`
		MaxTokens           int      `json:"max_tokens"`
		MaxCompletionTokens int      `json:"max_completion_tokens"`
		Seed                *int     `json:"seed"`
	}
	chatMessage struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"` // a string, parts or null
		ToolCalls  []chatToolCall  `json:"tool_calls,omitempty"`
		ToolCallID string          `json:"tool_call_id,omitempty"`
		Name       string          `json:"name,omitempty"`
	}
	chatToolCall struct {
		Index    *int   `json:"index,omitempty"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string          `json:"name,omitempty"`
			Arguments json.RawMessage `json:"arguments,omitempty"`
		} `json:"function"`
	}
	chatTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
)

// decodeChat turns a chat completions request into the neutral request.
func (s *Server) decodeChat(body []byte) (*inbound, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad chat completions request: %w", err)
	}
	in := &inbound{model: req.Model, stream: req.Stream, includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
	maxTokens := req.MaxCompletionTokens
	if maxTokens == 0 {
		maxTokens = req.MaxTokens
	}
	in.req.Options = s.options(req.Temperature, req.TopP, maxTokens, req.Seed)
	for _, m := range req.Messages {
		nm := model.Message{Role: m.Role, Content: textOf(m.Content), ToolCallID: m.ToolCallID}
		switch m.Role {
		case "developer":
			nm.Role = model.RoleSystem
		case "function":
			nm.Role = model.RoleTool
		}
		for _, tc := range m.ToolCalls {
			nm.ToolCalls = append(nm.ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: jsonArgs(tc.Function.Arguments)})
		}
		in.req.Messages = append(in.req.Messages, nm)
	}
	for _, t := range req.Tools {
		if t.Type != "" && t.Type != "function" {
			continue // a server-side tool: no call of it ever reaches the model through here
		}
		spec, err := toolSpec(t.Function.Name, t.Function.Description, t.Function.Parameters)
		if err != nil {
			return nil, err
		}
		in.req.Tools = append(in.req.Tools, spec)
	}
	return in, nil
}

// jsonArgs keeps arguments as raw JSON: a JSON string (OpenAI's form) or an object.
func jsonArgs(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`"{}"`)
	}
	return raw
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	in, resp, step, ok := s.answer(w, r, s.decodeChat)
	if !ok {
		return
	}
	name := s.modelName(in)
	id := "chatcmpl-runner-" + strconv.Itoa(step)
	finish := "stop"
	switch {
	case len(resp.ToolCalls) > 0:
		finish = "tool_calls"
	case resp.StopReason == model.StopLength:
		finish = "length"
	}
	usage := map[string]any{"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens,
		"total_tokens":          resp.Usage.PromptTokens + resp.Usage.CompletionTokens,
		"prompt_tokens_details": map[string]int{"cached_tokens": resp.Usage.CachedPromptTokens}}
	calls := make([]chatToolCall, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		idx := i
		calls[i].Index, calls[i].ID, calls[i].Type = &idx, c.ID, "function"
		calls[i].Function.Name = c.Name
		a, _ := json.Marshal(argsString(c.Arguments))
		calls[i].Function.Arguments = a
	}
	if !in.stream {
		msg := map[string]any{"role": "assistant", "content": nullable(resp.Content)}
		if len(calls) > 0 {
			for i := range calls {
				calls[i].Index = nil
			}
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": s.now().Unix(), "model": name,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   usage,
		})
		return
	}
	ev := startSSE(w)
	chunk := func(delta map[string]any, fin any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": s.now().Unix(), "model": name,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin, "logprobs": nil}}}
	}
	ev.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if resp.Content != "" {
		ev.event("", chunk(map[string]any{"content": resp.Content}, nil))
	}
	for i := range calls {
		ev.event("", chunk(map[string]any{"tool_calls": []chatToolCall{calls[i]}}, nil))
	}
	ev.event("", chunk(map[string]any{}, finish))
	if in.includeUsage {
		ev.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": s.now().Unix(), "model": name,
			"choices": []any{}, "usage": usage})
	}
	ev.event("", "[DONE]")
	ev.flush()
}

// nullable is content as OpenAI sends it: null when there is none.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
