package endpoint

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentrunner/runner/runner/model"
)

// The Responses API's wire shapes (POST /v1/responses), as agents send them.
type (
	responsesRequest struct {
		Model           string          `json:"model"`
		Instructions    string          `json:"instructions"`
		Input           json.RawMessage `json:"input"` // a string or a list of items
		Stream          bool            `json:"stream"`
		Temperature     *float64        `json:"temperature"`
		TopP            *float64        `json:"top_p"`
		MaxOutputTokens int             `json:"max_output_tokens"`
		Tools           []struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"tools"`
		PreviousResponseID string `json:"previous_response_id"`
	}
	responsesItem struct {
		Type      string          `json:"type,omitempty"`
		ID        string          `json:"id,omitempty"`
		Role      string          `json:"role,omitempty"`
		Status    string          `json:"status,omitempty"`
		Content   json.RawMessage `json:"content,omitempty"` // a string or a list of parts
		CallID    string          `json:"call_id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments string          `json:"arguments,omitempty"`
		Output    json.RawMessage `json:"output,omitempty"`
	}
)

// decodeResponses turns a Responses request into the neutral request: instructions the
// system message, function calls of one turn one assistant message, their outputs tool
// messages. Reasoning items are left out.
func (s *Server) decodeResponses(body []byte) (*inbound, error) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad responses request: %w", err)
	}
	if req.PreviousResponseID != "" {
		return nil, &unsupported{"previous_response_id is not supported by runner's endpoint (it stores no responses): send the whole input (store: false)"}
	}
	in := &inbound{model: req.Model, stream: req.Stream}
	in.req.Options = s.options(req.Temperature, req.TopP, req.MaxOutputTokens, nil)
	if req.Instructions != "" {
		in.req.Messages = append(in.req.Messages, model.Message{Role: model.RoleSystem, Content: req.Instructions})
	}
	var items []responsesItem
	if json.Unmarshal(req.Input, &items) != nil {
		items = []responsesItem{{Role: "user", Content: req.Input}}
	}
	msgs := &in.req.Messages
	for _, it := range items {
		switch {
		case it.Type == "function_call":
			n := len(*msgs)
			if n == 0 || (*msgs)[n-1].Role != model.RoleAssistant {
				*msgs = append(*msgs, model.Message{Role: model.RoleAssistant})
				n++
			}
			args, _ := json.Marshal(it.Arguments)
			(*msgs)[n-1].ToolCalls = append((*msgs)[n-1].ToolCalls, model.ToolCall{ID: it.CallID, Name: it.Name, Arguments: args})
		case it.Type == "function_call_output":
			*msgs = append(*msgs, model.Message{Role: model.RoleTool, ToolCallID: it.CallID, Content: textOf(it.Output)})
		case it.Type == "reasoning":
		case it.Role == "assistant":
			*msgs = append(*msgs, model.Message{Role: model.RoleAssistant, Content: textOf(it.Content)})
		case it.Role == "system" || it.Role == "developer":
			*msgs = append(*msgs, model.Message{Role: model.RoleSystem, Content: textOf(it.Content)})
		case it.Role == "user" || it.Type == "message":
			*msgs = append(*msgs, model.Message{Role: model.RoleUser, Content: textOf(it.Content)})
		}
	}
	for _, t := range req.Tools {
		if t.Type != "function" {
			continue // a built-in tool (web_search): not the model's to call through here
		}
		spec, err := toolSpec(t.Name, t.Description, t.Parameters)
		if err != nil {
			return nil, err
		}
		in.req.Tools = append(in.req.Tools, spec)
	}
	return in, nil
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	in, ok := s.decoded(w, r, s.decodeResponses)
	if !ok {
		return
	}
	resp, step, err := s.exchange(r.Context(), in)
	if err != nil {
		failed(w, r, err)
		return
	}
	name := in.model
	if name == "" {
		name = s.cfg.Model.Name()
	}
	st := strconv.Itoa(step)
	id := "resp_runner_" + st
	type part struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Annotations []any  `json:"annotations"`
	}
	var output []responsesItem
	if resp.Content != "" {
		content, _ := json.Marshal([]part{{Type: "output_text", Text: resp.Content, Annotations: []any{}}})
		output = append(output, responsesItem{Type: "message", ID: "msg_runner_" + st, Role: "assistant", Status: "completed", Content: content})
	}
	for i, c := range resp.ToolCalls {
		output = append(output, responsesItem{Type: "function_call", ID: "fc_runner_" + st + "_" + strconv.Itoa(i+1),
			CallID: c.ID, Name: c.Name, Arguments: argsString(c.Arguments), Status: "completed"})
	}
	status, incomplete := "completed", any(nil)
	if resp.StopReason == model.StopLength && len(resp.ToolCalls) == 0 {
		status, incomplete = "incomplete", map[string]string{"reason": "max_output_tokens"}
	}
	response := func(status string, out []responsesItem) map[string]any {
		if out == nil {
			out = []responsesItem{}
		}
		return map[string]any{
			"id": id, "object": "response", "created_at": s.now().Unix(), "status": status, "model": name, "output": out,
			"incomplete_details": incomplete, "error": nil,
			"usage": map[string]any{"input_tokens": resp.Usage.PromptTokens, "output_tokens": resp.Usage.CompletionTokens,
				"total_tokens":          resp.Usage.PromptTokens + resp.Usage.CompletionTokens,
				"input_tokens_details":  map[string]int{"cached_tokens": resp.Usage.CachedPromptTokens},
				"output_tokens_details": map[string]int{"reasoning_tokens": 0}},
		}
	}
	if !in.stream {
		writeJSON(w, http.StatusOK, response(status, output))
		return
	}
	ev := startSSE(w)
	seq := 0
	event := func(typ string, data map[string]any) {
		data["type"], data["sequence_number"] = typ, seq
		seq++
		ev.event(typ, data)
	}
	event("response.created", map[string]any{"response": response("in_progress", nil)})
	event("response.in_progress", map[string]any{"response": response("in_progress", nil)})
	for i, it := range output {
		added := it
		if it.Type == "message" {
			added.Content, added.Status = json.RawMessage("[]"), "in_progress"
		} else {
			added.Arguments, added.Status = "", "in_progress"
		}
		event("response.output_item.added", map[string]any{"output_index": i, "item": added})
		if it.Type == "message" {
			emptyPart := part{Type: "output_text", Annotations: []any{}}
			event("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "part": emptyPart})
			event("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "delta": resp.Content})
			event("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "text": resp.Content})
			event("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0,
				"part": part{Type: "output_text", Text: resp.Content, Annotations: []any{}}})
		} else {
			event("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": it.Arguments})
			event("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i, "arguments": it.Arguments})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	final := "response.completed"
	if status == "incomplete" {
		final = "response.incomplete"
	}
	event(final, map[string]any{"response": response(status, output)})
	ev.flush()
}
