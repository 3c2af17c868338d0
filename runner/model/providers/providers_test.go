package providers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/anthropic"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/gemini"
	"github.com/agentrunner/runner/runner/model/openai"
	"github.com/agentrunner/runner/runner/model/openairesponses"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/model/retry"
)

func TestSplit(t *testing.T) {
	tests := []struct{ in, provider, name string }{
		{"ollama:qwen3:4b", "ollama", "qwen3:4b"},
		{"openai:gpt-4o-mini", "openai", "gpt-4o-mini"},
		{"oracle", "oracle", ""},
		{" OLLAMA:llama3.2 ", "ollama", "llama3.2"},
		{"openai:org/model:v1", "openai", "org/model:v1"},
	}
	for _, tc := range tests {
		p, n := providers.Split(tc.in)
		assert.Equal(t, p, tc.provider, tc.in)
		assert.Equal(t, n, tc.name, tc.in)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := map[string]string{
		"":               "no model given: use PROVIDER:MODEL, e.g. ollama:qwen3:4b (providers: anthropic, gemini, ollama, openai, openai-responses, oracle, replay)",
		"mistral:x":      `model "mistral:x": unknown provider "mistral"; did you mean "ollama:mistral:x" (an Ollama model NAME:TAG)? (providers: anthropic, gemini, ollama, openai, openai-responses, oracle, replay)`,
		"olama:qwen3:4b": `model "olama:qwen3:4b": unknown provider "olama"; did you mean "ollama:qwen3:4b"? (providers: anthropic, gemini, ollama, openai, openai-responses, oracle, replay)`,
		"qwen3:4b":       `model "qwen3:4b": unknown provider "qwen3"; did you mean "ollama:qwen3:4b" (an Ollama model NAME:TAG)? (providers: anthropic, gemini, ollama, openai, openai-responses, oracle, replay)`,
		"anthropic:x":    `model "anthropic:x": anthropic: ANTHROPIC_API_KEY is not set`,
		"qwen3":          `model "qwen3" has no provider: use PROVIDER:MODEL, e.g. ollama:qwen3 (providers: anthropic, gemini, ollama, openai, openai-responses, oracle, replay)`,
		"ollama:":        `model "ollama:": ollama: missing model name (e.g. ollama:qwen3:4b)`,
		"openai:":        `model "openai:": openai: missing model name (e.g. openai:gpt-4o-mini)`,
		"oracle:gpt-4o":  `model "oracle:gpt-4o": oracle option "gpt-4o": want KEY=VALUE (oracle:fail=0.3,seed=1)`,
		"oracle:fail=2":  `model "oracle:fail=2": oracle option fail=2: want a share between 0 and 1`,
		"oracle:seed=1":  `model "oracle:seed=1": oracle options "seed=1": fail= is required (oracle:fail=0.3,seed=1)`,
		"replay:":        `model "replay:": name the cassette directory: replay:DIR`,
	}
	for spec, want := range tests {
		_, err := providers.Open(spec, providers.OpenOptions{Getenv: env(nil)})
		assert.Error(t, err, want, spec)
	}
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// Open reads the host and key from the environment, wraps the model with retries (a 500
// is retried with the injected backoff) and Check reaches the provider through the wrapper.
func TestOpenProviders(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{
		Replies: []fakellm.Reply{fakellm.Status(500, "try again"), fakellm.ToolCall("read_file", map[string]string{"path": "a"})},
		Models:  map[string][]string{"qwen3:4b": {"completion", "tools"}},
	})
	defer srv.Close()
	var slept []time.Duration
	opts := providers.OpenOptions{
		Getenv:  env(map[string]string{"OLLAMA_HOST": srv.URL(), "OPENAI_BASE_URL": srv.OpenAIURL(), "OPENAI_API_KEY": "sk-x"}),
		Retries: 2,
		Retry: retry.Options{Sleep: func(ctx context.Context, d time.Duration) error {
			slept = append(slept, d)
			return nil
		}, BaseDelay: time.Millisecond},
	}
	for _, spec := range []string{"ollama:qwen3:4b", "openai:qwen3:4b"} {
		for _, stream := range []bool{false, true} {
			opts.Stream = stream
			m, err := providers.Open(spec, opts)
			assert.NilError(t, err)
			assert.Equal(t, m.Name(), spec)
			assert.NilError(t, providers.Check(context.Background(), m))
			resp, err := m.Step(context.Background(), &model.Request{Messages: []model.Message{{Role: "user", Content: fmt.Sprint(spec, stream)}}})
			assert.NilError(t, err, spec)
			assert.Equal(t, resp.ToolCalls[0].Name, "read_file")
		}
	}
	assert.Equal(t, len(slept), 4)

	m, err := providers.Open("ollama:missing", opts)
	assert.NilError(t, err)
	assert.ErrorContains(t, providers.Check(context.Background(), m), "ollama pull missing")
}

func TestOpenOracle(t *testing.T) {
	m, err := providers.Open("oracle", providers.OpenOptions{Reference: []model.ToolCall{
		{Name: "task_complete", Arguments: json.RawMessage(`{"summary":"ok"}`)},
	}})
	assert.NilError(t, err)
	assert.Equal(t, m.Name(), "oracle")
	assert.NilError(t, providers.Check(context.Background(), m)) // nothing to check
	resp, err := m.Step(context.Background(), &model.Request{})
	assert.NilError(t, err)
	assert.Equal(t, resp.ToolCalls[0].ID, "oracle_1")
}

func TestRequestTimeoutOption(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{{Text: "late", Delay: fakellm.Duration(time.Minute)}}, Repeat: true})
	defer srv.Close()
	m, err := providers.Open("openai:m", providers.OpenOptions{
		Getenv:         env(map[string]string{"OPENAI_BASE_URL": srv.OpenAIURL()}),
		RequestTimeout: 20 * time.Millisecond,
		Retries:        2,
		Retry:          retry.Options{Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	assert.NilError(t, err)
	_, err = m.Step(context.Background(), &model.Request{})
	assert.ErrorContains(t, err, "gave up after 2 attempts: openai at "+srv.OpenAIURL()+": request timed out after 20ms")
}

// TestHostRedactsCredentials: the host every provider names in its errors and checks is
// shown to people and written to reports, so a password in a *_BASE_URL never appears.
func TestHostRedactsCredentials(t *testing.T) {
	const base = "http://alice:s3cret@127.0.0.1:9/v1"
	cfg := model.ClientConfig{Model: "m", APIKey: "k", BaseURL: base}
	hosts := map[string]func() (interface{ Host() string }, error){
		"openai":           func() (interface{ Host() string }, error) { return openai.New(cfg) },
		"openai-responses": func() (interface{ Host() string }, error) { return openairesponses.New(cfg) },
		"anthropic":        func() (interface{ Host() string }, error) { return anthropic.New(cfg) },
		"gemini":           func() (interface{ Host() string }, error) { return gemini.New(cfg) },
	}
	for name, open := range hosts {
		m, err := open()
		assert.NilError(t, err, name)
		host := m.Host()
		assert.Check(t, !strings.Contains(host, "s3cret"), "%s: %s", name, host)
		assert.Check(t, strings.Contains(host, "127.0.0.1:9"), "%s: %s", name, host)
	}
}

// CheckName agrees with Open on every name whose provider is wrong, and passes the names
// Open accepts, without building a client.
func TestCheckNameAgreesWithOpen(t *testing.T) {
	for _, spec := range []string{"", "qwen3", "nosuch:model", "OLLAMA:qwen3:4b", "oracle", "openai:gpt-4o", "gemini:x", "anthropic:c"} {
		_, openErr := providers.Open(spec, providers.OpenOptions{Getenv: func(string) string { return "" }})
		err := providers.CheckName(spec)
		if err == nil {
			continue
		}
		if openErr == nil {
			t.Errorf("%q: CheckName refuses (%v) what Open accepts", spec, err)
			continue
		}
		if err.Error() != openErr.Error() {
			t.Errorf("%q: CheckName says %q, Open %q", spec, err, openErr)
		}
	}
	for _, spec := range []string{"", "qwen3", "nosuch:model"} {
		if providers.CheckName(spec) == nil {
			t.Errorf("%q: CheckName accepts a name without a known provider", spec)
		}
	}
}

func TestSplitListKeepsOptionsWithTheirName(t *testing.T) {
	assert.DeepEqual(t, providers.SplitList("oracle,oracle:fail=0.3,seed=1", " ollama:a ,ollama:a", "", "openai:b"),
		[]string{"oracle", "oracle:fail=0.3,seed=1", "ollama:a", "openai:b"})
}
