package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/ollama"
	"github.com/agentrunner/runner/runner/model/retry"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
)

func readFile() tools.Spec {
	return tools.Spec{
		Name:        "read_file",
		Description: "Read a file.",
		Parameters:  tools.Object(map[string]*tools.Schema{"path": tools.String("File path.")}, "path"),
	}
}

func ptr[T any](v T) *T { return &v }

func request() *model.Request {
	return &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You are an agent."},
			{Role: model.RoleUser, Content: "Read main.go."},
		},
		Tools:   []tools.Spec{readFile()},
		Options: model.Options{Temperature: ptr(0.0), Seed: ptr(1), NumCtx: 8192, MaxTokens: 100, TopP: ptr(0.5)},
	}
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func start(t *testing.T, script fakellm.Script) *fakellm.Server {
	t.Helper()
	srv := fakellm.Start(script)
	t.Cleanup(srv.Close)
	return srv
}

func open(t *testing.T, srv *fakellm.Server, stream bool) *ollama.Model {
	t.Helper()
	m, err := ollama.New(ollama.Config{Model: "qwen3:4b", Host: srv.URL(), Stream: stream})
	assert.NilError(t, err)
	return m
}

func withRetry(m model.Model, sl *sleeps, timeout time.Duration) model.Model {
	return retry.Wrap(m, retry.Options{Attempts: 3, RequestTimeout: timeout, BaseDelay: time.Millisecond, Sleep: sl.sleep})
}

func forBoth(t *testing.T, fn func(t *testing.T, stream bool)) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) { fn(t, stream) })
	}
}

func TestStepReturnsToolCallsAndUsage(t *testing.T) {
	forBoth(t, func(t *testing.T, stream bool) {
		srv := start(t, fakellm.Script{Replies: []fakellm.Reply{{
			Text: "Let me look at the file first.",
			ToolCalls: []fakellm.Call{
				fakellm.NewCall("read_file", map[string]any{"path": "main.go"}),
				{ID: "mine", Name: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
			},
			Usage: &fakellm.Usage{PromptTokens: 120, CompletionTokens: 30, EvalDuration: fakellm.Duration(time.Second / 2)},
		}}})
		m := open(t, srv, stream)
		assert.Equal(t, m.Name(), "ollama:qwen3:4b")

		resp, err := m.Step(context.Background(), request())
		assert.NilError(t, err)
		assert.Equal(t, resp.Content, "Let me look at the file first.")
		assert.Equal(t, len(resp.ToolCalls), 2)
		assert.Equal(t, resp.ToolCalls[0].ID, "call_1_1")
		assert.Equal(t, resp.ToolCalls[0].Name, "read_file")
		assert.Equal(t, string(resp.ToolCalls[0].Arguments), `{"path":"main.go"}`)
		assert.Equal(t, resp.ToolCalls[1].ID, "mine")
		assert.Equal(t, resp.Usage, model.Usage{PromptTokens: 120, CompletionTokens: 30, EvalDuration: result.Millis(time.Second / 2), TotalDuration: result.Millis(510 * time.Millisecond)})
		assert.Equal(t, resp.Usage.TokensPerSecond(), 60.0)
		assert.Equal(t, resp.Model, "qwen3:4b")

		reqs := srv.Requests()
		assert.Equal(t, len(reqs), 1)
		got := reqs[0]
		assert.Equal(t, got.API, "ollama")
		assert.Equal(t, got.Stream, stream)
		assert.Equal(t, got.Model, "qwen3:4b")
		assert.DeepEqual(t, got.Tools, []string{"read_file"})
		assert.DeepEqual(t, got.Options, map[string]any{
			"temperature": 0.0, "seed": 1.0, "num_ctx": 8192.0, "num_predict": 100.0, "top_p": 0.5,
		})
	})
}

func TestToolResultsGoBackWithIDAndName(t *testing.T) {
	srv := start(t, fakellm.Script{Replies: []fakellm.Reply{fakellm.Text("done")}})
	req := request()
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "call_1_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)},
			{ID: "call_1_2", Name: "read_file", Arguments: json.RawMessage(`"{\"path\":\"b.go\"}"`)},
		}},
		model.Message{Role: model.RoleTool, ToolCallID: "call_1_1", ToolName: "read_file", Content: "package main"},
		model.Message{Role: model.RoleTool, ToolCallID: "call_1_2", ToolName: "read_file", Content: "Error: File 'b.go' not found"},
	)
	resp, err := open(t, srv, false).Step(context.Background(), req)
	assert.NilError(t, err)
	assert.Equal(t, resp.Content, "done")
	assert.Equal(t, len(resp.ToolCalls), 0)

	sent := srv.Requests()[0].Messages
	assert.Equal(t, len(sent), 5)
	assert.Equal(t, string(sent[2].ToolCalls[0].Arguments), `{"path":"main.go"}`)
	assert.Equal(t, string(sent[2].ToolCalls[1].Arguments), `{"path":"b.go"}`) // a string holding an object goes back as the object
	assert.DeepEqual(t, sent[3], model.Message{Role: "tool", ToolCallID: "call_1_1", ToolName: "read_file", Content: "package main"})
	assert.Equal(t, sent[4].ToolCallID, "call_1_2")
}

func TestArgumentForms(t *testing.T) {
	forBoth(t, func(t *testing.T, stream bool) {
		asString := fakellm.ToolCall("read_file", map[string]any{"path": "a.go"})
		asString.ArgsAs = "string"
		srv := start(t, fakellm.Script{Replies: []fakellm.Reply{
			fakellm.ToolCall("read_file", map[string]any{"path": "a.go"}),
			asString,
			fakellm.MalformedArgs("read_file", `{"path": "a.go"`),
			fakellm.ToolCall("no_such_tool", map[string]any{}),
		}})
		m := open(t, srv, stream)
		want := []string{`{"path":"a.go"}`, `{"path":"a.go"}`, `"{\"path\": \"a.go\""`, `{}`}
		for i, w := range want {
			resp, err := m.Step(context.Background(), request())
			assert.NilError(t, err, "reply %d", i)
			assert.Equal(t, len(resp.ToolCalls), 1)
			assert.Equal(t, string(resp.ToolCalls[0].Arguments), w, "reply %d", i)
		}
		// The malformed arguments reach the registry as a string it rejects with a message.
		_, terr := tools.DecodeArgs(json.RawMessage(want[2]))
		assert.ErrorContains(t, terr, "not a valid JSON object")
	})
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name       string
		replies    []fakellm.Reply
		timeout    time.Duration
		wantErr    string
		wantServed int
		wantSleep  time.Duration // the longest backoff, when it matters
	}{
		{name: "500 then success", replies: []fakellm.Reply{fakellm.Status(500, "runner crashed"), fakellm.Text("ok")}, wantServed: 2},
		{name: "429 with Retry-After", replies: []fakellm.Reply{fakellm.TooMany("2"), fakellm.Text("ok")}, wantServed: 2, wantSleep: 2 * time.Second},
		{name: "dropped connection", replies: []fakellm.Reply{fakellm.Drop(), fakellm.Text("ok")}, wantServed: 2},
		{name: "truncated body", replies: []fakellm.Reply{{Fault: fakellm.FaultTruncate, Text: "a b c d e f"}, fakellm.Text("ok")}, wantServed: 2},
		{name: "malformed body is not retried", replies: []fakellm.Reply{fakellm.Malformed(), fakellm.Text("ok")},
			wantServed: 1, wantErr: "unexpected response"},
		{name: "400 is not retried", replies: []fakellm.Reply{fakellm.Status(400, "invalid tool schema"), fakellm.Text("ok")},
			wantServed: 1, wantErr: "HTTP 400 Bad Request: invalid tool schema"},
		{name: "500 every time", replies: []fakellm.Reply{fakellm.Status(502, "bad gateway")}, wantServed: 3,
			wantErr: "gave up after 3 attempts: ollama at http://127.0.0.1:"},
		{name: "request timeout", replies: []fakellm.Reply{{Text: "slow", Delay: fakellm.Duration(time.Minute)}},
			timeout: 50 * time.Millisecond, wantServed: 3, wantErr: "request timed out after 50ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			forBoth(t, func(t *testing.T, stream bool) {
				script := fakellm.Script{Replies: tc.replies, Repeat: tc.name == "500 every time" || tc.name == "request timeout"}
				srv := start(t, script)
				sl := &sleeps{}
				m := withRetry(open(t, srv, stream), sl, tc.timeout)
				resp, err := m.Step(context.Background(), request())
				assert.Equal(t, srv.Served(), tc.wantServed)
				if tc.wantSleep > 0 {
					assert.Equal(t, slices_max(sl.d), tc.wantSleep)
				}
				if tc.wantErr != "" {
					assert.ErrorContains(t, err, tc.wantErr)
					return
				}
				assert.NilError(t, err)
				assert.Equal(t, resp.Content, "ok")
			})
		})
	}
}

func slices_max(d []time.Duration) time.Duration {
	var m time.Duration
	for _, x := range d {
		m = max(m, x)
	}
	return m
}

func TestProviderErrorCarriesStatusAndRetryAfter(t *testing.T) {
	srv := start(t, fakellm.Script{Replies: []fakellm.Reply{fakellm.TooMany("3")}})
	_, err := open(t, srv, false).Step(context.Background(), request())
	var pe *model.ProviderError
	assert.Assert(t, errors.As(err, &pe), "%T %v", err, err)
	assert.Equal(t, pe.StatusCode, 429)
	assert.Equal(t, pe.RetryAfter, 3*time.Second)
	assert.Assert(t, pe.Temporary)
	assert.Equal(t, pe.Host, srv.URL())
}

func TestCheck(t *testing.T) {
	srv := start(t, fakellm.Script{Models: map[string][]string{
		"qwen3:4b":  {"completion", "tools", "thinking"},
		"gemma3:1b": {"completion", "vision"},
	}})
	check := func(name, host string) error {
		m, err := ollama.New(ollama.Config{Model: name, Host: host})
		assert.NilError(t, err)
		return m.Check(context.Background())
	}
	assert.NilError(t, check("qwen3:4b", srv.URL()))
	assert.Error(t, check("llama3.2", srv.URL()), fmt.Sprintf(
		"ollama at %s has no model \"llama3.2\": run `ollama pull llama3.2` (or set OLLAMA_HOST to the server that has it)", srv.URL()))
	assert.Error(t, check("gemma3:1b", srv.URL()), fmt.Sprintf(
		"ollama at %s: model \"gemma3:1b\" does not support tools (capabilities: completion, vision); pick a model with tool support, e.g. `ollama pull qwen3:4b`", srv.URL()))

	err := check("qwen3:4b", "127.0.0.1:1")
	assert.ErrorContains(t, err, "cannot reach ollama at http://127.0.0.1:1")
	assert.ErrorContains(t, err, "is `ollama serve` running?")
}

func TestHostURL(t *testing.T) {
	tests := map[string]string{
		"":                         "http://127.0.0.1:11434",
		"0.0.0.0":                  "http://0.0.0.0:11434",
		"example.com:8080":         "http://example.com:8080",
		"https://ollama.example":   "https://ollama.example:443",
		"http://[::1]:9999/prefix": "http://[::1]:9999/prefix",
		"http://host":              "http://host:80",
		"localhost:notaport":       "http://localhost:11434",
		"http://u:p%40w@host:1/x":  "http://u:p%40w@host:1/x", // kept for basic auth; Host() redacts it
		"tok@host":                 "http://tok@host:11434",
	}
	for in, want := range tests {
		assert.Equal(t, ollama.HostURL(in).String(), want, in)
	}
}

func TestNewNeedsAModelName(t *testing.T) {
	_, err := ollama.New(ollama.Config{})
	assert.ErrorContains(t, err, "missing model name")
}
