package anthropic

// The Anthropic provider as it was on github.com/anthropics/anthropic-sdk-go (commit
// 564dbad), kept unchanged but for its names: the oracle conformance_test.go holds the
// REST client to. What it sends and how it reads a response are the SDK's; how it
// classifies what it read is the runner's, so the two together are the behaviour to keep.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// sdkModel is the provider as it was on the SDK.
type sdkModel struct {
	cfg    Config
	client sdk.MessageService
	tools  toolcache.Cache[[]sdk.ToolUnionParam]
}

// newSDKModel returns an sdkModel for cfg.
func newSDKModel(cfg Config) (*sdkModel, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("anthropic: missing model name (e.g. anthropic:claude-sonnet-4-5)")
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("anthropic: ANTHROPIC_API_KEY is not set")
	}
	cfg = cfg.WithDefaults(DefaultBaseURL)
	// The Messages service alone, not the SDK's whole client: that one links every
	// Anthropic API into the binary and reads ANTHROPIC_* itself. The runner reads the
	// environment (tests inject it) and retries itself.
	client := sdk.NewMessageService(
		option.WithEnvironmentProduction(),
		option.WithAPIKey(cfg.APIKey),
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
	)
	return &sdkModel{cfg: cfg, client: client}, nil
}

// Name returns "anthropic:MODEL".
func (m *sdkModel) Name() string { return "anthropic:" + m.cfg.Model }

// Host returns the base URL requests go to, credentials redacted (it is shown to people).
func (m *sdkModel) Host() string { return model.RedactURL(m.cfg.BaseURL) }

// Step sends the conversation to /v1/messages.
func (m *sdkModel) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var msg *sdk.Message
	if m.cfg.Stream {
		msg, err = m.stream(ctx, params)
	} else {
		msg, err = m.client.New(ctx, params)
	}
	if err != nil {
		return nil, m.providerError(err)
	}
	out := &model.Response{
		Model: string(msg.Model),
		Usage: model.Usage{
			PromptTokens:       int(msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens),
			CompletionTokens:   int(msg.Usage.OutputTokens),
			CachedPromptTokens: int(msg.Usage.CacheReadInputTokens),
		},
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := b.Input
			if len(bytes.TrimSpace(args)) == 0 {
				args = json.RawMessage("{}")
			}
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Content = text.String()
	return out, nil
}

// stream reads the events into one message with the SDK's accumulator.
func (m *sdkModel) stream(ctx context.Context, params sdk.MessageNewParams) (*sdk.Message, error) {
	s := m.client.NewStreaming(ctx, params)
	defer s.Close()
	var acc sdk.Message
	stopped := false
	for s.Next() {
		ev := s.Current()
		if err := acc.Accumulate(ev); err != nil {
			return nil, &model.ProviderError{Provider: "anthropic", Host: m.Host(), Message: "unexpected stream: " + err.Error(), Err: err}
		}
		stopped = stopped || ev.Type == "message_stop"
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if !stopped {
		// A body that ends without message_stop was cut off, most likely by a dropped
		// connection: the same request may well succeed.
		return nil, &model.ProviderError{Provider: "anthropic", Host: m.Host(), Temporary: true,
			Message: "connection dropped: the stream ended before message_stop"}
	}
	return &acc, nil
}

// params translates a neutral request. System messages become the system prompt; a tool
// message becomes a tool_result block, and blocks of one role in a row share a turn, as
// the API wants every result of a turn's calls in the next user message.
func (m *sdkModel) params(req *model.Request) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.cfg.Model), MaxTokens: DefaultMaxTokens}
	o := req.Options
	if o.MaxTokens > 0 {
		p.MaxTokens = int64(o.MaxTokens)
	}
	if o.Temperature != nil {
		p.Temperature = sdk.Float(*o.Temperature)
	}
	if o.TopP != nil {
		p.TopP = sdk.Float(*o.TopP)
	}
	var err error
	if p.Tools, err = m.tools.Get(req.Tools, sdkRenderTools); err != nil {
		return p, err
	}
	add := func(role sdk.MessageParamRole, blocks ...sdk.ContentBlockParamUnion) {
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, blocks...)
			return
		}
		p.Messages = append(p.Messages, sdk.MessageParam{Role: role, Content: blocks})
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleSystem:
			p.System = append(p.System, sdk.TextBlockParam{Text: msg.Content})
		case model.RoleUser:
			add(sdk.MessageParamRoleUser, sdk.NewTextBlock(sdkNonEmpty(msg.Content)))
		case model.RoleTool:
			add(sdk.MessageParamRoleUser, sdk.NewToolResultBlock(msg.ToolCallID, sdkNonEmpty(msg.Content), false))
		case model.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				blocks = append(blocks, sdk.NewTextBlock(sdkNonEmpty(msg.Content)))
			}
			for _, tc := range msg.ToolCalls {
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, sdkInputObject(tc.Arguments), tc.Name))
			}
			add(sdk.MessageParamRoleAssistant, blocks...)
		}
	}
	return p, nil
}

// sdkNonEmpty stands in for empty text, which the API rejects in a text block.
func sdkNonEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

// sdkInputObject is a call's arguments as the object tool_use wants: a string holding an
// object is unwrapped, anything else that is not an object is sent as {}.
func sdkInputObject(raw json.RawMessage) json.RawMessage {
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

// sdkRenderTools renders specs through the shared renderer, so every provider shows the
// model the same schemas.
func sdkRenderTools(specs []tools.Spec) ([]sdk.ToolUnionParam, error) {
	if len(specs) == 0 {
		return nil, nil // no "tools": [] for a request without tools
	}
	out := make([]sdk.ToolUnionParam, 0, len(specs))
	for _, t := range format.Anthropic(specs) {
		name, _ := t["name"].(string)
		desc, _ := t["description"].(string)
		schema, _ := t["input_schema"].(map[string]any)
		in := sdk.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range schema {
			switch k {
			case "type":
			case "properties":
				in.Properties = v
			case "required":
				list, _ := v.([]any)
				for _, r := range list {
					if name, ok := r.(string); ok {
						in.Required = append(in.Required, name)
					}
				}
			default:
				in.ExtraFields[k] = v
			}
		}
		tool := sdk.ToolParam{Name: name, InputSchema: in}
		if desc != "" {
			tool.Description = sdk.String(desc)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: &tool})
	}
	return out, nil
}

// providerError maps the SDK's errors to a classified ProviderError.
func (m *sdkModel) providerError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &model.ProviderError{Provider: "anthropic", Host: m.Host(), Err: err}
	}
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		return err
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode != 0 {
		var retryAfter time.Duration
		if apiErr.Response != nil {
			retryAfter, _ = model.ParseRetryAfter(apiErr.Response.Header.Get("Retry-After"), time.Now())
		}
		return model.HTTPError("anthropic", m.Host(), apiErr.StatusCode, sdkErrorMessage(apiErr), retryAfter, err)
	}
	pe = model.TransportError("anthropic", m.Host(), err)
	if !pe.Temporary {
		pe.Message = "unexpected response: " + model.Truncate(err.Error(), 300)
	}
	return pe
}

// sdkErrorMessage is the message of the API's error body, {"type":"error","error":{...}}.
func sdkErrorMessage(e *sdk.Error) string {
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(e.RawJSON()), &body) == nil && body.Error.Message != "" {
		if body.Error.Type != "" {
			return body.Error.Type + ": " + body.Error.Message
		}
		return body.Error.Message
	}
	return strings.TrimSpace(e.RawJSON())
}
