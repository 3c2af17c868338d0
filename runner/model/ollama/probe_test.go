package ollama_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/ollama"
)

func TestProbeAndLoad(t *testing.T) {
	srv := start(t, fakellm.Script{Models: map[string][]string{"qwen3:4b": {"completion", "tools"}, "chat:1b": {"completion"}}, ContextLength: 8192})
	ctx := context.Background()
	m := open(t, srv, false)
	info, err := m.Probe(ctx)
	assert.NilError(t, err)
	assert.Assert(t, info.Tools)
	assert.Equal(t, info.Family, "fake")
	assert.Equal(t, info.ParameterSize, "1B")
	assert.Equal(t, info.Quantization, "Q4_K_M")
	assert.Equal(t, info.ContextLength, 8192)
	assert.Equal(t, len(info.Digest), 64)
	assert.Equal(t, info.ServerVersion, "0.0.0-fakellm")
	p, err := m.Placement(ctx)
	assert.NilError(t, err)
	assert.Assert(t, p == nil, "not loaded yet")

	// The first load loads; asking again with the same options does not; other options do.
	ld, err := m.Load(ctx, model.Options{})
	assert.NilError(t, err)
	assert.Assert(t, ld.Loaded)
	assert.DeepEqual(t, ld.Placement, &model.Placement{Size: 1 << 30, SizeVRAM: 1 << 30, ContextLength: 8192})
	ld, err = m.Load(ctx, model.Options{})
	assert.NilError(t, err)
	assert.Assert(t, !ld.Loaded, "loaded so already: /api/ps is unchanged")
	ld, err = m.Load(ctx, model.Options{NumCtx: 2048})
	assert.NilError(t, err)
	assert.Assert(t, ld.Loaded)
	assert.Equal(t, ld.Placement.ContextLength, 2048)
	assert.Equal(t, srv.Loads(), 2, "the server's own count")
	assert.Equal(t, len(srv.Requests()), 0, "a load is no chat turn")
	srv.Unload("qwen3:4b")
	ld, err = m.Load(ctx, model.Options{NumCtx: 2048})
	assert.NilError(t, err)
	assert.Assert(t, ld.Loaded, "evicted meanwhile: loaded again")

	chat, err := ollama.New(ollama.Config{Model: "chat:1b", Host: srv.URL()})
	assert.NilError(t, err)
	info, err = chat.Probe(ctx)
	assert.NilError(t, err, "a model without tools is described, not an error")
	assert.Assert(t, !info.Tools)

	missing, err := ollama.New(ollama.Config{Model: "gone", Host: srv.URL()})
	assert.NilError(t, err)
	_, err = missing.Probe(ctx)
	assert.Assert(t, is.ErrorContains(err, "ollama pull gone"))
}

// fakeServer answers the given paths with fixed JSON, as Ollama would.
func fakeServer(t *testing.T, bodies map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestLoadedModelMatchedByDigest: /api/ps listed one name twice, an old model and the
// re-created one (issue 17, 2.6); the one with /api/tags' digest is the model's.
func TestLoadedModelMatchedByDigest(t *testing.T) {
	srv := fakeServer(t, map[string]string{
		"/api/tags": `{"models":[{"name":"bigram:latest","model":"bigram:latest","digest":"new"}]}`,
		"/api/ps": `{"models":[
			{"name":"bigram:latest","model":"bigram:latest","digest":"old","context_length":2048},
			{"name":"bigram:latest","model":"bigram:latest","digest":"new","context_length":8192}]}`,
	})
	m, err := ollama.New(ollama.Config{Model: "bigram", Host: srv.URL})
	assert.NilError(t, err)
	n, err := m.LoadedContext(context.Background())
	assert.NilError(t, err)
	assert.Equal(t, n, 8192)

	// Not loaded under its digest: unknown, not the old model's context.
	srv = fakeServer(t, map[string]string{
		"/api/tags": `{"models":[{"name":"bigram:latest","model":"bigram:latest","digest":"new"}]}`,
		"/api/ps":   `{"models":[{"name":"bigram:latest","model":"bigram:latest","digest":"old","context_length":2048}]}`,
	})
	m, err = ollama.New(ollama.Config{Model: "bigram", Host: srv.URL})
	assert.NilError(t, err)
	n, err = m.LoadedContext(context.Background())
	assert.NilError(t, err)
	assert.Equal(t, n, 0)
}

// TestStopReasonAndLoadDuration: done_reason and load_duration reach the response.
func TestStopReasonAndLoadDuration(t *testing.T) {
	srv := fakeServer(t, map[string]string{
		"/api/chat": `{"model":"bigram","message":{"role":"assistant","content":""},"done":true,"done_reason":"length",` +
			`"prompt_eval_count":90,"eval_count":1,"eval_duration":1000000,"load_duration":1500000000,"prompt_eval_duration":3000000,"total_duration":1600000000}`,
	})
	m, err := ollama.New(ollama.Config{Model: "bigram", Host: srv.URL})
	assert.NilError(t, err)
	resp, err := m.Step(context.Background(), request())
	assert.NilError(t, err)
	assert.Equal(t, resp.StopReason, model.StopLength)
	assert.Equal(t, resp.Usage.LoadDuration.Duration(), 1500*time.Millisecond)
	assert.Equal(t, resp.Usage.PromptEvalDuration.Duration(), 3*time.Millisecond)
	assert.Equal(t, resp.Usage.TotalDuration.Duration(), 1600*time.Millisecond)
}
