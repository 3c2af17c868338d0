package scenario

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
)

// ollamaLike reports a loaded context, as ollama.Model does from /api/ps.
type ollamaLike struct {
	model.Model
	loaded int
	asked  int
}

func (o *ollamaLike) LoadedContext(context.Context) (int, error) { o.asked++; return o.loaded, nil }

type wrapper struct{ model.Model }

func (w wrapper) Unwrap() model.Model { return w.Model }

// TestContextWarning: issue 17, 2.4: `run` warns when the largest prompt reached the
// effective context (the task's num_ctx, else the loaded model's), through wrappers.
func TestContextWarning(t *testing.T) {
	ctx := context.Background()
	o := &ollamaLike{loaded: 4096}
	m := wrapper{o}

	w := contextWarning(ctx, m, 1024, 1024)
	assert.Check(t, is.Contains(w, "a prompt of 1024 tokens reached the context length 1024 (model_options.num_ctx)"))
	assert.Check(t, is.Contains(w, "dropping its start (the system prompt and the tool definitions)"))
	assert.Equal(t, o.asked, 0, "num_ctx given: no need to ask the server")

	assert.Equal(t, contextWarning(ctx, m, 0, 4000), "")
	assert.Check(t, is.Contains(contextWarning(ctx, m, 0, 4096), "context length 4096 (the loaded model's, from /api/ps)"))

	// A provider without a context to ask (OpenAI, the oracle) is never warned about.
	assert.Equal(t, contextWarning(ctx, wrapper{nil}, 1024, 5000), "")
}
