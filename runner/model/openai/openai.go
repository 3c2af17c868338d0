// Package openai is the model provider for OpenAI's Chat Completions API and every
// server that copies it (vLLM, llama.cpp server, LM Studio, Ollama's /v1), through
// github.com/sashabaranov/go-openai.
package openai

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/runner/model/internal/wire"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// DefaultBaseURL is used when OPENAI_BASE_URL is not set.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Model.
type Config struct {
	// Model is the server's model name, e.g. "gpt-4o-mini".
	Model string
	// BaseURL is OPENAI_BASE_URL ("" means DefaultBaseURL).
	BaseURL string
	// APIKey is OPENAI_API_KEY; empty sends no Authorization header (local servers).
	APIKey string
	// Stream asks for server-sent events instead of one JSON body.
	Stream bool
	// HTTPClient is the client to send requests with (nil: a default one). Its transport
	// is wrapped; its Timeout should be 0, since the caller's context bounds each request.
	HTTPClient *http.Client
}

// Model talks to one model of an OpenAI-compatible server.
type Model struct {
	cfg    Config
	client *goopenai.Client
	tools  toolcache.Cache[[]goopenai.Tool]
}

// New returns a Model for cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("openai: missing model name (e.g. openai:gpt-4o-mini)")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	conf := goopenai.DefaultConfig(cfg.APIKey)
	conf.BaseURL = cfg.BaseURL
	conf.HTTPClient = wire.Client(cfg.HTTPClient, wire.ArgsString)
	return &Model{cfg: cfg, client: goopenai.NewClientWithConfig(conf)}, nil
}

// Name returns "openai:MODEL".
func (m *Model) Name() string { return "openai:" + m.cfg.Model }

// Host returns the base URL requests go to.
func (m *Model) Host() string { return m.cfg.BaseURL }

// Step sends the conversation to /chat/completions.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	creq := m.chatRequest(req)
	ctx, capture := wire.WithCapture(ctx)
	if m.cfg.Stream {
		resp, err := m.stream(ctx, creq, req)
		if err != nil {
			return nil, m.providerError(err, capture)
		}
		return resp, nil
	}
	cresp, err := m.client.CreateChatCompletion(ctx, creq)
	if err != nil {
		return nil, m.providerError(err, capture)
	}
	if len(cresp.Choices) == 0 {
		return nil, &model.ProviderError{Provider: "openai", Host: m.Host(), Message: "unexpected response: no choices"}
	}
	msg := cresp.Choices[0].Message
	out := &model.Response{
		Content: msg.Content,
		Model:   cresp.Model,
		Usage:   model.Usage{PromptTokens: cresp.Usage.PromptTokens, CompletionTokens: cresp.Usage.CompletionTokens},
	}
	for i, tc := range msg.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, toolCall(tc.ID, tc.Function.Name, tc.Function.Arguments, req, i))
	}
	return out, nil
}

func (m *Model) chatRequest(req *model.Request) goopenai.ChatCompletionRequest {
	msgs := make([]goopenai.ChatCompletionMessage, 0, len(req.Messages))
	for _, msg := range req.Messages {
		out := goopenai.ChatCompletionMessage{Role: msg.Role, Content: msg.Content, ToolCallID: msg.ToolCallID}
		for _, tc := range msg.ToolCalls {
			out.ToolCalls = append(out.ToolCalls, goopenai.ToolCall{
				ID:       tc.ID,
				Type:     goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{Name: tc.Name, Arguments: argsString(tc.Arguments)},
			})
		}
		msgs = append(msgs, out)
	}
	creq := goopenai.ChatCompletionRequest{Model: m.cfg.Model, Messages: msgs}
	creq.Tools, _ = m.tools.Get(req.Tools, renderTools)
	o := req.Options
	if o.Temperature != nil {
		creq.Temperature = float32(*o.Temperature)
		if creq.Temperature == 0 {
			// go-openai omits a zero temperature; its documented workaround sends the
			// smallest positive float, which servers treat as greedy decoding.
			creq.Temperature = math.SmallestNonzeroFloat32
		}
	}
	if o.TopP != nil {
		creq.TopP = float32(*o.TopP)
	}
	if o.Seed != nil {
		seed := *o.Seed
		creq.Seed = &seed
	}
	if o.MaxTokens > 0 {
		if reasoningModel(m.cfg.Model) {
			creq.MaxCompletionTokens = o.MaxTokens // these reject max_tokens
		} else {
			creq.MaxTokens = o.MaxTokens // what compatible servers understand
		}
	}
	return creq
}

// renderTools renders specs through the shared renderer, so every provider shows the
// model the same schemas.
func renderTools(specs []tools.Spec) ([]goopenai.Tool, error) {
	var out []goopenai.Tool
	for _, t := range format.OpenAI(specs) {
		fn, _ := t["function"].(map[string]any)
		name, _ := fn["name"].(string)
		desc, _ := fn["description"].(string)
		out = append(out, goopenai.Tool{
			Type:     goopenai.ToolTypeFunction,
			Function: &goopenai.FunctionDefinition{Name: name, Description: desc, Parameters: fn["parameters"]},
		})
	}
	return out, nil
}

func reasoningModel(name string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// providerError maps go-openai's errors to a classified ProviderError.
func (m *Model) providerError(err error, capture *wire.Capture) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller's deadline or the retry wrapper's request timeout: it decides.
		return &model.ProviderError{Provider: "openai", Host: m.Host(), Err: err}
	}
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		return err // already classified (a stream cut short)
	}
	status, retryAfterHeader := capture.Status()
	retryAfter, _ := model.ParseRetryAfter(retryAfterHeader, time.Now())
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr) && (apiErr.HTTPStatusCode != 0 || status != 0):
		code := apiErr.HTTPStatusCode
		if code == 0 {
			code = status
		}
		return model.HTTPError("openai", m.Host(), code, apiErr.Message, retryAfter, err)
	case errors.As(err, &reqErr):
		msg := strings.TrimSpace(string(reqErr.Body))
		if msg == "" && reqErr.Err != nil {
			msg = reqErr.Err.Error()
		}
		return model.HTTPError("openai", m.Host(), reqErr.HTTPStatusCode, msg, retryAfter, err)
	case apiErr != nil:
		// An error object inside a 200 stream: the server gave up mid-answer.
		return &model.ProviderError{Provider: "openai", Host: m.Host(), Message: apiErr.Message, Err: err}
	}
	pe = model.TransportError("openai", m.Host(), err)
	if !pe.Temporary {
		pe.Message = "unexpected response: " + model.Truncate(err.Error(), 300)
	}
	return pe
}
