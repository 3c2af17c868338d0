package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/endpoint"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
)

// scripted is the run's model: it answers from a list and keeps what it was asked.
type scripted struct {
	mu      sync.Mutex
	answers []model.Response
	asked   []model.Request
}

func (s *scripted) Name() string { return "fake:scripted" }

func (s *scripted) Step(_ context.Context, req *model.Request) (*model.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, *req)
	r := s.answers[min(len(s.asked), len(s.answers))-1]
	return &r, nil
}

// events records transcript events.
type events struct {
	mu  sync.Mutex
	all []transcript.Payload
}

func (e *events) Write(_ int, p transcript.Payload) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, p)
	return nil
}

func (e *events) of(typ string) []transcript.Payload {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []transcript.Payload
	for _, p := range e.all {
		if p.Type() == typ {
			out = append(out, p)
		}
	}
	return out
}

// serve starts an endpoint on a loopback port and returns it with its base URL.
func serve(t *testing.T, cfg endpoint.Config) (*endpoint.Server, string) {
	t.Helper()
	srv, err := endpoint.New(cfg)
	assert.NilError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return srv, "http://" + l.Addr().String()
}

// client opens runner's own provider client of protocol against the endpoint: each
// front is checked by a client that speaks its protocol for real (streamed and not).
func client(t *testing.T, protocol, base, token string, stream bool) model.Model {
	t.Helper()
	env := map[string]string{"OPENAI_BASE_URL": base + "/v1", "OPENAI_API_KEY": token, "ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": token}
	m, err := providers.Open(protocol+":agent-model", providers.OpenOptions{Stream: stream, Retries: 1, Getenv: func(k string) string { return env[k] }})
	assert.NilError(t, err)
	return m
}

var schema = func() *tools.Schema {
	s, _ := tools.RawSchema(map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}})
	return s
}()

func TestEveryFrontRoundTrips(t *testing.T) {
	for _, protocol := range []string{"openai", "openai-responses", "anthropic"} {
		for _, stream := range []bool{false, true} {
			name := protocol
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				inner := &scripted{answers: []model.Response{
					{Content: "reading it", ToolCalls: []model.ToolCall{{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}},
						Usage: model.Usage{PromptTokens: 120, CompletionTokens: 7}},
					{Content: "done", Usage: model.Usage{PromptTokens: 150, CompletionTokens: 2}},
				}}
				rec := &events{}
				srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 10, Record: rec})
				agentSide := client(t, protocol, base, srv.Token(), stream)
				conv := []model.Message{{Role: model.RoleSystem, Content: "be brief"}, {Role: model.RoleUser, Content: "read a.txt"}}
				specs := []tools.Spec{{Name: "read_file", Description: "reads a file", Parameters: schema}}
				r1, err := agentSide.Step(context.Background(), &model.Request{Messages: conv, Tools: specs})
				assert.NilError(t, err)
				assert.Equal(t, r1.Content, "reading it")
				assert.Assert(t, is.Len(r1.ToolCalls, 1))
				assert.Equal(t, r1.ToolCalls[0].Name, "read_file")
				var args map[string]string
				assert.NilError(t, json.Unmarshal([]byte(argText(r1.ToolCalls[0].Arguments)), &args))
				assert.Equal(t, args["path"], "a.txt")
				assert.Equal(t, r1.Usage.CompletionTokens, 7)

				conv = append(conv, model.Message{Role: model.RoleAssistant, Content: r1.Content, ToolCalls: r1.ToolCalls},
					model.Message{Role: model.RoleTool, ToolCallID: r1.ToolCalls[0].ID, ToolName: "read_file", Content: "hello"})
				r2, err := agentSide.Step(context.Background(), &model.Request{Messages: conv, Tools: specs})
				assert.NilError(t, err)
				assert.Equal(t, r2.Content, "done")

				// The run's model saw the agent's conversation and tools, in neutral form.
				assert.Assert(t, is.Len(inner.asked, 2))
				got := inner.asked[1]
				assert.Equal(t, got.Messages[0].Role, model.RoleSystem)
				assert.Equal(t, got.Messages[0].Content, "be brief")
				assert.Equal(t, got.Messages[1].Content, "read a.txt")
				assert.Equal(t, got.Messages[2].Role, model.RoleAssistant)
				assert.Equal(t, got.Messages[2].ToolCalls[0].Name, "read_file")
				last := got.Messages[len(got.Messages)-1]
				assert.Equal(t, last.Role, model.RoleTool)
				assert.Equal(t, last.Content, "hello")
				assert.Equal(t, last.ToolCallID, r1.ToolCalls[0].ID)
				assert.Assert(t, is.Len(got.Tools, 1))
				assert.Equal(t, got.Tools[0].Name, "read_file")
				b, _ := json.Marshal(got.Tools[0].Parameters)
				assert.Assert(t, is.Contains(string(b), `"required":["path"]`))

				// Every exchange is a step; the result that came back is the call's event.
				out := srv.Outcome()
				assert.Equal(t, out.Steps, 2)
				assert.Equal(t, out.Usage.PromptTokens, 270)
				assert.Assert(t, is.Len(out.Calls, 1))
				assert.Equal(t, out.Calls[0].Name, "read_file")
				assert.Assert(t, out.Calls[0].Executed && out.Calls[0].Success)
				assert.Equal(t, out.Calls[0].Args, `{"path":"a.txt"}`)
				assert.Assert(t, is.Len(rec.of(transcript.TypeRequest), 2))
				assert.Assert(t, is.Len(rec.of(transcript.TypeResponse), 2))
				calls := rec.of(transcript.TypeToolCall)
				assert.Assert(t, is.Len(calls, 1))
				assert.Equal(t, calls[0].(transcript.ToolCall).Result.Output, "hello")
			})
		}
	}
}

func argText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func TestRequestsWithoutTheTokenAreRefused(t *testing.T) {
	inner := &scripted{answers: []model.Response{{Content: "hi"}}}
	srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 5, Record: &events{}})
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		name, path, header, value string
		want                      int
	}{
		{"no key", "/v1/messages", "", "", http.StatusUnauthorized},
		{"wrong key", "/v1/messages", "X-Api-Key", srv.Token() + "x", http.StatusUnauthorized},
		{"a prefix of it", "/v1/chat/completions", "Authorization", "Bearer " + srv.Token()[:20], http.StatusUnauthorized},
		{"models without a key", "/v1/models", "", "", http.StatusUnauthorized},
		{"x-api-key", "/v1/messages", "X-Api-Key", srv.Token(), http.StatusOK},
		{"bearer", "/v1/messages", "Authorization", "Bearer " + srv.Token(), http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			method := http.MethodPost
			if strings.HasSuffix(c.path, "models") {
				method = http.MethodGet
			}
			req, _ := http.NewRequest(method, base+c.path, strings.NewReader(body))
			if c.header != "" {
				req.Header.Set(c.header, c.value)
			}
			resp, err := http.DefaultClient.Do(req)
			assert.NilError(t, err)
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			assert.Equal(t, resp.StatusCode, c.want, string(b))
			if c.want == http.StatusUnauthorized && c.path == "/v1/messages" {
				assert.Assert(t, is.Contains(string(b), `"type":"authentication_error"`))
			}
		})
	}
	assert.Equal(t, len(inner.asked), 2, "only the authorised requests reach the model")
}

func TestRequestPastMaxStepsIsRefused(t *testing.T) {
	for _, protocol := range []string{"openai", "openai-responses", "anthropic"} {
		t.Run(protocol, func(t *testing.T) {
			inner := &scripted{answers: []model.Response{{Content: "one"}}}
			srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 1, Record: &events{}})
			agentSide := client(t, protocol, base, srv.Token(), false)
			req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}}
			_, err := agentSide.Step(context.Background(), req)
			assert.NilError(t, err)
			select {
			case <-srv.Refused():
				t.Fatal("refused before the limit")
			default:
			}
			_, err = agentSide.Step(context.Background(), req)
			assert.ErrorContains(t, err, "max_steps")
			<-srv.Refused()
			out := srv.Outcome()
			assert.Equal(t, out.Stop, result.StopMaxSteps)
			assert.Equal(t, out.Steps, 1)
			assert.Equal(t, len(inner.asked), 1, "the refused request never reaches the model")
		})
	}
}

func TestWorkspacePathIsCanonicalForTheModel(t *testing.T) {
	work := "/tmp/runner-demo-123456"
	inner := &scripted{answers: []model.Response{{ToolCalls: []model.ToolCall{{ID: "c1", Name: "edit",
		Arguments: json.RawMessage(`{"file_path":"/workspace/src/a.go","note":"not /workspaces/x nor /a/workspace"}`)}}}}}
	srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 3, Record: &events{}, Workdir: work})
	agentSide := client(t, "anthropic", base, srv.Token(), true)
	resp, err := agentSide.Step(context.Background(), &model.Request{Messages: []model.Message{
		{Role: model.RoleSystem, Content: "Working directory: " + work + "\nToday"},
		{Role: model.RoleUser, Content: "fix " + work + "/src/a.go (not " + work + "-old)\n" + work + "/b"},
	}})
	assert.NilError(t, err)
	asked := inner.asked[0]
	assert.Equal(t, asked.Messages[0].Content, "Working directory: /workspace\nToday")
	assert.Equal(t, asked.Messages[1].Content, "fix /workspace/src/a.go (not "+work+"-old)\n/workspace/b")
	var args map[string]string
	assert.NilError(t, json.Unmarshal(resp.ToolCalls[0].Arguments, &args))
	assert.Equal(t, args["file_path"], work+"/src/a.go")
	assert.Equal(t, args["note"], "not /workspaces/x nor /a/workspace")
}

func TestModelFailureIsAnAPIErrorAndErrorsTheRun(t *testing.T) {
	srv, base := serve(t, endpoint.Config{Model: failing{}, MaxSteps: 3, Record: &events{}})
	_, err := client(t, "openai", base, srv.Token(), false).Step(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "x"}}})
	assert.ErrorContains(t, err, "server down")
	out := srv.Outcome()
	assert.Equal(t, out.Stop, result.StopError)
	assert.ErrorContains(t, out.Err, "server down")
}

type failing struct{}

func (failing) Name() string { return "fake:down" }
func (failing) Step(context.Context, *model.Request) (*model.Response, error) {
	return nil, errors.New("server down")
}

// repeated is an endless-looking body: n bytes of b, generated as read (a 1 GiB body
// costs the test nothing).
type repeated struct {
	b byte
	n int64
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n))
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= int64(k)
	return k, nil
}

// A hostile agent's requests are bounded before anything decodes them: a 1 GiB body
// (announced, and chunked with no length) and 100,000 nested arrays are refused with the
// protocol's error, never reach the model, and fail the scenario (Outcome.Fault) rather
// than error it; the agent is stopped as at max_steps, and the transcript says why.
// Before the bounds, the deep body was a plain 400 and the agent could go on to pass.
func TestHostileRequestBodiesAreRefusedAndFailTheScenario(t *testing.T) {
	const deep = 100_000
	for _, path := range []string{"/v1/chat/completions", "/v1/responses", "/v1/messages"} {
		for _, c := range []struct {
			name   string
			body   func() io.Reader
			length int64
			status int
			want   string
		}{
			{"1 GiB announced", func() io.Reader { return &repeated{b: ' ', n: 1 << 30} }, 1 << 30, http.StatusRequestEntityTooLarge, "1073741824 bytes, more than the 64 MiB"},
			{"1 GiB chunked", func() io.Reader { return &repeated{b: ' ', n: 1 << 30} }, -1, http.StatusRequestEntityTooLarge, "is more than the 64 MiB"},
			{"100,000 deep", func() io.Reader {
				return io.MultiReader(strings.NewReader(`{"messages":`), &repeated{b: '[', n: deep})
			}, -1, http.StatusBadRequest, "nested more than 128 levels"},
			{"not JSON", func() io.Reader { return strings.NewReader(`{"model": []}`) }, -1, http.StatusBadRequest, "runner's endpoint: bad"},
		} {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				inner := &scripted{answers: []model.Response{{Content: "never"}}}
				rec := &events{}
				srv, base := serve(t, endpoint.Config{Model: inner, MaxSteps: 5, Record: rec})
				req, err := http.NewRequest(http.MethodPost, base+path, c.body())
				assert.NilError(t, err)
				req.ContentLength = c.length
				req.Header.Set("Authorization", "Bearer "+srv.Token())
				req.Header.Set("X-Api-Key", srv.Token())
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				resp, err := http.DefaultClient.Do(req)
				if err != nil && c.length < 0 {
					// The server may answer and close before the client has sent it all.
					t.Logf("client: %v", err)
				}
				assert.NilError(t, err)
				b, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				assert.NilError(t, err)
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				assert.Equal(t, resp.StatusCode, c.status, string(b))
				assert.Check(t, is.Contains(string(b), c.want))
				if path == "/v1/messages" {
					assert.Check(t, is.Contains(string(b), `"type":"error"`), "Anthropic's error shape")
				} else {
					assert.Check(t, is.Contains(string(b), `"error":{"code":`), "OpenAI's error shape")
				}
				t.Logf("allocated %d MiB", (after.TotalAlloc-before.TotalAlloc)>>20)
				assert.Check(t, after.TotalAlloc-before.TotalAlloc < 400<<20, "allocated %d MiB", (after.TotalAlloc-before.TotalAlloc)>>20)
				assert.Equal(t, len(inner.asked), 0, "the model never saw it")
				out := srv.Outcome()
				assert.Check(t, is.Contains(out.Fault, "could not read"))
				assert.Check(t, is.Contains(out.Fault, c.want))
				assert.Equal(t, out.Stop, result.StopReason(""), "no limit hit, no error: the agent's fault")
				select {
				case <-srv.Refused():
				default:
					t.Error("the agent is not stopped")
				}
				reqs := rec.of(transcript.TypeRequest)
				assert.Assert(t, is.Len(reqs, 1))
				assert.Check(t, is.Contains(reqs[0].(transcript.Request).Refused, c.want))
			})
		}
	}
}
