package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
)

// recorded is one request a recorder received.
type recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
	ContentLength       int64
}

// reply is one scripted answer: a status, headers and body; or raw bytes written on the
// bare connection, which is then closed (a response cut short, a connection dropped).
type reply struct {
	status int
	header map[string]string
	body   string
	raw    *string
}

// ok is a 200 whose content type follows the body: an event stream or JSON.
func ok(body string) reply { return reply{status: http.StatusOK, body: body} }

// raw is a reply written byte for byte, after which the connection closes.
func raw(s string) reply { return reply{raw: &s} }

// recorder is a local server that records every request and plays replies in order.
type recorder struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	reqs    []recorded
	replies []reply
}

func startRecorder(t *testing.T, replies []reply) *recorder {
	t.Helper()
	r := &recorder{t: t, replies: replies}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.srv.CloseClientConnections()
		r.srv.Close()
	})
	return r
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.RawQuery,
		Header: req.Header.Clone(), Body: body, ContentLength: req.ContentLength})
	n := len(r.reqs)
	var rep reply
	if n <= len(r.replies) {
		rep = r.replies[n-1]
	}
	r.mu.Unlock()
	if n > len(r.replies) {
		r.t.Errorf("request %d: the script has %d replies", n, len(r.replies))
		http.Error(w, "script exhausted", http.StatusTeapot)
		return
	}
	if rep.raw != nil {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			r.t.Errorf("hijack: %v", err)
			return
		}
		_, _ = rw.WriteString(*rep.raw) // a test server: the client checks what arrived
		_ = rw.Flush()
		_ = conn.Close()
		return
	}
	ct := "application/json"
	if strings.HasPrefix(rep.body, "data:") || strings.HasPrefix(rep.body, ":") {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// stepper is what both models are: the REST client and the SDK oracle.
type stepper interface {
	Step(ctx context.Context, req *model.Request) (*model.Response, error)
}

// outcome is what a step came to: a response, or a classified error.
type outcome struct {
	Resp *model.Response
	Err  *model.ProviderError
}

// run plays replies to a fresh model of each kind, one step per request, and returns the
// outcome of the last step and the requests each model sent.
func run(t *testing.T, stream bool, replies []reply, reqs ...*model.Request) (sdk, ours outcome, sdkReqs, ourReqs []recorded) {
	t.Helper()
	// A deadline both requests share, so that x-server-timeout is the same: 91 s.
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(90*time.Second+500*time.Millisecond))
	defer cancel()
	play := func(open func(Config) (stepper, error)) (outcome, []recorded) {
		rec := startRecorder(t, replies)
		m, err := open(Config{Model: "gemini-2.5-flash", APIKey: "gm-key", BaseURL: rec.srv.URL, Stream: stream})
		assert.NilError(t, err)
		var out outcome
		for _, req := range reqs {
			out = outcome{}
			resp, err := m.Step(ctx, req)
			if err != nil {
				var pe *model.ProviderError
				assert.Assert(t, errors.As(err, &pe), "not a ProviderError: %v", err)
				// Each model has its own server: name them alike.
				e := *pe
				e.Host = strings.ReplaceAll(e.Host, rec.srv.URL, "http://server")
				e.Message = strings.ReplaceAll(e.Message, rec.srv.URL, "http://server")
				out.Err = &e
				break
			}
			out.Resp = resp
		}
		return out, rec.requests()
	}
	sdk, sdkReqs = play(func(c Config) (stepper, error) { return newSDKModel(c) })
	ours, ourReqs = play(func(c Config) (stepper, error) { return New(c) })
	return sdk, ours, sdkReqs, ourReqs
}

// assertSameOutcome: the same answer, or an error classified the same way. Messages are
// compared whole where they are the server's; where they quote a Go error (a body that
// does not parse, a failed connection) the two stacks word it differently, so only the
// kind is compared.
func assertSameOutcome(t *testing.T, sdk, ours outcome) {
	t.Helper()
	if sdk.Err != nil {
		assert.Assert(t, ours.Err != nil, "the SDK failed (%v), the client did not: %+v", sdk.Err, ours.Resp)
		assert.Equal(t, ours.Err.Provider, sdk.Err.Provider)
		assert.Equal(t, ours.Err.Host, sdk.Err.Host)
		assert.Equal(t, ours.Err.StatusCode, sdk.Err.StatusCode, "%v\n%v", sdk.Err, ours.Err)
		assert.Equal(t, ours.Err.Temporary, sdk.Err.Temporary, "%v\n%v", sdk.Err, ours.Err)
		assert.Equal(t, ours.Err.RetryAfter, sdk.Err.RetryAfter)
		assert.Equal(t, ours.Err.Err == nil, sdk.Err.Err == nil, "%v\n%v", sdk.Err, ours.Err)
		for _, kind := range []string{"unexpected response: ", "connection failed: "} {
			if strings.HasPrefix(sdk.Err.Message, kind) {
				assert.Assert(t, strings.HasPrefix(ours.Err.Message, kind), "%v\n%v", sdk.Err, ours.Err)
				return
			}
		}
		assert.Equal(t, ours.Err.Message, sdk.Err.Message)
		return
	}
	assert.Assert(t, ours.Err == nil, "the client failed, the SDK did not: %v", ours.Err)
	assert.Equal(t, ours.Resp.Content, sdk.Resp.Content)
	assert.Equal(t, ours.Resp.Model, sdk.Resp.Model)
	assert.DeepEqual(t, ours.Resp.Usage, sdk.Resp.Usage)
	assert.Equal(t, len(ours.Resp.ToolCalls), len(sdk.Resp.ToolCalls))
	for i, c := range sdk.Resp.ToolCalls {
		o := ours.Resp.ToolCalls[i]
		assert.Equal(t, o.ID, c.ID)
		assert.Equal(t, o.Name, c.Name)
		assert.Equal(t, o.FromText, c.FromText)
		assertSameJSON(t, o.Arguments, c.Arguments)
	}
}

// assertSameRequests: the same number of requests, each with the same method, path,
// query, body (as JSON values, so key order and spelling of numbers aside) and headers.
// User-Agent and x-goog-api-client are the only headers allowed to differ: the SDK names
// itself in both, and the client does not pretend to be the SDK. Content-Length follows
// the body's spelling, so only its presence is compared.
func assertSameRequests(t *testing.T, sdk, ours []recorded) {
	t.Helper()
	assert.Equal(t, len(ours), len(sdk))
	for i := range sdk {
		s, o := sdk[i], ours[i]
		assert.Equal(t, o.Method, s.Method)
		assert.Equal(t, o.Path, s.Path)
		assert.Equal(t, o.Query, s.Query)
		assert.Assert(t, o.ContentLength > 0 && s.ContentLength > 0)
		assert.DeepEqual(t, comparable(o.Header), comparable(s.Header))
		assertSameTimeout(t, o.Header, s.Header)
		assertSameJSON(t, o.Body, s.Body)
	}
}

// assertSameTimeout: both send x-server-timeout or neither, and the same number of whole
// seconds but for the time between the two requests of one shared deadline: on a loaded
// machine the second may start after the first's deadline crossed a whole second.
func assertSameTimeout(t *testing.T, ours, sdk http.Header) {
	t.Helper()
	o, s := ours.Get("X-Server-Timeout"), sdk.Get("X-Server-Timeout")
	assert.Equal(t, o == "", s == "", "x-server-timeout: ours %q, the SDK's %q", o, s)
	if o == "" {
		return
	}
	on, err := strconv.Atoi(o)
	assert.NilError(t, err)
	sn, err := strconv.Atoi(s)
	assert.NilError(t, err)
	assert.Assert(t, sn-on >= 0 && sn-on <= 1, "x-server-timeout: ours %d, the SDK's %d", on, sn)
}

func comparable(h http.Header) http.Header {
	h = h.Clone()
	for _, k := range []string{"User-Agent", "X-Goog-Api-Client", "Content-Length", "X-Server-Timeout"} {
		h.Del(k)
	}
	return h
}

func assertSameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	assert.NilError(t, json.Unmarshal(got, &g), "%s", got)
	assert.NilError(t, json.Unmarshal(want, &w), "%s", want)
	assert.DeepEqual(t, g, w)
}
