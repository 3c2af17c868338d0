package providers_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/model/retry"
)

func hello(text string) *model.Request {
	return &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: text}}}
}

// Every HTTP provider, opened by name with its variables from the environment, reaches
// its API on the fake server, which speaks each wire protocol, streamed or not.
func TestOpenEveryHTTPProviderFromItsVariables(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{fakellm.ToolCall("read_file", map[string]string{"path": "a"})}, Repeat: true})
	defer srv.Close()
	vars := map[string]string{
		"OPENAI_BASE_URL": srv.OpenAIURL(), "OPENAI_API_KEY": "sk-o",
		"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "sk-ant",
		"GEMINI_BASE_URL": srv.URL(), "GOOGLE_API_KEY": "g-key", // GEMINI_API_KEY's other name
	}
	for _, spec := range []string{"anthropic:claude-x", "gemini:gemini-x", "openai-responses:gpt-x", "openai:gpt-x"} {
		for _, stream := range []bool{false, true} {
			m, err := providers.Open(spec, providers.OpenOptions{Getenv: env(vars), Stream: stream})
			assert.NilError(t, err, spec)
			assert.Equal(t, m.Name(), spec)
			resp, err := m.Step(context.Background(), hello(spec))
			assert.NilError(t, err, "%s stream=%v", spec, stream)
			assert.Equal(t, resp.ToolCalls[0].Name, "read_file", spec)
			assert.NilError(t, providers.Check(context.Background(), m)) // none has a check
			info, err := providers.Probe(context.Background(), m)
			assert.NilError(t, err)
			assert.Assert(t, info == nil, "%s has no prober", spec)
			_, loads := providers.FindLoader(m)
			assert.Assert(t, !loads, "%s needs no loading", spec)
		}
	}
	reqs := srv.Requests()
	assert.Equal(t, len(reqs), 8)
	apis := map[string]int{}
	for _, r := range reqs {
		apis[r.API]++
	}
	assert.DeepEqual(t, apis, map[string]int{"anthropic": 2, "gemini": 2, "openai-responses": 2, "openai": 2})
}

// Ollama's models can be described and loaded ahead of the first request, through the
// retry and parser wrappers Open puts around them.
func TestProbeAndLoadReachOllamaThroughTheWrappers(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Models: map[string][]string{"qwen3:4b": {"completion", "tools"}}})
	defer srv.Close()
	m, err := providers.Open("ollama:qwen3:4b", providers.OpenOptions{Getenv: env(map[string]string{"OLLAMA_HOST": srv.URL()})})
	assert.NilError(t, err)
	info, err := providers.Probe(context.Background(), m)
	assert.NilError(t, err)
	assert.Assert(t, info != nil)
	l, ok := providers.FindLoader(m)
	assert.Assert(t, ok)
	load, err := l.Load(context.Background(), model.Options{})
	assert.NilError(t, err)
	assert.Assert(t, load.Loaded, "the fake lists no model before the load")

	missing, err := providers.Open("ollama:missing", providers.OpenOptions{Getenv: env(map[string]string{"OLLAMA_HOST": srv.URL()})})
	assert.NilError(t, err)
	_, err = providers.Probe(context.Background(), missing)
	assert.ErrorContains(t, err, "missing")
}

// What one run records with --record, another plays back with --replay (or replay:DIR),
// with no server; a cassette without recordings is refused by name.
func TestRecordThenReplay(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{fakellm.Text("recorded answer")}})
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "cassette")
	vars := env(map[string]string{"OPENAI_BASE_URL": srv.OpenAIURL()})
	m, err := providers.Open("openai:gpt-x", providers.OpenOptions{Getenv: vars, Record: dir, Scenario: "s1"})
	assert.NilError(t, err)
	resp, err := m.Step(context.Background(), hello("q"))
	assert.NilError(t, err)
	assert.Equal(t, resp.Content, "recorded answer")
	if c, ok := m.(interface{ Close() error }); ok {
		assert.NilError(t, c.Close())
	}
	srv.Close() // nothing may reach a server from here on

	for _, spec := range []string{"openai:gpt-x", "replay:" + dir} {
		o := providers.OpenOptions{Getenv: vars, Scenario: "s1"}
		if spec == "openai:gpt-x" {
			o.Replay = dir
		}
		m, err := providers.Open(spec, o)
		assert.NilError(t, err, spec)
		resp, err := m.Step(context.Background(), hello("q"))
		assert.NilError(t, err, spec)
		assert.Equal(t, resp.Content, "recorded answer", spec)
	}

	empty := t.TempDir()
	_, err = providers.Open("openai:gpt-x", providers.OpenOptions{Getenv: vars, Replay: empty})
	assert.ErrorContains(t, err, "replay cassette: cassette "+empty+" holds no recordings")
	_, err = providers.Open("replay:"+empty, providers.OpenOptions{Getenv: vars})
	assert.ErrorContains(t, err, "holds no recordings")
	_, err = providers.Open("mistral:x", providers.OpenOptions{Getenv: vars, Replay: dir})
	assert.ErrorContains(t, err, `unknown provider "mistral"`)
	_, err = providers.Open("replay:"+dir, providers.OpenOptions{Getenv: vars, Record: t.TempDir()})
	assert.ErrorContains(t, err, "cannot record a replay")
}

// A record directory that cannot be made fails the open, naming the cassette (the command
// line adds the flag).
func TestRecordIntoAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	assert.NilError(t, writeFile(file))
	_, err := providers.Open("oracle", providers.OpenOptions{Record: filepath.Join(file, "sub")})
	assert.ErrorContains(t, err, "record cassette: ")
}

func TestOpenRefusesAnUnknownToolCallParser(t *testing.T) {
	_, err := providers.Open("oracle", providers.OpenOptions{ToolCallParser: "nope"})
	assert.ErrorContains(t, err, `unknown tool call parser "nope" (want auto, native, hermes, json or off)`)
}

// A negative request timeout means none: a slow answer is waited for.
func TestNoRequestTimeout(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{{Text: "late", Delay: fakellm.Duration(50 * time.Millisecond)}}})
	defer srv.Close()
	m, err := providers.Open("openai:m", providers.OpenOptions{
		Getenv:         env(map[string]string{"OPENAI_BASE_URL": srv.OpenAIURL()}),
		RequestTimeout: -1,
		Retry:          retry.Options{RequestTimeout: time.Millisecond},
	})
	assert.NilError(t, err)
	resp, err := m.Step(context.Background(), hello("q"))
	assert.NilError(t, err)
	assert.Equal(t, resp.Content, "late")
}

func writeFile(path string) error { return os.WriteFile(path, []byte("x"), 0o644) }
