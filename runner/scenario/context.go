package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/agentrunner/runner/runner/model"
)

// loadedContexter is a model whose server can say the context length the loaded model
// runs with (Ollama's /api/ps), which truncates longer prompts silently.
type loadedContexter interface {
	LoadedContext(ctx context.Context) (int, error)
}

// contextWarning warns when the largest prompt reached the effective context: the task's
// num_ctx, else the loaded model's. Only servers that say their context length (Ollama)
// are checked: elsewhere num_ctx means nothing and a prompt too long is an error.
func contextWarning(ctx context.Context, m model.Model, numCtx, maxPrompt int) string {
	lc, ok := model.Find[loadedContexter](m)
	if !ok || maxPrompt == 0 {
		return ""
	}
	limit, from := numCtx, "model_options.num_ctx"
	if limit == 0 {
		// The scenario may have just timed out: the question gets its own short deadline.
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		n, err := lc.LoadedContext(qctx)
		if err != nil || n == 0 {
			return ""
		}
		limit, from = n, "the loaded model's, from /api/ps"
	}
	if maxPrompt < limit {
		return ""
	}
	return fmt.Sprintf("a prompt of %d tokens reached the context length %d (%s): Ollama truncates such a prompt silently, dropping its start (the system prompt and the tool definitions), and tool calling breaks; raise model_options.num_ctx",
		maxPrompt, limit, from)
}
