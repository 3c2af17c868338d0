package ollama

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/msgcache"
	"github.com/agentrunner/runner/runner/model/internal/wire"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// body encodes the chat request. Messages come from the conversation cache: each one is
// converted and encoded once, the first time it is sent, instead of on every step.
func (m *Model) body(req *model.Request) ([]byte, error) {
	chat, err := m.chatRequest(req)
	if err != nil {
		return nil, err
	}
	chat.Messages = []api.Message{} // encodes as [], where Splice puts the conversation
	head, err := json.Marshal(chat)
	if err != nil {
		return nil, fmt.Errorf("ollama: encode request: %w", err)
	}
	body, err := m.msgs.Splice(head, req.Messages, encodeMessage)
	if errors.Is(err, msgcache.ErrShape) {
		// api.ChatRequest no longer encodes as Splice expects: encode it whole.
		chat.Messages = make([]api.Message, len(req.Messages))
		for i := range req.Messages {
			chat.Messages[i] = message(&req.Messages[i])
		}
		body, err = json.Marshal(chat)
	}
	if err != nil {
		return nil, fmt.Errorf("ollama: encode request: %w", err)
	}
	return body, nil
}

// chatRequest translates a neutral request into Ollama's, without its messages.
func (m *Model) chatRequest(req *model.Request) (*api.ChatRequest, error) {
	toolDefs, err := m.tools.Get(req.Tools, renderTools)
	if err != nil {
		return nil, err
	}
	stream := m.cfg.Stream
	chat := &api.ChatRequest{
		Model:   m.cfg.Model,
		Stream:  &stream,
		Tools:   toolDefs,
		Options: options(req.Options),
	}
	if m.cfg.KeepAlive > 0 {
		chat.KeepAlive = &api.Duration{Duration: m.cfg.KeepAlive}
	}
	return chat, nil
}

// message translates one neutral message into Ollama's.
func message(msg *model.Message) api.Message {
	out := api.Message{Role: msg.Role, Content: msg.Content, ToolName: msg.ToolName, ToolCallID: msg.ToolCallID}
	for i, tc := range msg.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, api.ToolCall{
			ID: tc.ID,
			Function: api.ToolCallFunction{
				Index:     i,
				Name:      tc.Name,
				Arguments: argsObject(tc.Arguments),
			},
		})
	}
	return out
}

// encodeMessage is the cache's encoder: a message as it appears in api.ChatRequest.
func encodeMessage(msg *model.Message) ([]byte, error) {
	return json.Marshal(message(msg))
}

// renderTools turns tool specs into api.Tools through the shared renderer, so every
// provider shows the model the same schemas.
func renderTools(specs []tools.Spec) (api.Tools, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(format.Ollama(specs))
	if err != nil {
		return nil, fmt.Errorf("ollama: render tools: %w", err)
	}
	var out api.Tools
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("ollama: render tools: %w", err)
	}
	return out, nil
}

// options maps the task's sampling options to Ollama's names. Only what the task set is
// sent, so the model's own defaults (from its Modelfile) hold for the rest.
func options(o model.Options) map[string]any {
	opts := map[string]any{}
	if o.Temperature != nil {
		opts["temperature"] = *o.Temperature
	}
	if o.Seed != nil {
		opts["seed"] = *o.Seed
	}
	if o.TopP != nil {
		opts["top_p"] = *o.TopP
	}
	if o.NumCtx > 0 {
		opts["num_ctx"] = o.NumCtx
	}
	if o.MaxTokens > 0 {
		opts["num_predict"] = o.MaxTokens
	}
	return opts
}

// argsObject decodes a call's raw arguments (an object, or a string holding one) for
// sending the conversation back; arguments that never parsed go back empty.
func argsObject(raw json.RawMessage) api.ToolCallFunctionArguments {
	args := api.NewToolCallFunctionArguments()
	trimmed := strings.TrimSpace(string(raw))
	if strings.HasPrefix(trimmed, `"`) {
		var inner string
		if json.Unmarshal([]byte(trimmed), &inner) != nil {
			return args
		}
		trimmed = inner
	}
	if !strings.HasPrefix(strings.TrimSpace(trimmed), "{") {
		return args
	}
	var parsed api.ToolCallFunctionArguments
	if json.Unmarshal([]byte(trimmed), &parsed) != nil {
		return args
	}
	return parsed
}

// accumulator gathers a (possibly streamed) chat response.
type accumulator struct {
	content strings.Builder
	calls   []model.ToolCall
	model   string
	done    bool
	reason  string
	metrics api.Metrics
}

func (a *accumulator) add(r api.ChatResponse) {
	a.content.WriteString(r.Message.Content)
	for _, tc := range r.Message.ToolCalls {
		a.calls = append(a.calls, model.ToolCall{
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: argsRaw(tc.Function.Arguments),
		})
	}
	if r.Model != "" {
		a.model = r.Model
	}
	if r.Done {
		a.done = true
		a.reason = r.DoneReason
		a.metrics = r.Metrics
	}
}

// response builds the step's answer; step numbers the ids a server did not send.
func (a *accumulator) response(step int) *model.Response {
	for i := range a.calls {
		if a.calls[i].ID == "" {
			// Older servers send no ids; the loop needs one to link each result.
			a.calls[i].ID = fmt.Sprintf("call_%d_%d", step, i+1)
		}
	}
	return &model.Response{
		Content:    a.content.String(),
		ToolCalls:  a.calls,
		Model:      a.model,
		StopReason: a.reason,
		Usage: model.Usage{
			PromptTokens:       a.metrics.PromptEvalCount,
			CompletionTokens:   a.metrics.EvalCount,
			EvalDuration:       result.Millis(a.metrics.EvalDuration),
			PromptEvalDuration: result.Millis(a.metrics.PromptEvalDuration),
			LoadDuration:       result.Millis(a.metrics.LoadDuration),
			TotalDuration:      result.Millis(a.metrics.TotalDuration),
		},
	}
}

// argsRaw returns the arguments as raw JSON: the object as Ollama sent it, or - when the
// server sent a string that is not an object (see wire.RawArgsKey) - that string, so the
// tool registry can tell the model what was wrong.
func argsRaw(args api.ToolCallFunctionArguments) json.RawMessage {
	if v, ok := args.Get(wire.RawArgsKey); ok && args.Len() == 1 {
		if s, ok := v.(string); ok {
			b, _ := json.Marshal(s)
			return b
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
