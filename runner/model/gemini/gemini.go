// Package gemini is the model provider for Google's Gemini API: generateContent, or
// streamGenerateContent as server-sent events, spoken over plain net/http with types of
// its own. Tools are function declarations rendered by tools/format; calls are
// functionCall parts and results go back as functionResponse parts.
//
// The official SDK (google.golang.org/genai) is not linked into the runner: its
// dependencies (grpc, opencensus, s2a, protobuf...) cost about 3 ms of every runner start,
// Gemini used or not, and 12 MB of binary. It is this package's test oracle instead:
// conformance_test.go sends the same conversations through both and holds this client to
// the SDK's requests, and to the SDK's reading of the same responses.
package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
)

// DefaultBaseURL is used when GEMINI_BASE_URL is not set.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// apiVersion is the SDK's API version for the Gemini API.
const apiVersion = "v1beta"

// Config configures a Model: the model name, GEMINI_BASE_URL ("" means DefaultBaseURL), GEMINI_API_KEY.
type Config = model.ClientConfig

// Model talks to one Gemini model. It is safe for concurrent use.
type Model struct {
	cfg Config
	// generateURL and streamURL are the two endpoints, built once.
	generateURL, streamURL string
	tools                  toolcache.Cache[json.RawMessage]

	// signatures keeps the thoughtSignature of each call the model made, by call id:
	// thinking models want it back with the call in later requests, and the neutral
	// conversation has no place for it.
	mu         sync.Mutex
	signatures map[string][]byte
}

// New returns a Model for cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("gemini: missing model name (e.g. gemini:gemini-2.5-flash)")
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("gemini: GEMINI_API_KEY is not set")
	}
	// The SDK refuses these at every request; a name cannot change, so say it now.
	if strings.ContainsAny(cfg.Model, "?&") || strings.Contains(cfg.Model, "..") {
		return nil, fmt.Errorf("gemini: invalid model name %q", cfg.Model)
	}
	cfg = cfg.WithDefaults(DefaultBaseURL)
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		// Not wrapped: url's error quotes the URL, password and all.
		return nil, fmt.Errorf("gemini: GEMINI_BASE_URL %s is not a URL", model.RedactURL(cfg.BaseURL))
	}
	// The SDK's model resource name and URL: BASE/v1beta/models/NAME:METHOD.
	name := cfg.Model
	if !strings.HasPrefix(name, "models/") && !strings.HasPrefix(name, "tunedModels/") {
		name = "models/" + name
	}
	endpoint := func(method, query string) string {
		u := base.JoinPath(apiVersion + "/" + name + ":" + method)
		u.RawQuery = query
		return u.String()
	}
	return &Model{
		cfg:         cfg,
		generateURL: endpoint("generateContent", ""),
		streamURL:   endpoint("streamGenerateContent", "alt=sse"),
		signatures:  map[string][]byte{},
	}, nil
}

// Name returns "gemini:MODEL".
func (m *Model) Name() string { return "gemini:" + m.cfg.Model }

// Host returns the base URL requests go to, credentials redacted (it is shown to people).
func (m *Model) Host() string { return model.RedactURL(m.cfg.BaseURL) }

// Step sends the conversation to generateContent (or streamGenerateContent).
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	body, err := m.request(req)
	if err != nil {
		return nil, err
	}
	acc := &accumulator{m: m, step: req.Step()}
	if m.cfg.Stream {
		err = m.stream(ctx, body, acc)
	} else {
		err = m.generate(ctx, body, acc)
	}
	if err != nil {
		return nil, m.providerError(err)
	}
	return &acc.out, nil
}

// generate asks generateContent, again with the continuation token for as long as the
// answer says it stopped early, as the SDK's GenerateContent does.
func (m *Model) generate(ctx context.Context, body *generateRequest, acc *accumulator) error {
	var total *usageMetadata
	for hop := 0; ; hop++ {
		resp, err := m.generateOnce(ctx, body)
		if err != nil {
			return err
		}
		total = total.plus(resp.UsageMetadata)
		resp.UsageMetadata = total
		if hop > 0 && len(resp.Candidates) == 0 {
			// The SDK merges a continuation without candidates into the answer so far.
			resp.PromptFeedback = nil
		}
		if err := acc.add(resp); err != nil {
			return err
		}
		if hop == 0 && len(resp.Candidates) == 0 {
			return &model.ProviderError{Provider: "gemini", Host: m.Host(), Message: "unexpected response: no candidates"}
		}
		token := continuation(resp)
		if token == nil {
			return nil
		}
		if hop+1 >= maxHops {
			return &badResponse{fmt.Errorf("the answer still asked to be continued after %d requests", maxHops)}
		}
		body.ContinuationToken = token
	}
}

// generateOnce makes one generateContent request.
func (m *Model) generateOnce(ctx context.Context, body *generateRequest) (*generateResponse, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("gemini: encode request: %w", err)
	}
	resp, err := m.post(ctx, m.generateURL, b)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil, statusError(resp)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		// A body cut short is a failed connection, whatever half of it would parse as.
		return nil, fmt.Errorf("read response body: %w", err)
	}
	var out generateResponse
	if len(raw) > 0 { // an empty body is an answer without candidates, as in the SDK
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, &badResponse{fmt.Errorf("decode generateContent response: %w", err)}
		}
	}
	return &out, nil
}

// accumulator gathers the answer from one response, or from the events of a stream.
type accumulator struct {
	m    *Model
	step int
	out  model.Response
	// finished is set by the finish reason that ends an answer.
	finished bool
}

// add takes in one response: its usage (a running total), text and calls. Thoughts are
// not part of the answer.
func (a *accumulator) add(r *generateResponse) error {
	if r.ModelVersion != "" {
		a.out.Model = r.ModelVersion
	}
	if u := r.UsageMetadata; u != nil {
		a.out.Usage = model.Usage{PromptTokens: int(u.PromptTokenCount), CompletionTokens: int(u.CandidatesTokenCount),
			CachedPromptTokens: int(u.CachedContentTokenCount)}
	}
	if len(r.Candidates) == 0 {
		if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
			return &model.ProviderError{Provider: "gemini", Host: a.m.Host(),
				Message: strings.TrimSpace("prompt blocked: " + pf.BlockReason + " " + pf.BlockReasonMessage)}
		}
		return nil
	}
	c := &r.Candidates[0]
	a.finished = a.finished || c.FinishReason != ""
	if c.Content == nil {
		return nil
	}
	for i := range c.Content.Parts {
		p := &c.Content.Parts[i]
		switch {
		case p.FunctionCall != nil:
			a.out.ToolCalls = append(a.out.ToolCalls, a.m.toolCall(p, a.step, len(a.out.ToolCalls)))
		case p.Text != "" && !p.Thought:
			a.out.Content += p.Text
		}
	}
	return nil
}
