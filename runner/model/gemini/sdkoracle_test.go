package gemini

// The Gemini provider as it was on google.golang.org/genai (commit 8873c4a), kept
// unchanged but for its names: the oracle conformance_test.go holds the REST client to.
// What it sends and how it reads a response are the SDK's; how it classifies what it
// read is the runner's, so the two together are the behaviour to keep.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/runner/model/internal/wire"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// sdkModel is the provider as it was on the SDK.
type sdkModel struct {
	cfg    Config
	client *genai.Client
	tools  toolcache.Cache[[]*genai.Tool]

	// signatures keeps the thoughtSignature of each call the model made, by call id:
	// thinking models want it back with the call in later requests, and the neutral
	// conversation has no place for it.
	mu         sync.Mutex
	signatures map[string][]byte
}

// newSDKModel returns an sdkModel for cfg.
func newSDKModel(cfg Config) (*sdkModel, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("gemini: missing model name (e.g. gemini:gemini-2.5-flash)")
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("gemini: GEMINI_API_KEY is not set")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  wire.Client(cfg.HTTPClient, wire.ArgsObject), // for the status and Retry-After of errors
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	return &sdkModel{cfg: cfg, client: client, signatures: map[string][]byte{}}, nil
}

// Name returns "gemini:MODEL".
func (m *sdkModel) Name() string { return "gemini:" + m.cfg.Model }

// Host returns the base URL requests go to, credentials redacted (it is shown to people).
func (m *sdkModel) Host() string { return model.RedactURL(m.cfg.BaseURL) }

// Step sends the conversation to generateContent (or streamGenerateContent).
func (m *sdkModel) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	contents, config, err := m.sdkRequest(req)
	if err != nil {
		return nil, err
	}
	ctx, capture := wire.WithCapture(ctx)
	out := &model.Response{}
	finished := false
	add := func(resp *genai.GenerateContentResponse) error {
		if resp.ModelVersion != "" {
			out.Model = resp.ModelVersion
		}
		if u := resp.UsageMetadata; u != nil {
			out.Usage = model.Usage{PromptTokens: int(u.PromptTokenCount), CompletionTokens: int(u.CandidatesTokenCount),
				CachedPromptTokens: int(u.CachedContentTokenCount)}
		}
		if len(resp.Candidates) == 0 {
			if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
				return &model.ProviderError{Provider: "gemini", Host: m.Host(), Message: fmt.Sprintf("prompt blocked: %s %s", pf.BlockReason, pf.BlockReasonMessage)}
			}
			return nil
		}
		c := resp.Candidates[0]
		finished = finished || c.FinishReason != ""
		if c.Content == nil {
			return nil
		}
		for _, p := range c.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				out.ToolCalls = append(out.ToolCalls, m.toolCall(p, req.Step(), len(out.ToolCalls)))
			case p.Text != "" && !p.Thought:
				out.Content += p.Text
			}
		}
		return nil
	}
	if m.cfg.Stream {
		for resp, err := range m.client.Models.GenerateContentStream(ctx, m.cfg.Model, contents, config) {
			if err != nil {
				return nil, m.providerError(err, capture)
			}
			if err := add(resp); err != nil {
				return nil, err
			}
		}
		if !finished {
			return nil, &model.ProviderError{Provider: "gemini", Host: m.Host(), Temporary: true,
				Message: "connection dropped: the stream ended before a finishReason"}
		}
		return out, nil
	}
	resp, err := m.client.Models.GenerateContent(ctx, m.cfg.Model, contents, config)
	if err != nil {
		return nil, m.providerError(err, capture)
	}
	if err := add(resp); err != nil {
		return nil, err
	}
	if len(resp.Candidates) == 0 {
		return nil, &model.ProviderError{Provider: "gemini", Host: m.Host(), Message: "unexpected response: no candidates"}
	}
	return out, nil
}

// toolCall makes a neutral call of a functionCall part. Gemini's API gives calls no id,
// so one is made up from the step, as the loop would.
func (m *sdkModel) toolCall(p *genai.Part, step, i int) model.ToolCall {
	fc := p.FunctionCall
	id := fc.ID
	if id == "" {
		id = fmt.Sprintf("call_%d_%d", step, i+1)
	}
	args, err := json.Marshal(fc.Args)
	if err != nil || fc.Args == nil {
		args = json.RawMessage("{}")
	}
	if len(p.ThoughtSignature) > 0 {
		m.mu.Lock()
		m.signatures[id] = p.ThoughtSignature
		m.mu.Unlock()
	}
	return model.ToolCall{ID: id, Name: fc.Name, Arguments: args}
}

// request translates a neutral request. System messages become the system instruction;
// parts of one role in a row share a turn, so the results of a turn's calls go back
// together, in the order of the calls.
func (m *sdkModel) sdkRequest(req *model.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	config := &genai.GenerateContentConfig{}
	var err error
	if config.Tools, err = m.tools.Get(req.Tools, sdkRenderTools); err != nil {
		return nil, nil, err
	}
	o := req.Options
	if o.Temperature != nil {
		t := float32(*o.Temperature)
		config.Temperature = &t
	}
	if o.TopP != nil {
		p := float32(*o.TopP)
		config.TopP = &p
	}
	if o.Seed != nil {
		s := int32(*o.Seed)
		config.Seed = &s
	}
	if o.MaxTokens > 0 {
		config.MaxOutputTokens = int32(o.MaxTokens)
	}
	var contents []*genai.Content
	add := func(role string, parts ...*genai.Part) {
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, &genai.Content{Role: role, Parts: parts})
	}
	var system []*genai.Part
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleSystem:
			system = append(system, &genai.Part{Text: msg.Content})
		case model.RoleUser:
			add(genai.RoleUser, &genai.Part{Text: msg.Content})
		case model.RoleTool:
			add(genai.RoleUser, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				Name: msg.ToolName, Response: map[string]any{"output": msg.Content},
			}})
		case model.RoleAssistant:
			var parts []*genai.Part
			if msg.Content != "" {
				parts = append(parts, &genai.Part{Text: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				m.mu.Lock()
				sig := m.signatures[tc.ID]
				m.mu.Unlock()
				parts = append(parts, &genai.Part{ThoughtSignature: sig, FunctionCall: &genai.FunctionCall{Name: tc.Name, Args: sdkArgsMap(tc.Arguments)}})
			}
			if len(parts) == 0 {
				parts = append(parts, &genai.Part{Text: " "}) // a turn needs a part
			}
			add(genai.RoleModel, parts...)
		}
	}
	if len(system) > 0 {
		config.SystemInstruction = &genai.Content{Parts: system}
	}
	return contents, config, nil
}

// sdkArgsMap is a call's arguments as the object functionCall wants; a string holding one is
// unwrapped, anything else is sent empty.
func sdkArgsMap(raw json.RawMessage) map[string]any {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// sdkRenderTools turns the shared Gemini rendering into the SDK's declarations, through
// JSON: the SDK's types carry the wire's field names.
func sdkRenderTools(specs []tools.Spec) ([]*genai.Tool, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(format.Gemini(specs))
	if err != nil {
		return nil, fmt.Errorf("gemini: render tools: %w", err)
	}
	var tool genai.Tool
	if err := json.Unmarshal(b, &tool); err != nil {
		return nil, fmt.Errorf("gemini: render tools: %w", err)
	}
	return []*genai.Tool{&tool}, nil
}

// providerError maps the SDK's errors to a classified ProviderError.
func (m *sdkModel) providerError(err error, capture *wire.Capture) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &model.ProviderError{Provider: "gemini", Host: m.Host(), Err: err}
	}
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		return err
	}
	status, retryAfterHeader := capture.Status()
	retryAfter, _ := model.ParseRetryAfter(retryAfterHeader, time.Now())
	var apiErr genai.APIError
	var apiErrPtr *genai.APIError
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &apiErrPtr):
		apiErr = *apiErrPtr
	default:
		pe = model.TransportError("gemini", m.Host(), err)
		if !pe.Temporary {
			pe.Message = "unexpected response: " + model.Truncate(err.Error(), 300)
		}
		return pe
	}
	code := apiErr.Code
	if code == 0 {
		code = status
	}
	msg := apiErr.Message
	if apiErr.Status != "" && !strings.Contains(msg, apiErr.Status) {
		msg = apiErr.Status + ": " + msg
	}
	if code == 0 {
		// An error object inside a 200 stream: the server gave up mid-answer.
		return &model.ProviderError{Provider: "gemini", Host: m.Host(), Message: msg, Err: err}
	}
	return model.HTTPError("gemini", m.Host(), code, msg, retryAfter, err)
}
