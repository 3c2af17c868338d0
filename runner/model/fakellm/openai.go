package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentrunner/runner/runner/model"
)

func (s *Server) openaiChat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	rec := Request{API: "openai", Body: raw}
	includeUsage := false
	if s.script.Bench {
		var head struct {
			Stream        bool                    `json:"stream"`
			StreamOptions *goopenai.StreamOptions `json:"stream_options"`
		}
		_ = json.Unmarshal(raw, &head)
		rec.Stream = head.Stream
		includeUsage = head.StreamOptions != nil && head.StreamOptions.IncludeUsage
	} else {
		var req goopenai.ChatCompletionRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			openaiError(w, http.StatusBadRequest, "fakellm: bad chat request: "+err.Error())
			return
		}
		rec.Model, rec.Stream = req.Model, req.Stream
		includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		rec.Options = map[string]any{}
		if req.Temperature != 0 {
			rec.Options["temperature"] = req.Temperature
		}
		if req.TopP != 0 {
			rec.Options["top_p"] = req.TopP
		}
		if req.Seed != nil {
			rec.Options["seed"] = *req.Seed
		}
		//nolint:staticcheck // SA1019: the fake records max_tokens, the field runner sends to compatible servers.
		if req.MaxTokens != 0 {
			rec.Options["max_tokens"] = req.MaxTokens //nolint:staticcheck // as above
		}
		for _, m := range req.Messages {
			nm := model.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.Name}
			for _, tc := range m.ToolCalls {
				args, _ := json.Marshal(tc.Function.Arguments)
				nm.ToolCalls = append(nm.ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
			}
			rec.Messages = append(rec.Messages, nm)
		}
		for _, t := range req.Tools {
			if t.Function != nil {
				rec.Tools = append(rec.Tools, t.Function.Name)
			}
		}
	}
	reply, _ := s.next(&rec)
	wait(r, reply.Delay)
	play(w, reply, rec.Stream, func() body { return openaiBody(reply, rec, includeUsage) }, openaiError,
		"data: {\"id\": <html>not json</html>\n\n",
		`{"id":"chatcmpl-x","choices":[<html>not json</html>`)
}

func openaiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, goopenai.ErrorResponse{Error: &goopenai.APIError{
		Message: msg, Type: errorType(status), Code: status,
	}})
}

func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// openaiBody renders a reply as /v1/chat/completions does: one completion object, or
// server-sent events (role, content in pieces, each tool call as a header delta and
// argument fragments, the finish reason, usage when asked for, [DONE]).
func openaiBody(reply Reply, rec Request, includeUsage bool) body {
	c := newOpenAICompletion(reply, rec)
	if !rec.Stream {
		return c.whole()
	}
	return c.stream(includeUsage)
}

// openaiCompletion is what the body and each chunk of one answer repeat.
type openaiCompletion struct {
	reply  Reply
	id     string
	name   string
	step   int
	finish goopenai.FinishReason
	usage  goopenai.Usage
}

func newOpenAICompletion(reply Reply, rec Request) openaiCompletion {
	u := usage(reply, len(rec.Messages))
	st := model.StepOf(rec.Messages)
	c := openaiCompletion{reply: reply, id: "chatcmpl-fake-" + strconv.Itoa(st), name: rec.Model, step: st, finish: goopenai.FinishReasonStop,
		usage: goopenai.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}}
	if c.name == "" {
		c.name = "fake"
	}
	if len(reply.ToolCalls) > 0 {
		c.finish = goopenai.FinishReasonToolCalls
	}
	if u.CachedPromptTokens > 0 {
		c.usage.PromptTokensDetails = &goopenai.PromptTokensDetails{CachedTokens: u.CachedPromptTokens}
	}
	return c
}

// whole is the answer as one completion object.
func (c openaiCompletion) whole() body {
	msg := goopenai.ChatCompletionMessage{Role: "assistant", Content: c.reply.Text}
	for i, call := range c.reply.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, goopenai.ToolCall{
			ID: callID(call, c.step, i), Type: goopenai.ToolTypeFunction,
			Function: goopenai.FunctionCall{Name: call.Name, Arguments: argsString(call)},
		})
	}
	resp := goopenai.ChatCompletionResponse{
		ID: c.id, Object: "chat.completion", Created: 1700000000, Model: c.name,
		Choices: []goopenai.ChatCompletionChoice{{Index: 0, Message: msg, FinishReason: c.finish}},
		Usage:   c.usage,
	}
	b, _ := json.Marshal(resp)
	if c.reply.ArgsAs == "object" {
		b = objectArgs(b, c.reply, false)
	}
	return body{contentType: "application/json", chunks: [][]byte{b}}
}

// stream is the answer as server-sent events.
func (c openaiCompletion) stream(includeUsage bool) body {
	b := body{contentType: "text/event-stream", stream: true}
	c.event(&b, goopenai.ChatCompletionStreamChoiceDelta{Role: "assistant"}, "", -1)
	for _, piece := range split(c.reply.Text) {
		c.event(&b, goopenai.ChatCompletionStreamChoiceDelta{Content: piece}, "", -1)
	}
	for i := range c.reply.ToolCalls {
		c.callEvents(&b, i)
	}
	c.event(&b, goopenai.ChatCompletionStreamChoiceDelta{}, c.finish, -1)
	if includeUsage {
		data, _ := json.Marshal(goopenai.ChatCompletionStreamResponse{
			ID: c.id, Object: "chat.completion.chunk", Created: 1700000000, Model: c.name,
			Choices: []goopenai.ChatCompletionStreamChoice{}, Usage: &c.usage,
		})
		b.chunks = append(b.chunks, sse(data))
	}
	b.chunks = append(b.chunks, []byte("data: [DONE]\n\n"))
	return b
}

// callEvents streams tool call i: a header delta, then its arguments in two fragments.
func (c openaiCompletion) callEvents(b *body, i int) {
	call := c.reply.ToolCalls[i]
	idx := i
	args := argsString(call)
	if c.reply.ArgsAs == "object" && call.RawArgs == nil {
		// An object cannot come in fragments: it arrives whole, in the header delta.
		c.event(b, goopenai.ChatCompletionStreamChoiceDelta{ToolCalls: []goopenai.ToolCall{{
			Index: &idx, ID: callID(call, c.step, i), Type: goopenai.ToolTypeFunction,
			Function: goopenai.FunctionCall{Name: call.Name, Arguments: args},
		}}}, "", i)
		return
	}
	c.event(b, goopenai.ChatCompletionStreamChoiceDelta{ToolCalls: []goopenai.ToolCall{{
		Index: &idx, ID: callID(call, c.step, i), Type: goopenai.ToolTypeFunction,
		Function: goopenai.FunctionCall{Name: call.Name},
	}}}, "", -1)
	half := len(args) / 2
	for _, frag := range []string{args[:half], args[half:]} {
		if frag == "" {
			continue
		}
		c.event(b, goopenai.ChatCompletionStreamChoiceDelta{ToolCalls: []goopenai.ToolCall{{
			Index: &idx, Function: goopenai.FunctionCall{Arguments: frag},
		}}}, "", -1)
	}
}

// event adds one chunk; callIdx >= 0 names the tool call whose arguments it carries
// whole, sent as an object when the reply asks for it.
func (c openaiCompletion) event(b *body, delta goopenai.ChatCompletionStreamChoiceDelta, fin goopenai.FinishReason, callIdx int) {
	chunk := goopenai.ChatCompletionStreamResponse{
		ID: c.id, Object: "chat.completion.chunk", Created: 1700000000, Model: c.name,
		Choices: []goopenai.ChatCompletionStreamChoice{{Index: 0, Delta: delta, FinishReason: fin}},
	}
	data, _ := json.Marshal(chunk)
	if callIdx >= 0 && c.reply.ArgsAs == "object" && c.reply.ToolCalls[callIdx].RawArgs == nil {
		data = objectArgs(data, Reply{ToolCalls: []Call{c.reply.ToolCalls[callIdx]}}, true)
	}
	b.chunks = append(b.chunks, sse(data))
}

func sse(data []byte) []byte {
	out := make([]byte, 0, len(data)+8)
	out = append(out, "data: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}

// objectArgs replaces the arguments strings of a completion (or of a stream chunk's
// delta) with the objects themselves, as some compatible servers send them.
func objectArgs(b []byte, reply Reply, delta bool) []byte {
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil {
		return b
	}
	choices, _ := doc["choices"].([]any)
	if len(choices) == 0 {
		return b
	}
	key := "message"
	if delta {
		key = "delta"
	}
	msg, _ := choices[0].(map[string]any)[key].(map[string]any)
	tcs, _ := msg["tool_calls"].([]any)
	for i, tc := range tcs {
		if i >= len(reply.ToolCalls) || reply.ToolCalls[i].RawArgs != nil {
			continue
		}
		fn := tc.(map[string]any)["function"].(map[string]any)
		fn["arguments"] = json.RawMessage(argsObject(reply.ToolCalls[i]))
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return b
	}
	return out
}

func (s *Server) openaiModels(w http.ResponseWriter, _ *http.Request) {
	list := goopenai.ModelsList{}
	for name := range s.script.Models {
		list.Models = append(list.Models, goopenai.Model{ID: name, Object: "model", OwnedBy: "fakellm"})
	}
	if list.Models == nil {
		list.Models = []goopenai.Model{{ID: "fake", Object: "model", OwnedBy: "fakellm"}}
	}
	writeJSON(w, http.StatusOK, list)
}
