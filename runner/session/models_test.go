package session

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/task"
)

// TestPreparedModelIsNotCheckedAgain: bench's preparation of a model (open, probe, first
// load) is its check; the turn's scenario options (Scenario, through Models.With) find
// it done and ask the server nothing more, where a model not prepared is checked.
func TestPreparedModelIsNotCheckedAgain(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Repeat: true})
	defer srv.Close()
	var shows atomic.Int32
	h := srv.Handler()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/show" {
			shows.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer front.Close()
	open := providers.OpenOptions{Retries: 1, Getenv: func(k string) string {
		if k == "OLLAMA_HOST" {
			return front.URL
		}
		return ""
	}}
	ctx := context.Background()
	models := NewModels("", open)
	p, err := models.Prepare(ctx, "ollama:m", 0)
	assert.NilError(t, err)
	assert.Assert(t, p.Probe != nil && p.Probe.Tools)
	assert.Assert(t, p.Loader != nil && p.First != nil, "ollama loads its models: the first load is done")
	assert.Equal(t, p.Probe.LoadedContext, p.First.Placement.ContextLength)
	asked := shows.Load()

	tasks := []*task.Task{{Name: "t", Path: "t.yaml"}}
	turn := models.With("ollama:m")
	assert.NilError(t, turn.Preflight(ctx, tasks))
	m, err := turn.ForTask(tasks[0], 1)
	assert.NilError(t, err)
	_, waits := m.(*checked)
	assert.Assert(t, !waits, "the prepared model waits for no check")
	assert.Equal(t, shows.Load(), asked, "the prepared model was checked again")

	other := models.With("ollama:other")
	assert.NilError(t, other.Preflight(ctx, tasks))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if shows.Load() > asked {
			return poll.Success()
		}
		return poll.Continue("no check of the model not prepared yet")
	}, poll.WithTimeout(10*time.Second))
}
