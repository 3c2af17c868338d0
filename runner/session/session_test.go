package session

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools/catalog"
)

func TestModelName(t *testing.T) {
	withModel := &task.Task{Model: "ollama:qwen3:4b"}
	assert.Equal(t, NewModels("", providers.OpenOptions{}).Name(withModel), "ollama:qwen3:4b")
	assert.Equal(t, NewModels("", providers.OpenOptions{}).Name(&task.Task{}), DefaultModel)
	assert.Equal(t, NewModels("openai:x", providers.OpenOptions{}).Name(withModel), "openai:x")
}

func TestPreflightBadName(t *testing.T) {
	err := NewModels("nosuchprovider:x", providers.OpenOptions{}).Preflight(t.Context(), []*task.Task{{}})
	var bad *BadNameError
	assert.Assert(t, errors.As(err, &bad), "got %v", err)
}

func TestLoadTasksFilter(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"alpha", "beta"} {
		body := "prompt: p\nreference:\n  - task_complete: {summary: done}\n"
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
	}
	reg := catalog.Default()
	tasks, err := LoadTasks([]string{dir}, reg, "^al", io.Discard)
	assert.NilError(t, err)
	assert.Equal(t, len(tasks), 1)
	assert.Equal(t, tasks[0].Name, "alpha")

	_, err = LoadTasks([]string{dir}, reg, "^zeta", io.Discard)
	assert.Assert(t, errors.Is(err, ErrNoMatch), "got %v", err)
	_, err = LoadTasks([]string{dir}, reg, "(", io.Discard)
	var fe *FilterError
	assert.Assert(t, errors.As(err, &fe), "got %v", err)
}

func TestPrepareCache(t *testing.T) {
	got, err := PrepareCache("")
	assert.NilError(t, err)
	assert.Equal(t, got, "")
	dir := filepath.Join(t.TempDir(), "a", "b")
	got, err = PrepareCache(dir)
	assert.NilError(t, err)
	assert.Equal(t, got, dir)
	st, err := os.Stat(dir)
	assert.NilError(t, err)
	assert.Assert(t, st.IsDir())
}

// Preflight returns before the model's check has answered; the model ForTask hands out
// meanwhile waits for the check in Ready and in Step, and a failed check is then the
// error of every later ForTask. No chat request is sent after a failed check.
func TestPreflightRunsInBackground(t *testing.T) {
	release := make(chan struct{})
	var chats atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			<-release
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		chats.Add(1)
		http.Error(w, "unexpected", http.StatusTeapot)
	}))
	defer srv.Close()
	env := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "k"}
	models := NewModels("openai:m", providers.OpenOptions{Getenv: func(k string) string { return env[k] }, Retries: 1})
	tk := &task.Task{Name: "t"}
	assert.NilError(t, models.Preflight(t.Context(), []*task.Task{tk}))

	m, err := models.ForTask(tk, 0)
	assert.NilError(t, err, "the check has not answered yet")
	rd, ok := m.(interface{ Ready(context.Context) error })
	assert.Assert(t, ok, "a model whose check is pending has Ready")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, rd.Ready(ctx), context.Canceled)

	close(release)
	err = rd.Ready(t.Context())
	assert.ErrorContains(t, err, "rejected the key")
	_, err = m.Step(t.Context(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	assert.ErrorContains(t, err, "rejected the key")
	assert.Equal(t, chats.Load(), int32(0))
	_, err = models.ForTask(tk, 0)
	assert.ErrorContains(t, err, "rejected the key")
}

// TestPrepareOut is the rule of the output directory, case by case.
func TestPrepareOut(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	// Missing, then empty, then holding only an empty directory (made for the kept
	// workspaces): used as it is.
	dir := filepath.Join(root, "out")
	for i := range 3 {
		moved, err := PrepareOut(dir, false)
		assert.NilError(t, err)
		assert.Equal(t, moved, "")
		if i == 1 {
			assert.NilError(t, os.MkdirAll(filepath.Join(dir, "workspaces", "a"), 0o755))
		}
	}
	_, err := os.Stat(filepath.Join(dir, "workspaces", "a"))
	assert.NilError(t, err)
	assert.NilError(t, os.RemoveAll(filepath.Join(dir, "workspaces")))
	// A run's (its manifest) is moved aside; so is bench's (a manifest per model folder).
	for _, marker := range []string{merge.ManifestFile, "ollama-qwen3/" + merge.ManifestFile, "bench.json"} {
		write(filepath.Join(dir, marker), "")
		write(filepath.Join(dir, "x", "result.json"), marker)
		moved, err := PrepareOut(dir, false)
		assert.NilError(t, err, marker)
		assert.Equal(t, moved, dir+PrevSuffix)
		b, err := os.ReadFile(filepath.Join(moved, "x", "result.json"))
		assert.NilError(t, err)
		assert.Equal(t, string(b), marker, "the last run is the one kept")
		entries, err := os.ReadDir(dir)
		assert.NilError(t, err)
		assert.Equal(t, len(entries), 0)
	}
	// Resumed: kept as it is.
	write(filepath.Join(dir, merge.ManifestFile), "")
	moved, err := PrepareOut(dir, true)
	assert.NilError(t, err)
	assert.Equal(t, moved, "")
	_, err = os.Stat(filepath.Join(dir, merge.ManifestFile))
	assert.NilError(t, err)
	// A .prev that is not runner's is never removed.
	assert.NilError(t, os.RemoveAll(dir+PrevSuffix))
	write(filepath.Join(dir+PrevSuffix, "thesis.tex"), "mine")
	_, err = PrepareOut(dir, false)
	assert.Assert(t, errors.Is(err, ErrNotOutput), "%v", err)
	_, err = os.Stat(filepath.Join(dir+PrevSuffix, "thesis.tex"))
	assert.NilError(t, err)
	// Nor is a directory of other files: refused.
	home := filepath.Join(root, "home")
	write(filepath.Join(home, ".bashrc"), "")
	_, err = PrepareOut(home, false)
	assert.Assert(t, errors.Is(err, ErrNotOutput), "%v", err)
	assert.ErrorContains(t, err, "is not empty and holds no runner output")
}
