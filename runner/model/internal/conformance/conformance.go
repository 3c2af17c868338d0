// Package conformance is what the REST clients' tests against their SDK oracles share
// (anthropic, gemini, openairesponses): a local server that records every request and plays
// scripted replies, both models run over the same requests, and the comparisons of what
// they sent and what they made of the answers. Only tests import it.
package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
)

// Recorded is one request a Recorder received.
type Recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
	ContentLength       int64
}

// Reply is one scripted answer: a status, headers and body; or Raw bytes written on the
// bare connection, which is then closed (a response cut short, a connection dropped).
type Reply struct {
	Status int
	Header map[string]string
	Body   string
	Raw    *string
}

// OK is a 200 whose content type follows the body: an event stream or JSON.
func OK(body string) Reply { return Reply{Status: http.StatusOK, Body: body} }

// Raw is a reply written byte for byte, after which the connection closes.
func Raw(s string) Reply { return Reply{Raw: &s} }

// Recorder is a local server that records every request and plays replies in order.
type Recorder struct {
	// URL is the server's base URL.
	URL string

	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []Recorded
	replies []Reply
}

// StartRecorder starts a Recorder, closed when the test ends.
func StartRecorder(t *testing.T, replies []Reply) *Recorder {
	t.Helper()
	r := &Recorder{t: t, replies: replies}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	t.Cleanup(func() {
		r.srv.CloseClientConnections()
		r.srv.Close()
	})
	return r
}

func (r *Recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body) // a test server: a short body shows in the comparison
	r.mu.Lock()
	r.reqs = append(r.reqs, Recorded{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.RawQuery,
		Header: req.Header.Clone(), Body: body, ContentLength: req.ContentLength})
	n := len(r.reqs)
	var rep Reply
	if n <= len(r.replies) {
		rep = r.replies[n-1]
	}
	r.mu.Unlock()
	if n > len(r.replies) {
		r.t.Errorf("request %d: the script has %d replies", n, len(r.replies))
		http.Error(w, "script exhausted", http.StatusTeapot)
		return
	}
	if rep.Raw != nil {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			r.t.Errorf("hijack: %v", err)
			return
		}
		_, _ = rw.WriteString(*rep.Raw) // a test server: the client checks what arrived
		_ = rw.Flush()
		_ = conn.Close()
		return
	}
	ct := "application/json"
	if strings.HasPrefix(rep.Body, "data:") || strings.HasPrefix(rep.Body, "event:") || strings.HasPrefix(rep.Body, ":") {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.Status)
	_, _ = io.WriteString(w, rep.Body)
}

// Requests returns the requests received so far.
func (r *Recorder) Requests() []Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Recorded(nil), r.reqs...)
}

// Stepper is what both models are: the REST client and the SDK oracle.
type Stepper interface {
	Step(ctx context.Context, req *model.Request) (*model.Response, error)
}

// Outcome is what a step came to: a response, or a classified error.
type Outcome struct {
	Resp *model.Response
	Err  *model.ProviderError
}

// Play plays replies to a fresh model that open makes for a recorder's URL, one step per
// request, and returns the outcome of the last step and the requests the model sent. Run it
// once with the SDK oracle and once with the client, and compare.
func Play(ctx context.Context, t *testing.T, replies []Reply, open func(baseURL string) (Stepper, error), reqs ...*model.Request) (Outcome, []Recorded) {
	t.Helper()
	rec := StartRecorder(t, replies)
	m, err := open(rec.URL)
	assert.NilError(t, err)
	var out Outcome
	for _, req := range reqs {
		out = Outcome{}
		resp, err := m.Step(ctx, req)
		if err != nil {
			var pe *model.ProviderError
			assert.Assert(t, errors.As(err, &pe), "not a ProviderError: %v", err)
			// Each model has its own server: name them alike.
			e := *pe
			e.Host = strings.ReplaceAll(e.Host, rec.URL, "http://server")
			e.Message = strings.ReplaceAll(e.Message, rec.URL, "http://server")
			out.Err = &e
			break
		}
		out.Resp = resp
	}
	return out, rec.Requests()
}

// AssertSameOutcome: the same answer, or an error classified the same way. Messages are
// compared whole where they are the server's; where they quote a Go error (a body that
// does not parse, a failed connection) the two stacks word it differently, so only the
// kind is compared.
func AssertSameOutcome(t *testing.T, sdk, ours Outcome) {
	t.Helper()
	if sdk.Err != nil {
		assertSameError(t, sdk.Err, ours)
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
		AssertSameJSON(t, o.Arguments, c.Arguments)
	}
}

func assertSameError(t *testing.T, sdk *model.ProviderError, ours Outcome) {
	t.Helper()
	assert.Assert(t, ours.Err != nil, "the SDK failed (%v), the client did not: %+v", sdk, ours.Resp)
	assert.Equal(t, ours.Err.Provider, sdk.Provider)
	assert.Equal(t, ours.Err.Host, sdk.Host)
	assert.Equal(t, ours.Err.StatusCode, sdk.StatusCode, "%v\n%v", sdk, ours.Err)
	assert.Equal(t, ours.Err.Temporary, sdk.Temporary, "%v\n%v", sdk, ours.Err)
	assert.Equal(t, ours.Err.RetryAfter, sdk.RetryAfter)
	assert.Equal(t, ours.Err.Err == nil, sdk.Err == nil, "%v\n%v", sdk, ours.Err)
	for _, kind := range []string{"unexpected response: ", "connection failed: "} {
		if strings.HasPrefix(sdk.Message, kind) {
			assert.Assert(t, strings.HasPrefix(ours.Err.Message, kind), "%v\n%v", sdk, ours.Err)
			return
		}
	}
	assert.Equal(t, ours.Err.Message, sdk.Message)
}

// AssertSameRequests: the same number of requests, each with the same method, path, query,
// body (as JSON values, so key order and spelling of numbers aside) and headers but those
// mayDiffer names (the SDK names itself; the client does not pretend to be the SDK).
// Content-Length follows the body's spelling, so only its presence is compared.
func AssertSameRequests(t *testing.T, sdk, ours []Recorded, mayDiffer func(header string) bool) {
	t.Helper()
	assert.Equal(t, len(ours), len(sdk))
	for i := range sdk {
		s, o := sdk[i], ours[i]
		assert.Equal(t, o.Method, s.Method)
		assert.Equal(t, o.Path, s.Path)
		assert.Equal(t, o.Query, s.Query)
		assert.Assert(t, o.ContentLength > 0 && s.ContentLength > 0)
		assert.DeepEqual(t, comparable(o.Header, mayDiffer), comparable(s.Header, mayDiffer))
		AssertSameJSON(t, o.Body, s.Body)
	}
}

func comparable(h http.Header, mayDiffer func(string) bool) http.Header {
	h = h.Clone()
	for k := range h {
		if k == "User-Agent" || k == "Content-Length" || mayDiffer(k) {
			h.Del(k)
		}
	}
	return h
}

// AssertSameJSON: got and want are the same JSON value.
func AssertSameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	assert.NilError(t, json.Unmarshal(got, &g), "%s", got)
	assert.NilError(t, json.Unmarshal(want, &w), "%s", want)
	assert.DeepEqual(t, g, w)
}
