package ollama_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"golang.org/x/crypto/ssh"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/ollama"
)

// raw serves every request with handler and returns a Model for it.
func raw(t *testing.T, stream bool, handler http.HandlerFunc) *ollama.Model {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	m, err := ollama.New(ollama.Config{Model: "qwen3:4b", Host: srv.URL, Stream: stream})
	assert.NilError(t, err)
	return m
}

func reply(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func TestErrorResponses(t *testing.T) {
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		status    int
		temporary bool
		want      string
		wantErr   error // what errors.As finds in the chain
	}{
		{name: "Ollama's error body", handler: reply(404, "application/json", `{"error":"model 'qwen3:4b' not found"}`),
			status: 404, want: "HTTP 404 Not Found: model 'qwen3:4b' not found", wantErr: api.StatusError{}},
		{name: "a proxy's page", handler: reply(502, "text/html", "<html>Bad Gateway</html>\n"),
			status: 502, temporary: true, want: "HTTP 502 Bad Gateway: <html>Bad Gateway</html>", wantErr: api.StatusError{}},
		{name: "no body", handler: reply(503, "", ""),
			status: 503, temporary: true, want: "HTTP 503 Service Unavailable: the server sent no error message"},
		{name: "unauthorized", handler: reply(401, "application/json", `{"error":"sign in first","signin_url":"https://ollama.com/connect"}`),
			status: 401, want: "HTTP 401 Unauthorized: unauthorized: sign in first", wantErr: api.AuthorizationError{}},
		{name: "error record mid-stream", handler: reply(200, "application/x-ndjson",
			`{"model":"qwen3:4b","message":{"role":"assistant","content":"Let"},"done":false}`+"\n"+`{"error":"model runner has unexpectedly stopped"}`+"\n"),
			want: "unexpected response: model runner has unexpectedly stopped"},
		{name: "a record of the wrong types", handler: reply(200, "application/json", `{"model":"qwen3:4b","done":"yes"}`),
			want: "unexpected response: json: cannot unmarshal string into Go struct field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := raw(t, false, tc.handler).Step(context.Background(), request())
			var pe *model.ProviderError
			assert.Assert(t, errors.As(err, &pe), "%T %v", err, err)
			assert.Equal(t, pe.StatusCode, tc.status)
			assert.Equal(t, pe.Temporary, tc.temporary)
			assert.Check(t, is.Contains(err.Error(), tc.want))
			switch tc.wantErr.(type) {
			case api.StatusError:
				var se api.StatusError
				assert.Check(t, errors.As(err, &se) && se.StatusCode == tc.status)
			case api.AuthorizationError:
				var ae api.AuthorizationError
				assert.Check(t, errors.As(err, &ae) && ae.SigninURL == "https://ollama.com/connect")
			}
		})
	}
}

// TestLongRecords reads records longer than the read buffer, streamed and not.
func TestLongRecords(t *testing.T) {
	forBoth(t, func(t *testing.T, stream bool) {
		long := strings.Repeat("word ", 40000) // 200 kB
		srv := start(t, fakellm.Script{Replies: []fakellm.Reply{{
			Text:      long,
			ToolCalls: []fakellm.Call{fakellm.NewCall("read_file", map[string]any{"path": strings.Repeat("d/", 30000) + "f"})},
		}}})
		resp, err := open(t, srv, stream).Step(context.Background(), request())
		assert.NilError(t, err)
		assert.Equal(t, resp.Content, long)
		assert.Equal(t, len(resp.ToolCalls), 1)
		assert.Equal(t, len(resp.ToolCalls[0].Arguments), len(`{"path":""}`)+60001)
	})
}

// TestBodyIsTheConversation checks what the server receives over a growing conversation:
// every message, in order, each once, with the request's other fields.
func TestBodyIsTheConversation(t *testing.T) {
	srv := start(t, fakellm.Script{Repeat: true, Replies: []fakellm.Reply{fakellm.ToolCall("read_file", map[string]any{"path": "a.go"})}})
	m := open(t, srv, false)
	req := request()
	for step := 1; step <= 4; step++ {
		resp, err := m.Step(context.Background(), req)
		assert.NilError(t, err)
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, ToolCalls: resp.ToolCalls},
			model.Message{Role: model.RoleTool, ToolCallID: resp.ToolCalls[0].ID, ToolName: "read_file", Content: "<step> & \"result\""})
	}
	reqs := srv.Requests()
	assert.Equal(t, len(reqs), 4)
	for i, r := range reqs {
		assert.Equal(t, len(r.Messages), 2+2*i)
		assert.DeepEqual(t, r.Messages, req.Messages[:2+2*i])
		var body api.ChatRequest
		assert.NilError(t, json.Unmarshal(r.Body, &body))
		assert.Equal(t, body.Model, "qwen3:4b")
		assert.Equal(t, len(body.Tools), 1)
		assert.Equal(t, *body.Stream, false)
	}
}

// TestSignedRequests: with OLLAMA_AUTH set, requests are signed with ~/.ollama's key, as
// api.Client signs them; without the key the step fails at once, saying why.
func TestSignedRequests(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("OLLAMA_AUTH", "1")
	var got *http.Request
	m := raw(t, false, func(w http.ResponseWriter, r *http.Request) {
		got = r
		reply(200, "application/json", `{"model":"qwen3:4b","message":{"role":"assistant","content":"hi"},"done":true}`)(w, r)
	})

	_, err := m.Step(context.Background(), request())
	var pe *model.ProviderError
	assert.Assert(t, errors.As(err, &pe), "%T %v", err, err)
	assert.Check(t, !pe.Temporary)
	assert.Check(t, is.Contains(err.Error(), "sign the request"))
	assert.Check(t, got == nil, "nothing is sent unsigned")

	_, key, err := ed25519.GenerateKey(rand.Reader)
	assert.NilError(t, err)
	block, err := ssh.MarshalPrivateKey(key, "")
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(filepath.Join(home, ".ollama"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(home, ".ollama", "id_ed25519"), pem.EncodeToMemory(block), 0o600))

	resp, err := m.Step(context.Background(), request())
	assert.NilError(t, err)
	assert.Equal(t, resp.Content, "hi")
	assert.Equal(t, got.URL.Path, "/api/chat")
	assert.Check(t, got.URL.Query().Get("ts") != "")
	assert.Check(t, strings.HasPrefix(got.Header.Get("Authorization"), "AAAA"), got.Header.Get("Authorization"))
	assert.Equal(t, got.Header.Get("Accept"), "application/x-ndjson")
}

// TestDeadlineMidStream: a deadline that ends the read of a stream is reported as the
// context's error, for the caller (the retry wrapper) to judge, not as a bad response.
func TestDeadlineMidStream(t *testing.T) {
	m := raw(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"model":"qwen3:4b","message":{"role":"assistant","content":"Let"},"done":false}`+"\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := m.Step(ctx, request())
	assert.Assert(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Check(t, !strings.Contains(err.Error(), "unexpected response"), err.Error())
}
