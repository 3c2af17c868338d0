// Package anthropic is the model provider for Anthropic's Messages API (/v1/messages,
// streamed as server-sent events with --stream), spoken over plain net/http with types of
// its own. Tool calls are tool_use blocks and their results go back as tool_result blocks
// in the next user turn.
//
// The official SDK (github.com/anthropics/anthropic-sdk-go) is not linked into the runner:
// it and the OpenTelemetry packages it brings are 46 of the binary's packages and a large
// part of its cold build. It is this package's test oracle instead: conformance_test.go
// sends the same conversations through both and holds this client to the SDK's requests
// and to the SDK's reading of the same responses; differences_test.go pins where they part.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// DefaultBaseURL is used when ANTHROPIC_BASE_URL is not set.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is max_tokens when the task sets none: the API requires one.
const DefaultMaxTokens = 4096

// apiVersion is the anthropic-version header, the API version the SDK speaks.
const apiVersion = "2023-06-01"

// Config configures a Model: the model name, ANTHROPIC_BASE_URL ("" means DefaultBaseURL), ANTHROPIC_API_KEY.
type Config = model.ClientConfig

// Model talks to one Anthropic model. It is safe for concurrent use.
type Model struct {
	cfg      Config
	endpoint string // BASE/v1/messages
	tools    toolcache.Cache[json.RawMessage]
}

// New returns a Model for cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("anthropic: missing model name (e.g. anthropic:claude-sonnet-4-5)")
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("anthropic: ANTHROPIC_API_KEY is not set")
	}
	cfg = cfg.WithDefaults(DefaultBaseURL)
	return &Model{cfg: cfg, endpoint: cfg.BaseURL + "/v1/messages"}, nil
}

// Name returns "anthropic:MODEL".
func (m *Model) Name() string { return "anthropic:" + m.cfg.Model }

// Host returns the base URL requests go to, credentials redacted (it is shown to people).
func (m *Model) Host() string { return model.RedactURL(m.cfg.BaseURL) }

// Step sends the conversation to /v1/messages.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	body, err := m.request(req)
	if err != nil {
		return nil, err
	}
	var msg *message
	if m.cfg.Stream {
		body.Stream = true
		msg, err = m.stream(ctx, body)
	} else {
		msg, err = m.create(ctx, body)
	}
	if err != nil {
		return nil, m.providerError(err)
	}
	out := &model.Response{
		Model: msg.Model,
		Usage: msg.Usage.modelUsage(),
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := bytes.TrimSpace(b.Input)
			if len(args) == 0 || string(args) == "null" { // as the SDK reads it
				args = json.RawMessage("{}")
			}
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Content = text.String()
	return out, nil
}

// create makes one request for the whole answer as one JSON body.
func (m *Model) create(ctx context.Context, body *messagesRequest) (*message, error) {
	resp, err := m.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, statusError(resp)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		// A body cut short is a failed connection, whatever half of it would parse as.
		return nil, fmt.Errorf("read response body: %w", err)
	}
	if !isJSON(resp.Header.Get("Content-Type")) {
		return nil, &badResponse{fmt.Errorf("a %s body, not JSON: %s", resp.Header.Get("Content-Type"), model.Truncate(string(raw), 200))}
	}
	var msg message
	// A decoder, as the SDK reads the body: an empty or truncated one is io.EOF or
	// io.ErrUnexpectedEOF, a connection that ended early, and is retried.
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&msg); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	return &msg, nil
}

// request translates a neutral request. System messages become the system prompt; a tool
// message becomes a tool_result block, and blocks of one role in a row share a turn, as
// the API wants every result of a turn's calls in the next user message.
func (m *Model) request(req *model.Request) (*messagesRequest, error) {
	p := &messagesRequest{Model: m.cfg.Model, MaxTokens: DefaultMaxTokens}
	o := req.Options
	if o.MaxTokens > 0 {
		p.MaxTokens = int64(o.MaxTokens)
	}
	p.Temperature, p.TopP = o.Temperature, o.TopP
	var err error
	if p.Tools, err = m.tools.Get(req.Tools, renderTools); err != nil {
		return nil, err
	}
	add := func(role string, blocks ...block) {
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, blocks...)
			return
		}
		p.Messages = append(p.Messages, turn{Role: role, Content: blocks})
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleSystem:
			p.System = append(p.System, textBlock{Type: "text", Text: msg.Content})
		case model.RoleUser:
			add("user", textOf(nonEmpty(msg.Content)))
		case model.RoleTool:
			add("user", block{Type: "tool_result", ToolUseID: msg.ToolCallID, IsError: new(bool),
				Content: []textBlock{{Type: "text", Text: nonEmpty(msg.Content)}}})
		case model.RoleAssistant:
			var blocks []block
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				blocks = append(blocks, textOf(nonEmpty(msg.Content)))
			}
			for _, tc := range msg.ToolCalls {
				blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: inputObject(tc.Arguments)})
			}
			add("assistant", blocks...)
		}
	}
	return p, nil
}

func textOf(s string) block { return block{Type: "text", Text: s} }

// nonEmpty stands in for empty text, which the API rejects in a text block.
func nonEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

// inputObject is a call's arguments as the object tool_use wants: a string holding an
// object is unwrapped, anything else that is not an object is sent as {}.
func inputObject(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) > 0 && raw[0] == '{' && json.Valid(raw) {
		return raw
	}
	return json.RawMessage("{}")
}

// renderTools renders specs through the shared renderer, so every provider shows the
// model the same schemas, and encodes them once: every request of a run sends the same.
// input_schema is always of type object, as the SDK sends it.
func renderTools(specs []tools.Spec) (json.RawMessage, error) {
	if len(specs) == 0 {
		return nil, nil // no "tools": [] for a request without tools
	}
	out := make([]map[string]any, 0, len(specs))
	for _, t := range format.Anthropic(specs) {
		schema, _ := t["input_schema"].(map[string]any)
		in := map[string]any{"type": "object"}
		for k, v := range schema {
			switch k {
			case "type":
			case "required": // names only, and none at all rather than []
				var names []string
				list, _ := v.([]any)
				for _, r := range list {
					if name, ok := r.(string); ok {
						names = append(names, name)
					}
				}
				if len(names) > 0 {
					in[k] = names
				}
			default:
				if v != nil {
					in[k] = v
				}
			}
		}
		tool := map[string]any{"name": t["name"], "input_schema": in}
		if desc, _ := t["description"].(string); desc != "" {
			tool["description"] = desc
		}
		out = append(out, tool)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode tools: %w", err)
	}
	return b, nil
}
