package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/agentrunner/runner/runner/model"
)

// The Responses API's wire shapes (POST /v1/responses), as documented: the request's
// input items and the response's output items.
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
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
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
		Input     *string         `json:"input,omitempty"` // a custom (free-form) tool's call: its text
		Output    json.RawMessage `json:"output,omitempty"`
	}
	responsesPart struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Annotations []any  `json:"annotations"`
	}
)

// partsText joins the text of a content or output field: a string or a list of parts.
func partsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []responsesPart
	_ = json.Unmarshal(raw, &parts)
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out
}

func (s *Server) openaiResponses(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		openaiError(w, http.StatusBadRequest, "fakellm: bad responses request: "+err.Error())
		return
	}
	rec := Request{API: "openai-responses", Body: raw, Model: req.Model, Stream: req.Stream, Options: map[string]any{}}
	if req.Temperature != nil {
		rec.Options["temperature"] = *req.Temperature
	}
	if req.TopP != nil {
		rec.Options["top_p"] = *req.TopP
	}
	if req.MaxOutputTokens != 0 {
		rec.Options["max_tokens"] = req.MaxOutputTokens
	}
	if req.Instructions != "" {
		rec.Messages = append(rec.Messages, model.Message{Role: model.RoleSystem, Content: req.Instructions})
	}
	var items []responsesItem
	if json.Unmarshal(req.Input, &items) != nil {
		items = []responsesItem{{Role: "user", Content: req.Input}}
	}
	for _, it := range items {
		switch {
		case it.Type == "custom_tool_call" && it.Input != nil:
			it.Type, it.Arguments = "function_call", customArgs(*it.Input)
			fallthrough
		case it.Type == "function_call":
			// Calls of one turn follow its text, if any, as one assistant message.
			n := len(rec.Messages)
			if n == 0 || rec.Messages[n-1].Role != model.RoleAssistant {
				rec.Messages = append(rec.Messages, model.Message{Role: model.RoleAssistant})
				n++
			}
			rec.Messages[n-1].ToolCalls = append(rec.Messages[n-1].ToolCalls, model.ToolCall{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(strconv.Quote(it.Arguments))})
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			rec.Messages = append(rec.Messages, model.Message{Role: model.RoleTool, ToolCallID: it.CallID, Content: partsText(it.Output)})
		case it.Role == "assistant":
			rec.Messages = append(rec.Messages, model.Message{Role: model.RoleAssistant, Content: partsText(it.Content)})
		case it.Role == "system" || it.Role == "developer":
			rec.Messages = append(rec.Messages, model.Message{Role: model.RoleSystem, Content: partsText(it.Content)})
		default:
			rec.Messages = append(rec.Messages, model.Message{Role: model.RoleUser, Content: partsText(it.Content)})
		}
	}
	rec.custom = map[string]bool{}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Name)
		rec.custom[t.Name] = t.Type == "custom"
	}
	reply, _ := s.next(&rec)
	wait(r, reply.Delay)
	play(w, reply, rec.Stream, func() body { return responsesBody(reply, rec) }, openaiError,
		"event: response.created\ndata: {\"type\": <html>not json</html>\n\n",
		`{"id":"resp_x","output":[<html>not json</html>`)
}

// responsesBody renders a reply as /v1/responses does: one response object, or events
// (response.created, text and argument deltas, each item done, response.completed).
func responsesBody(reply Reply, rec Request) body {
	u := usage(reply, len(rec.Messages))
	st := model.StepOf(rec.Messages)
	name := rec.Model
	if name == "" {
		name = "fake"
	}
	id := "resp_fake_" + strconv.Itoa(st)
	var output []responsesItem
	if reply.Text != "" {
		content, _ := json.Marshal([]responsesPart{{Type: "output_text", Text: reply.Text, Annotations: []any{}}})
		output = append(output, responsesItem{Type: "message", ID: "msg_" + strconv.Itoa(st), Role: "assistant", Status: "completed", Content: content})
	}
	for i, c := range reply.ToolCalls {
		if rec.custom[c.Name] { // a custom tool offered: its call carries text, the "input" argument
			input := customInput(c)
			output = append(output, responsesItem{Type: "custom_tool_call", ID: "ctc_" + strconv.Itoa(st) + "_" + strconv.Itoa(i+1),
				CallID: callID(c, st, i), Name: c.Name, Input: &input, Status: "completed"})
			continue
		}
		output = append(output, responsesItem{Type: "function_call", ID: "fc_" + strconv.Itoa(st) + "_" + strconv.Itoa(i+1),
			CallID: callID(c, st, i), Name: c.Name, Arguments: argsString(c), Status: "completed"})
	}
	response := func(status string, out []responsesItem) map[string]any {
		if out == nil {
			out = []responsesItem{}
		}
		return map[string]any{
			"id": id, "object": "response", "created_at": 1700000000, "status": status, "model": name, "output": out,
			"usage": map[string]any{"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens, "total_tokens": u.PromptTokens + u.CompletionTokens,
				"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}},
		}
	}
	if !rec.Stream {
		b, _ := json.Marshal(response("completed", output))
		return body{contentType: "application/json", chunks: [][]byte{b}}
	}
	b := body{contentType: "text/event-stream", stream: true}
	seq := 0
	event := func(typ string, data map[string]any) {
		data["type"], data["sequence_number"] = typ, seq
		seq++
		d, _ := json.Marshal(data)
		b.chunks = append(b.chunks, []byte("event: "+typ+"\ndata: "+string(d)+"\n\n"))
	}
	event("response.created", map[string]any{"response": response("in_progress", nil)})
	for i, it := range output {
		event("response.output_item.added", map[string]any{"output_index": i, "item": it})
		switch it.Type {
		case "message":
			for _, piece := range split(reply.Text) {
				event("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "delta": piece})
			}
		case "custom_tool_call":
			event("response.custom_tool_call_input.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": *it.Input})
			event("response.custom_tool_call_input.done", map[string]any{"item_id": it.ID, "output_index": i, "input": *it.Input})
		default:
			half := len(it.Arguments) / 2
			for _, frag := range []string{it.Arguments[:half], it.Arguments[half:]} {
				event("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": frag})
			}
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	event("response.completed", map[string]any{"response": response("completed", output)})
	return b
}

// customInput is the text of a scripted call to a custom tool: its "input" argument (a
// string), or its arguments as they are.
func customInput(c Call) string {
	var a map[string]json.RawMessage
	if json.Unmarshal([]byte(argsString(c)), &a) == nil {
		var s string
		if json.Unmarshal(a["input"], &s) == nil {
			return s
		}
	}
	return argsString(c)
}

// customArgs is a custom tool call's text as the arguments a script matches on:
// {"input": TEXT}, encoded as OpenAI's argument string.
func customArgs(input string) string {
	b, _ := json.Marshal(map[string]string{"input": input})
	return string(b)
}
