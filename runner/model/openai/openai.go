// Package openai is the model provider for OpenAI's Chat Completions API and every
// server that copies it (vLLM, llama.cpp server, LM Studio, Ollama's /v1), through
// github.com/sashabaranov/go-openai.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/msgcache"
	"github.com/agentrunner/runner/runner/model/internal/openaierr"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/runner/model/internal/wire"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// DefaultBaseURL is used when OPENAI_BASE_URL is not set.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Model: the model name, OPENAI_BASE_URL ("" means DefaultBaseURL),
// OPENAI_API_KEY (empty sends no Authorization header, for local servers).
type Config = model.ClientConfig

// Model talks to one model of an OpenAI-compatible server. It is safe for concurrent use.
type Model struct {
	cfg    Config
	client *goopenai.Client
	tools  toolcache.Cache[[]goopenai.Tool]
	msgs   msgcache.Cache // each message's encoding, for splicer
	splice bool           // go-openai's requests have the shape splicer needs
	// completionTokens sends the token cap as max_completion_tokens (see usesCompletionTokens).
	completionTokens bool
}

// New returns a Model for cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("openai: missing model name (e.g. openai:gpt-4o-mini)")
	}
	cfg = cfg.WithDefaults(DefaultBaseURL)
	conf := goopenai.DefaultConfig(cfg.APIKey)
	conf.BaseURL = cfg.BaseURL
	conf.HTTPClient = &splicer{next: wire.Client(cfg.HTTPClient, wire.ArgsString), host: cfg.BaseURL}
	return &Model{cfg: cfg, client: goopenai.NewClientWithConfig(conf), splice: canSplice(cfg.Model),
		completionTokens: usesCompletionTokens(cfg.BaseURL, cfg.Model)}, nil
}

// Name returns "openai:MODEL".
func (m *Model) Name() string { return "openai:" + m.cfg.Model }

// Host returns the base URL requests go to, credentials redacted (it is shown to people).
func (m *Model) Host() string { return model.RedactURL(m.cfg.BaseURL) }

// Step sends the conversation to /chat/completions.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	ctx, msgs := m.withConversation(ctx, req)
	creq, err := m.chatRequest(req, msgs)
	if err != nil {
		return nil, err
	}
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
		Content:    msg.Content,
		Model:      cresp.Model,
		StopReason: string(cresp.Choices[0].FinishReason),
		Usage:      usage(cresp.Usage),
	}
	for i, tc := range msg.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, toolCall(tc.ID, tc.Function.Name, tc.Function.Arguments, req, i))
	}
	return out, nil
}

// chatRequest translates a neutral request into go-openai's, with msgs as its messages.
func (m *Model) chatRequest(req *model.Request, msgs []goopenai.ChatCompletionMessage) (goopenai.ChatCompletionRequest, error) {
	creq := goopenai.ChatCompletionRequest{Model: m.cfg.Model, Messages: msgs}
	var err error
	if creq.Tools, err = m.tools.Get(req.Tools, renderTools); err != nil {
		return creq, err
	}
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
		if m.completionTokens {
			creq.MaxCompletionTokens = o.MaxTokens
		} else {
			creq.MaxTokens = o.MaxTokens //nolint:staticcheck // SA1019: max_tokens is what compatible servers understand; o1-series models take the branch above
		}
	}
	return creq, nil
}

// renderTools renders specs through the shared renderer, so every provider shows the
// model the same schemas. Each schema is encoded here, once: as json.RawMessage it is
// copied into every request instead of being encoded again by reflection.
func renderTools(specs []tools.Spec) ([]goopenai.Tool, error) {
	var out []goopenai.Tool
	for _, t := range format.OpenAI(specs) {
		fn, _ := t["function"].(map[string]any)
		name, _ := fn["name"].(string)
		desc, _ := fn["description"].(string)
		params, err := json.Marshal(fn["parameters"])
		if err != nil {
			return nil, fmt.Errorf("openai: render tool %s: %w", name, err)
		}
		out = append(out, goopenai.Tool{
			Type:     goopenai.ToolTypeFunction,
			Function: &goopenai.FunctionDefinition{Name: name, Description: desc, Parameters: json.RawMessage(params)},
		})
	}
	return out, nil
}

// usesCompletionTokens reports whether the token cap goes as max_completion_tokens rather
// than max_tokens. OpenAI (and Azure OpenAI) deprecated max_tokens for it, and their
// reasoning models (o1, o3, o4, gpt-5...) reject max_tokens with a 400, under whatever
// host serves them ("openai/o3-mini" at a gateway too). Other servers that copy the API
// (Ollama's /v1, older vLLM and llama.cpp) know only max_tokens, so they keep it.
func usesCompletionTokens(baseURL, name string) bool {
	if u, err := url.Parse(baseURL); err == nil {
		host := strings.ToLower(u.Hostname())
		if host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com") {
			return true
		}
	}
	name = strings.ToLower(name[strings.LastIndex(name, "/")+1:])
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// providerError maps go-openai's errors to a classified ProviderError.
func (m *Model) providerError(err error, capture *wire.Capture) error {
	return model.ClassifyError("openai", m.Host(), err, func(err error) error { return openaierr.Classify("openai", m.Host(), err, capture) })
}

// usage is runner's count of the server's: prompt_tokens includes the cached ones, which
// prompt_tokens_details says apart where the server does (OpenAI; most local servers not).
func usage(u goopenai.Usage) model.Usage {
	out := model.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedPromptTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}
