package ollama

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"
	ollamamodel "github.com/ollama/ollama/types/model"

	"github.com/agentrunner/runner/runner/model"
)

// Check is the pre-flight before the first scenario: the server answers, the model is
// pulled, and its template supports tools. Each failure says what to do about it.
func (m *Model) Check(ctx context.Context) error {
	// The messages quote net/http's errors, which keep a lone user name of the URL.
	return model.Redacted(m.check(ctx))
}

func (m *Model) check(ctx context.Context) error {
	show, err := m.client.Show(ctx, &api.ShowRequest{Model: m.cfg.Model})
	if err != nil {
		var se api.StatusError
		if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
			return fmt.Errorf("ollama at %s has no model %q: run `ollama pull %s` (or set OLLAMA_HOST to the server that has it)",
				m.Host(), m.cfg.Model, m.cfg.Model)
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("ollama at %s: checking model %q: %w", m.Host(), m.cfg.Model, err)
		}
		if model.IsConnectionError(err) {
			return fmt.Errorf("cannot reach ollama at %s: %w; is `ollama serve` running? (set OLLAMA_HOST to use another server)",
				m.Host(), err)
		}
		return fmt.Errorf("ollama at %s: checking model %q: %w", m.Host(), m.cfg.Model, err)
	}
	// Servers before capabilities existed (Ollama < 0.6.4) send none: nothing to check.
	if len(show.Capabilities) > 0 && !slices.Contains(show.Capabilities, ollamamodel.CapabilityTools) {
		caps := make([]string, len(show.Capabilities))
		for i, c := range show.Capabilities {
			caps[i] = string(c)
		}
		return fmt.Errorf("ollama at %s: model %q does not support tools (capabilities: %s); pick a model with tool support, e.g. `ollama pull qwen3:4b`",
			m.Host(), m.cfg.Model, strings.Join(caps, ", "))
	}
	return nil
}
