package ollama

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	ollamamodel "github.com/ollama/ollama/types/model"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
)

// Probe asks the server what the model is (/api/show, and /api/tags for the digest):
// capabilities, family, parameter size, quantization and context length. It fails as
// Check does when the server is unreachable or the model is not pulled; a model without
// tools is not an error here (Info.Tools says so), so a benchmark can report it.
func (m *Model) Probe(ctx context.Context) (model.Info, error) {
	show, err := m.client.Show(ctx, &api.ShowRequest{Model: m.cfg.Model})
	if err != nil {
		return model.Info{}, m.Check(ctx) // the same error, with its advice
	}
	info := model.Info{
		Family: show.Details.Family, ParameterSize: show.Details.ParameterSize,
		Quantization: show.Details.QuantizationLevel,
		// Servers before capabilities existed (Ollama < 0.6.4) send none: assume tools.
		Tools: len(show.Capabilities) == 0 || slices.Contains(show.Capabilities, ollamamodel.CapabilityTools),
	}
	for _, c := range show.Capabilities {
		info.Capabilities = append(info.Capabilities, string(c))
	}
	for k, v := range show.ModelInfo {
		// "<architecture>.context_length", e.g. "qwen3.context_length".
		if strings.HasSuffix(k, ".context_length") {
			if f, ok := v.(float64); ok {
				info.ContextLength = int(f)
			}
		}
	}
	info.Digest = m.digestOf(ctx)
	if v, err := m.client.Version(ctx); err == nil {
		info.ServerVersion = v
	}
	return info, nil
}

// digestOf returns the model's digest from /api/tags, asked once and remembered ("" when
// the server does not say).
func (m *Model) digestOf(ctx context.Context) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.digest != "" {
		return m.digest
	}
	if list, err := m.client.List(ctx); err == nil {
		for _, l := range list.Models {
			if sameModel(l.Name, m.cfg.Model) || sameModel(l.Model, m.cfg.Model) {
				m.digest = l.Digest
				break
			}
		}
	}
	return m.digest
}

// running finds the model among the loaded ones (/api/ps) by its digest: /api/ps can list
// one name twice (a model re-created while its old weights stay loaded). Without a digest
// it falls back to the name. nil when the model is not loaded.
func (m *Model) running(ctx context.Context) (*api.ProcessModelResponse, error) {
	ps, err := m.client.ListRunning(ctx)
	if err != nil {
		return nil, err
	}
	digest := m.digestOf(ctx)
	var byName *api.ProcessModelResponse
	for i, p := range ps.Models {
		named := sameModel(p.Name, m.cfg.Model) || sameModel(p.Model, m.cfg.Model)
		if digest != "" && p.Digest == digest && named {
			return &ps.Models[i], nil
		}
		if named && byName == nil && digest == "" {
			byName = &ps.Models[i]
		}
	}
	return byName, nil
}

// LoadedContext is the context length the loaded model runs with (/api/ps; 0 when it is
// not loaded or the server does not say): prompts longer than that are truncated.
func (m *Model) LoadedContext(ctx context.Context) (int, error) {
	p, err := m.running(ctx)
	if err != nil || p == nil {
		return 0, err
	}
	return p.ContextLength, nil
}

// Placement is where the server holds the model now (/api/ps): nil when it is not
// loaded.
func (m *Model) Placement(ctx context.Context) (*model.Placement, error) {
	p, err := m.running(ctx)
	if err != nil || p == nil {
		return nil, err
	}
	return &model.Placement{Size: p.Size, SizeVRAM: p.SizeVRAM, ContextLength: p.ContextLength}, nil
}

// Load has the server load the model with the options a request would carry (a chat
// request without messages: Ollama loads the model and answers done_reason "load"), so
// that no scenario's time holds the load. Whether the server did load it is read from
// /api/ps before and after, not guessed from load_duration, which every request has:
// the model was not listed, or listed with another placement or context.
func (m *Model) Load(ctx context.Context, opts model.Options) (model.Load, error) {
	out := model.Load{NumCtx: opts.NumCtx}
	before, err := m.Placement(ctx)
	if err != nil {
		before = nil // an older server without /api/ps: the load is then assumed
	}
	stream := false
	req := &api.ChatRequest{Model: m.cfg.Model, Messages: []api.Message{}, Stream: &stream, Options: options(opts)}
	if m.cfg.KeepAlive > 0 {
		req.KeepAlive = &api.Duration{Duration: m.cfg.KeepAlive}
	}
	start := time.Now()
	if err := m.client.Chat(ctx, req, func(api.ChatResponse) error { return nil }); err != nil {
		return out, model.Redacted(fmt.Errorf("ollama at %s: loading model %q: %w", m.Host(), m.cfg.Model, err))
	}
	// The server's answer to a load carries no load_duration: the request's own time is it.
	out.Duration = result.Millis(time.Since(start))
	after, err := m.Placement(ctx)
	if err == nil {
		out.Placement = after
	}
	out.Loaded = before == nil || after == nil || *before != *after
	return out, nil
}

// sameModel compares model names as Ollama does: "llama3.1" is "llama3.1:latest".
func sameModel(a, b string) bool {
	tag := func(s string) string {
		if !strings.Contains(s, ":") {
			return s + ":latest"
		}
		return s
	}
	return tag(a) == tag(b)
}
