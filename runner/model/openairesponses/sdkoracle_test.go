package openairesponses

// The Responses provider as it was on github.com/openai/openai-go/v3 (commit 564dbad),
// kept unchanged but for its names: the oracle conformance_test.go holds the go-openai
// client to. What it sends and how it reads a response are the SDK's; how it classifies
// what it read is the runner's, so the two together are the behaviour to keep.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// sdkModel is the provider as it was on the SDK.
type sdkModel struct {
	cfg    Config
	client responses.ResponseService
	tools  toolcache.Cache[[]responses.ToolUnionParam]
}

// newSDKModel returns an sdkModel for cfg.
func newSDKModel(cfg Config) (*sdkModel, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("openai-responses: missing model name (e.g. openai-responses:gpt-5-mini)")
	}
	cfg = cfg.WithDefaults(DefaultBaseURL)
	// The Responses service alone, not the SDK's whole client: that one links every
	// OpenAI API into the binary (five times its size) and reads OPENAI_* itself. The
	// runner reads the environment (tests inject it) and retries itself.
	client := responses.NewResponseService(
		option.WithAPIKey(cfg.APIKey),
		option.WithBaseURL(cfg.BaseURL+"/"),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
	)
	return &sdkModel{cfg: cfg, client: client}, nil
}

// Name returns "openai-responses:MODEL".
func (m *sdkModel) Name() string { return "openai-responses:" + m.cfg.Model }

// Host returns the base URL requests go to, credentials redacted (it is shown to people).
func (m *sdkModel) Host() string { return model.RedactURL(m.cfg.BaseURL) }

// Step sends the conversation to /responses.
func (m *sdkModel) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var resp *responses.Response
	if m.cfg.Stream {
		resp, err = m.stream(ctx, params)
	} else {
		resp, err = m.client.New(ctx, params)
	}
	if err != nil {
		return nil, m.providerError(err)
	}
	if resp.Status == responses.ResponseStatusFailed || resp.Error.Message != "" {
		return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Message: "response failed: " + resp.Error.Message}
	}
	out := &model.Response{
		Model: string(resp.Model),
		Usage: model.Usage{PromptTokens: int(resp.Usage.InputTokens), CompletionTokens: int(resp.Usage.OutputTokens),
			CachedPromptTokens: int(resp.Usage.InputTokensDetails.CachedTokens)},
	}
	for _, item := range resp.Output {
		switch item.Type {
		case "message":
			for _, c := range item.AsMessage().Content {
				if c.Type == "output_text" {
					out.Content += c.Text
				}
			}
		case "function_call":
			fc := item.AsFunctionCall()
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: fc.CallID, Name: fc.Name, Arguments: model.ArgsFromText(fc.Arguments)})
		}
	}
	return out, nil
}

// stream reads events until response.completed, which carries the whole response.
func (m *sdkModel) stream(ctx context.Context, params responses.ResponseNewParams) (*responses.Response, error) {
	s := m.client.NewStreaming(ctx, params)
	defer s.Close()
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "response.completed", "response.incomplete":
			r := ev.Response
			return &r, nil
		case "response.failed":
			return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Message: "response failed: " + ev.Response.Error.Message}
		case "error":
			return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Message: strings.TrimSpace(ev.Code + " " + ev.Message)}
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return nil, &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Temporary: true,
		Message: "connection dropped: the stream ended before response.completed"}
}

// params translates a neutral request into input items: system messages become the
// instructions, calls function_call items and results function_call_output items.
func (m *sdkModel) params(req *model.Request) (responses.ResponseNewParams, error) {
	p := responses.ResponseNewParams{Model: m.cfg.Model, Store: param.NewOpt(false)}
	var err error
	if p.Tools, err = m.tools.Get(req.Tools, sdkRenderTools); err != nil {
		return p, err
	}
	o := req.Options
	if o.Temperature != nil {
		p.Temperature = param.NewOpt(*o.Temperature)
	}
	if o.TopP != nil {
		p.TopP = param.NewOpt(*o.TopP)
	}
	if o.MaxTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(o.MaxTokens))
	}
	var system []string
	var items responses.ResponseInputParam
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleSystem:
			system = append(system, msg.Content)
		case model.RoleUser:
			items = append(items, responses.ResponseInputItemParamOfMessage(msg.Content, responses.EasyInputMessageRoleUser))
		case model.RoleAssistant:
			if msg.Content != "" {
				items = append(items, responses.ResponseInputItemParamOfMessage(msg.Content, responses.EasyInputMessageRoleAssistant))
			}
			for _, tc := range msg.ToolCalls {
				items = append(items, responses.ResponseInputItemParamOfFunctionCall(model.ArgsText(tc.Arguments), tc.ID, tc.Name))
			}
		case model.RoleTool:
			item := responses.ResponseInputItemParamOfFunctionCallOutput(msg.Content)
			item.OfFunctionCallOutput.CallID = param.NewOpt(msg.ToolCallID)
			items = append(items, item)
		}
	}
	if len(system) > 0 {
		p.Instructions = param.NewOpt(strings.Join(system, "\n\n"))
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	return p, nil
}

// sdkRenderTools renders specs through the shared renderer as function tools. strict is
// off: strict mode wants every property required and no free-form objects.
func sdkRenderTools(specs []tools.Spec) ([]responses.ToolUnionParam, error) {
	if len(specs) == 0 {
		return nil, nil // no "tools": [] for a request without tools
	}
	out := make([]responses.ToolUnionParam, 0, len(specs))
	for _, t := range format.OpenAI(specs) {
		fn, _ := t["function"].(map[string]any)
		name, _ := fn["name"].(string)
		desc, _ := fn["description"].(string)
		params, _ := fn["parameters"].(map[string]any)
		tool := responses.FunctionToolParam{Name: name, Parameters: params, Strict: param.NewOpt(false)}
		if desc != "" {
			tool.Description = param.NewOpt(desc)
		}
		out = append(out, responses.ToolUnionParam{OfFunction: &tool})
	}
	return out, nil
}

// providerError maps the SDK's errors to a classified ProviderError.
func (m *sdkModel) providerError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &model.ProviderError{Provider: "openai-responses", Host: m.Host(), Err: err}
	}
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		return err
	}
	var apiErr *responses.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode != 0 {
		var retryAfter time.Duration
		if apiErr.Response != nil {
			retryAfter, _ = model.ParseRetryAfter(apiErr.Response.Header.Get("Retry-After"), time.Now())
		}
		msg := apiErr.Message
		if msg == "" {
			msg = apiErr.RawJSON()
		}
		return model.HTTPError("openai-responses", m.Host(), apiErr.StatusCode, msg, retryAfter, err)
	}
	pe = model.TransportError("openai-responses", m.Host(), err)
	if !pe.Temporary {
		pe.Message = "unexpected response: " + model.Truncate(err.Error(), 300)
	}
	return pe
}
