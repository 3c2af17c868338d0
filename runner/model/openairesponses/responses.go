// Package openairesponses is the model provider for OpenAI's Responses API, which newer
// OpenAI models and some servers prefer to Chat Completions, through go-openai
// (github.com/sashabaranov/go-openai), the client the openai provider uses too. Each
// request sends the whole conversation as input items with store=false, so no state is
// left on the server and a retried step asks exactly the same question.
//
// The official SDK (github.com/openai/openai-go) is not linked into the runner: it was 25
// of the binary's packages for this one endpoint. It is this package's test oracle
// instead: conformance_test.go sends the same conversations through both and holds this
// client to the SDK's requests and its reading of the same responses; differences_test.go
// pins where they part.
package openairesponses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/openaierr"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/runner/model/internal/wire"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// DefaultBaseURL is used when OPENAI_BASE_URL is not set.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Model: the model name, OPENAI_BASE_URL ("" means DefaultBaseURL), OPENAI_API_KEY (may be empty for local servers).
type Config = model.ClientConfig

// Model talks to one model through /responses. It is safe for concurrent use.
type Model struct {
	cfg    Config
	client *goopenai.Client
	tools  toolcache.Cache[[]goopenai.ResponseTool]
}

// New returns a Model for cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("openai-responses: missing model name (e.g. openai-responses:gpt-5-mini)")
	}
	cfg = cfg.WithDefaults(DefaultBaseURL)
	conf := goopenai.DefaultConfig(cfg.APIKey)
	conf.BaseURL = cfg.BaseURL
	// wire keeps the status and Retry-After of an error response, which go-openai drops.
	conf.HTTPClient = wire.Client(cfg.HTTPClient, wire.ArgsString)
	return &Model{cfg: cfg, client: goopenai.NewClientWithConfig(conf)}, nil
}

// Name returns "openai-responses:MODEL".
func (m *Model) Name() string { return "openai-responses:" + m.cfg.Model }

// Host returns the base URL requests go to, credentials redacted (it is shown to people).
func (m *Model) Host() string { return model.RedactURL(m.cfg.BaseURL) }

// Step sends the conversation to /responses.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	ctx, capture := wire.WithCapture(ctx)
	var resp *goopenai.CreateResponseResponse
	if m.cfg.Stream {
		resp, err = m.stream(ctx, params)
	} else {
		var r goopenai.CreateResponseResponse
		r, err = m.client.CreateResponse(ctx, params)
		resp = &r
	}
	if err != nil {
		return nil, m.providerError(err, capture)
	}
	if resp.Status == "failed" || resp.Error != nil && resp.Error.Message != "" {
		return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Message: "response failed: " + failure(resp)}
	}
	out := &model.Response{Model: resp.Model}
	if u := resp.Usage; u != nil {
		out.Usage = model.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
		if u.InputTokensDetails != nil { // input_tokens counts them too
			out.Usage.CachedPromptTokens = u.InputTokensDetails.CachedTokens
		}
	}
	for _, raw := range resp.Output {
		item, err := outputItem(raw)
		if err != nil {
			return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(),
				Message: "unexpected response: " + model.Truncate(err.Error(), 300), Err: err}
		}
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				if c.Type == "output_text" {
					out.Content += c.Text
				}
			}
		case "function_call":
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: item.CallID, Name: item.Name, Arguments: model.ArgsFromText(item.Arguments)})
		case "custom_tool_call": // a free-form tool's call: its text is the one argument
			args, _ := json.Marshal(map[string]string{tools.FreeformInput: item.Input})
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: item.CallID, Name: item.Name, Arguments: args})
		}
	}
	return out, nil
}

// outputItemOf is an output item with what go-openai's type leaves out: a custom tool
// call's input.
type outputItemOf struct {
	goopenai.ResponseOutputItem
	Input string `json:"input,omitempty"`
}

// outputItem reads one item of a response's output, which go-openai leaves untyped.
func outputItem(raw any) (*outputItemOf, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var item outputItemOf
	if err := json.Unmarshal(b, &item); err != nil {
		return nil, fmt.Errorf("output item: %w", err)
	}
	return &item, nil
}

// failure is the message of a failed response.
func failure(r *goopenai.CreateResponseResponse) string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Message
}

// stream reads events until response.completed, which carries the whole response.
func (m *Model) stream(ctx context.Context, params goopenai.CreateResponseRequest) (*goopenai.CreateResponseResponse, error) {
	s, err := m.client.CreateResponseStream(ctx, params)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }() // a response body: Close loses no data
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch ev.Type {
		case goopenai.ResponseStreamEventCompleted, goopenai.ResponseStreamEventIncomplete:
			if ev.Response == nil {
				return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Message: "unexpected response: " + string(ev.Type) + " without a response"}
			}
			return ev.Response, nil
		case goopenai.ResponseStreamEventFailed:
			msg := ""
			if ev.Response != nil {
				msg = failure(ev.Response)
			}
			return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Message: "response failed: " + msg}
		case goopenai.ResponseStreamEventError:
			return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Message: strings.TrimSpace(ev.Code + " " + ev.Message)}
		}
	}
	return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Temporary: true,
		Message: "connection dropped: the stream ended before response.completed"}
}

// functionCall is an input item that replays a call the model made.
type functionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// customCall and customOutput replay a free-form tool's call and its result.
type (
	customCall struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Name   string `json:"name"`
		Input  string `json:"input"`
	}
	customOutput struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
)

// freeformInput is a free-form call's text: its input argument, or the arguments as
// they are when they are not {"input": TEXT}.
func freeformInput(args json.RawMessage) string {
	var a map[string]json.RawMessage
	if json.Unmarshal(args, &a) == nil {
		var s string
		if json.Unmarshal(a[tools.FreeformInput], &s) == nil {
			return s
		}
	}
	return model.ArgsText(args)
}

// params translates a neutral request into input items: system messages become the
// instructions, calls function_call items and results function_call_output items.
func (m *Model) params(req *model.Request) (goopenai.CreateResponseRequest, error) {
	store := false
	p := goopenai.CreateResponseRequest{Model: m.cfg.Model, Store: &store}
	var err error
	if p.Tools, err = m.tools.Get(req.Tools, renderTools); err != nil {
		return p, err
	}
	o := req.Options
	if o.Temperature != nil {
		t := float32(*o.Temperature)
		p.Temperature = &t
	}
	if o.TopP != nil {
		t := float32(*o.TopP)
		p.TopP = &t
	}
	if o.MaxTokens > 0 {
		p.MaxOutputTokens = o.MaxTokens
	}
	var system []string
	items := []any{}
	freeform := map[string]bool{} // the free-form tools' names, whose calls replay as custom calls
	for _, t := range req.Tools {
		if t.Freeform != nil {
			freeform[t.Name] = true
		}
	}
	custom := map[string]bool{} // the ids of calls to them, whose results replay as custom output
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleSystem:
			system = append(system, msg.Content)
		case model.RoleUser:
			items = append(items, goopenai.ResponseInputMessage{Role: "user", Content: msg.Content})
		case model.RoleAssistant:
			if msg.Content != "" {
				items = append(items, goopenai.ResponseInputMessage{Role: "assistant", Content: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				if freeform[tc.Name] {
					custom[tc.ID] = true
					items = append(items, customCall{Type: "custom_tool_call", CallID: tc.ID, Name: tc.Name, Input: freeformInput(tc.Arguments)})
					continue
				}
				items = append(items, functionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: model.ArgsText(tc.Arguments)})
			}
		case model.RoleTool:
			if custom[msg.ToolCallID] {
				items = append(items, customOutput{Type: "custom_tool_call_output", CallID: msg.ToolCallID, Output: msg.Content})
				continue
			}
			items = append(items, goopenai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: msg.ToolCallID, Output: msg.Content})
		}
	}
	p.Instructions = strings.Join(system, "\n\n")
	p.Input = items
	return p, nil
}

// renderTools renders specs through the shared renderer as function tools, each schema
// encoded once. strict is off, and said so: the Responses API turns it on by default,
// and strict mode wants every property required and no free-form objects. A free-form
// tool (an external agent's custom tool) is offered as one, with its grammar.
func renderTools(specs []tools.Spec) ([]goopenai.ResponseTool, error) {
	if len(specs) == 0 {
		return nil, nil // no "tools": [] for a request without tools
	}
	out := make([]goopenai.ResponseTool, 0, len(specs))
	for i, t := range format.OpenAI(specs) {
		if ff := specs[i].Freeform; ff != nil {
			grammar := map[string]any{"type": "text"}
			if ff.Definition != "" {
				grammar = map[string]any{"type": "grammar", "syntax": ff.Syntax, "definition": ff.Definition}
			}
			tool := map[string]any{"name": specs[i].Name, "format": grammar}
			if specs[i].Description != "" {
				tool["description"] = specs[i].Description
			}
			out = append(out, goopenai.ResponseTool{Type: "custom", Parameters: tool})
			continue
		}
		fn, _ := t["function"].(map[string]any)
		params, err := json.Marshal(fn["parameters"])
		if err != nil {
			return nil, fmt.Errorf("openai-responses: encode the schema of %v: %w", fn["name"], err)
		}
		tool := map[string]any{"name": fn["name"], "parameters": json.RawMessage(params), "strict": false}
		if desc, _ := fn["description"].(string); desc != "" {
			tool["description"] = desc
		}
		out = append(out, goopenai.ResponseTool{Type: goopenai.ToolTypeFunction, Parameters: tool})
	}
	return out, nil
}

// providerError maps go-openai's errors to a classified ProviderError.
func (m *Model) providerError(err error, capture *wire.Capture) error {
	return model.ClassifyError("openai-responses", m.Host(), err, func(err error) error { return openaierr.Classify("openai-responses", m.Host(), err, capture) })
}
