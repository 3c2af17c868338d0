package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/openai"
	"github.com/agentrunner/runner/runner/model/retry"
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

func (s *sleeps) max() time.Duration {
	var m time.Duration
	for _, x := range s.d {
		m = max(m, x)
	}
	return m
}

func start(t *testing.T, script fakellm.Script) *fakellm.Server {
	t.Helper()
	srv := fakellm.Start(script)
	t.Cleanup(srv.Close)
	return srv
}

func open(t *testing.T, srv *fakellm.Server, stream bool) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "gpt-4o-mini", BaseURL: srv.OpenAIURL(), Stream: stream})
	assert.NilError(t, err)
	return m
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
			Usage: &fakellm.Usage{PromptTokens: 120, CompletionTokens: 30, CachedPromptTokens: 100},
		}}})
		m := open(t, srv, stream)
		assert.Equal(t, m.Name(), "openai:gpt-4o-mini")

		resp, err := m.Step(context.Background(), request())
		assert.NilError(t, err)
		assert.Equal(t, resp.Content, "Let me look at the file first.")
		assert.Equal(t, len(resp.ToolCalls), 2)
		assert.DeepEqual(t, resp.ToolCalls[0], model.ToolCall{ID: "call_1_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)})
		assert.Equal(t, resp.ToolCalls[1].ID, "mine")
		assert.Equal(t, string(resp.ToolCalls[1].Arguments), `{"path":"go.mod"}`)
		assert.Equal(t, resp.Usage, model.Usage{PromptTokens: 120, CompletionTokens: 30, CachedPromptTokens: 100})
		assert.Equal(t, resp.Model, "gpt-4o-mini")

		got := srv.Requests()[0]
		assert.Equal(t, got.API, "openai")
		assert.Equal(t, got.Stream, stream)
		assert.Equal(t, got.Model, "gpt-4o-mini")
		assert.DeepEqual(t, got.Tools, []string{"read_file"})
		assert.DeepEqual(t, got.Options, map[string]any{
			"temperature": float32(math.SmallestNonzeroFloat32), "seed": 1, "max_tokens": 100, "top_p": float32(0.5),
		})
	})
}

func TestToolResultsGoBackUnderTheirCallID(t *testing.T) {
	srv := start(t, fakellm.Script{Replies: []fakellm.Reply{fakellm.Text("done")}})
	req := request()
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)},
			{ID: "call_b", Name: "read_file", Arguments: json.RawMessage(`"{bad"`)},
		}},
		model.Message{Role: model.RoleTool, ToolCallID: "call_a", ToolName: "read_file", Content: "package main"},
		model.Message{Role: model.RoleTool, ToolCallID: "call_b", ToolName: "read_file", Content: "Error: Arguments are not valid JSON"},
	)
	resp, err := open(t, srv, false).Step(context.Background(), req)
	assert.NilError(t, err)
	assert.Equal(t, resp.Content, "done")

	sent := srv.Requests()[0].Messages
	assert.Equal(t, len(sent), 5)
	// Arguments go back as the string the model wrote, malformed ones included.
	assert.Equal(t, string(sent[2].ToolCalls[0].Arguments), `"{\"path\":\"main.go\"}"`)
	assert.Equal(t, string(sent[2].ToolCalls[1].Arguments), `"{bad"`)
	assert.Equal(t, sent[3].ToolCallID, "call_a")
	assert.Equal(t, sent[3].Content, "package main")
	assert.Equal(t, sent[4].ToolCallID, "call_b")
}

func TestArgumentForms(t *testing.T) {
	forBoth(t, func(t *testing.T, stream bool) {
		asObject := fakellm.ToolCall("read_file", map[string]any{"path": "a.go", "n": json.Number("12345678901234567890")})
		asObject.ArgsAs = "object"
		srv := start(t, fakellm.Script{Replies: []fakellm.Reply{
			fakellm.ToolCall("read_file", map[string]any{"path": "a.go"}),
			asObject,
			fakellm.MalformedArgs("read_file", `{"path": "a.go"`),
			fakellm.ToolCall("no_such_tool", map[string]any{}),
		}})
		m := open(t, srv, stream)
		want := []string{`{"path":"a.go"}`, `{"n":12345678901234567890,"path":"a.go"}`, `"{\"path\": \"a.go\""`, `{}`}
		for i, w := range want {
			resp, err := m.Step(context.Background(), request())
			assert.NilError(t, err, "reply %d", i)
			assert.Equal(t, len(resp.ToolCalls), 1)
			assert.Equal(t, string(resp.ToolCalls[0].Arguments), w, "reply %d", i)
		}
		_, terr := tools.DecodeArgs(json.RawMessage(want[2]))
		assert.ErrorContains(t, terr, "not a valid JSON object")
	})
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name       string
		replies    []fakellm.Reply
		repeat     bool
		timeout    time.Duration
		wantErr    string
		wantServed int
		wantSleep  time.Duration
	}{
		{name: "500 then success", replies: []fakellm.Reply{fakellm.Status(500, "overloaded"), fakellm.Text("ok")}, wantServed: 2},
		{name: "429 with Retry-After", replies: []fakellm.Reply{fakellm.TooMany("2"), fakellm.Text("ok")}, wantServed: 2, wantSleep: 2 * time.Second},
		{name: "dropped connection", replies: []fakellm.Reply{fakellm.Drop(), fakellm.Text("ok")}, wantServed: 2},
		{name: "truncated body", replies: []fakellm.Reply{{Fault: fakellm.FaultTruncate, Text: "a b c d e f"}, fakellm.Text("ok")}, wantServed: 2},
		{name: "malformed body is not retried", replies: []fakellm.Reply{fakellm.Malformed(), fakellm.Text("ok")},
			wantServed: 1, wantErr: "unexpected response"},
		{name: "400 is not retried", replies: []fakellm.Reply{fakellm.Status(400, "tools[0].function.parameters is invalid"), fakellm.Text("ok")},
			wantServed: 1, wantErr: "HTTP 400 Bad Request: tools[0].function.parameters is invalid"},
		{name: "401 is not retried", replies: []fakellm.Reply{fakellm.Status(401, "Incorrect API key provided"), fakellm.Text("ok")},
			wantServed: 1, wantErr: "HTTP 401 Unauthorized: Incorrect API key provided"},
		{name: "503 every time", replies: []fakellm.Reply{fakellm.Status(503, "no capacity")}, repeat: true, wantServed: 3,
			wantErr: "gave up after 3 attempts: openai at http://127.0.0.1:"},
		{name: "request timeout", replies: []fakellm.Reply{{Text: "slow", Delay: fakellm.Duration(time.Minute)}}, repeat: true,
			timeout: 50 * time.Millisecond, wantServed: 3, wantErr: "request timed out after 50ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			forBoth(t, func(t *testing.T, stream bool) {
				srv := start(t, fakellm.Script{Replies: tc.replies, Repeat: tc.repeat})
				sl := &sleeps{}
				m := retry.Wrap(open(t, srv, stream), retry.Options{
					Attempts: 3, RequestTimeout: tc.timeout, BaseDelay: time.Millisecond, Sleep: sl.sleep,
				})
				resp, err := m.Step(context.Background(), request())
				assert.Equal(t, srv.Served(), tc.wantServed)
				if tc.wantSleep > 0 {
					assert.Equal(t, sl.max(), tc.wantSleep)
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

func TestProviderErrorCarriesStatusAndRetryAfter(t *testing.T) {
	srv := start(t, fakellm.Script{Replies: []fakellm.Reply{fakellm.TooMany("3")}})
	_, err := open(t, srv, true).Step(context.Background(), request())
	var pe *model.ProviderError
	assert.Assert(t, errors.As(err, &pe), "%T %v", err, err)
	assert.Equal(t, pe.StatusCode, 429)
	assert.Equal(t, pe.RetryAfter, 3*time.Second)
	assert.Assert(t, pe.Temporary)
	assert.Equal(t, pe.Message, "rate limit exceeded")
	assert.Equal(t, pe.Host, srv.OpenAIURL())
}

// A server whose error body is not OpenAI's shape (a proxy's HTML page) still gives a
// classified error with the body as the message.
func TestNonJSONErrorBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "Wed, 21 Oct 2099 07:28:00 GMT")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html>502 Bad Gateway</html>"))
	}))
	defer srv.Close()
	m, err := openai.New(openai.Config{Model: "m", BaseURL: srv.URL + "/v1/"})
	assert.NilError(t, err)
	_, err = m.Step(context.Background(), request())
	var pe *model.ProviderError
	assert.Assert(t, errors.As(err, &pe), "%T %v", err, err)
	assert.Equal(t, pe.StatusCode, 502)
	assert.Equal(t, pe.Message, "<html>502 Bad Gateway</html>")
	assert.Assert(t, pe.Temporary)
	assert.Assert(t, pe.RetryAfter > time.Hour) // an HTTP date, far away (the wrapper caps it)
	assert.Equal(t, pe.Host, srv.URL+"/v1")
}

func TestAPIKeyIsSentOnlyWhenSet(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	fake := fakellm.New(fakellm.Script{Replies: []fakellm.Reply{fakellm.Text("a"), fakellm.Text("b")}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		fake.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	for _, key := range []string{"sk-test", ""} {
		m, err := openai.New(openai.Config{Model: "m", BaseURL: srv.URL + "/v1", APIKey: key})
		assert.NilError(t, err)
		_, err = m.Step(context.Background(), request())
		assert.NilError(t, err)
	}
	assert.DeepEqual(t, auth, []string{"Bearer sk-test", ""})
}

func TestNewDefaultsAndErrors(t *testing.T) {
	m, err := openai.New(openai.Config{Model: "gpt-4o-mini"})
	assert.NilError(t, err)
	assert.Equal(t, m.Host(), openai.DefaultBaseURL)
	_, err = openai.New(openai.Config{})
	assert.ErrorContains(t, err, "missing model name")
}

// toServer sends every request to srv, whatever host its URL names.
type toServer struct{ srv *fakellm.Server }

func (r toServer) RoundTrip(req *http.Request) (*http.Response, error) {
	u, err := url.Parse(r.srv.OpenAIURL())
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = u.Scheme, u.Host
	return http.DefaultTransport.RoundTrip(req)
}

// OpenAI's reasoning models reject max_tokens ("Unsupported parameter: 'max_tokens' ...
// use 'max_completion_tokens'"), and OpenAI deprecated it for every model: its API gets
// max_completion_tokens; servers that copy the API, which may know only max_tokens, keep it.
func TestTheTokenCapIsMaxCompletionTokensForOpenAIAndItsReasoningModels(t *testing.T) {
	for _, c := range []struct {
		name, baseURL, model, want string
	}{
		{"o1 on a gateway", "", "o1-mini", "max_completion_tokens"},
		{"o3 under a vendor prefix", "", "openai/o3-mini", "max_completion_tokens"},
		{"gpt-5", "", "GPT-5-mini", "max_completion_tokens"},
		{"any model on OpenAI's API", "https://api.openai.com/v1", "gpt-4o-mini", "max_completion_tokens"},
		{"Azure OpenAI", "https://me.openai.azure.com/v1", "gpt-4o", "max_completion_tokens"},
		{"a compatible server", "", "llama3.1", "max_tokens"},
		{"a model whose name only contains o1", "", "qwen-o1-style", "max_tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := start(t, fakellm.Script{Replies: []fakellm.Reply{fakellm.Text("ok")}})
			cfg := openai.Config{Model: c.model, BaseURL: srv.OpenAIURL()}
			if c.baseURL != "" {
				cfg.BaseURL, cfg.HTTPClient = c.baseURL, &http.Client{Transport: toServer{srv}}
			}
			m, err := openai.New(cfg)
			assert.NilError(t, err)
			req := request()
			req.Options = model.Options{MaxTokens: 100} // go-openai refuses a temperature for o1
			_, err = m.Step(context.Background(), req)
			assert.NilError(t, err)
			var body map[string]any
			assert.NilError(t, json.Unmarshal(srv.Requests()[0].Body, &body))
			assert.Equal(t, body[c.want], float64(100), "%s", srv.Requests()[0].Body)
			other := map[string]string{"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}[c.want]
			_, sent := body[other]
			assert.Assert(t, !sent, "%s sent too: %s", other, srv.Requests()[0].Body)
		})
	}
}
