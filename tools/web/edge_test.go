package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

// Validate guards the tools when they are called without the registry's schema check
// (Go users, runner tool's own Validate pass): bad methods, ranges and hosts are refused.
func TestValidateWithoutSchema(t *testing.T) {
	ws := workspace(t, true)
	all := Tools(Options{})
	fetchT, searchT := all[0], all[1]
	for _, tc := range []struct {
		args tools.Args
		want string
	}{
		{tools.Args{"url": "http://example.com/", "method": "DELETE"}, "Unsupported method 'DELETE'"},
		{tools.Args{"url": "http://example.com/", "timeout_seconds": 0.0}, "timeout_seconds 0 is out of range"},
		{tools.Args{"url": "http://example.com/", "timeout_seconds": 61.0}, "timeout_seconds 61 is out of range"},
		{tools.Args{"url": "http://./"}, "the URL has no host"},
	} {
		err := fetchT.Validate(tc.args, ws)
		assert.Assert(t, err != nil, "%v", tc.args)
		assert.Check(t, is.Contains(err.Message, tc.want), "%v", tc.args)
	}
	for _, n := range []float64{0, 21} {
		err := searchT.Validate(tools.Args{"query": "go", "num_results": n}, ws)
		assert.Assert(t, err != nil && strings.Contains(err.Message, "out of range"), "%v", n)
	}
	res := fetchT.Execute(context.Background(), tools.Args{"url": "http://exa mple.com/"}, ws)
	assertFail(t, res, tools.CodeInvalidArgument, "Cannot build a request")
}

// Each HTTP failure comes with advice that fits it.
func TestFetchStatusSuggestions(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		var code int
		_, _ = fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/"), "%d", &code) // a test server: the client checks what arrived
		w.WriteHeader(code)
		if code == http.StatusTeapot {
			fmt.Fprint(w, "a"+strings.Repeat("é", 400)) // longer than the excerpt; byte 500 is inside a character
		}
	}})
	for code, want := range map[int]string{
		401: "refused access", 403: "refused access", 429: "rate limiting", 404: "does not exist",
		502: "server failed", 418: "Check the URL, method, headers and body.",
	} {
		res := fetch(t, Options{}, fmt.Sprintf("%s/%d", srv.URL, code))
		assertFail(t, res, tools.CodeNetworkError)
		assert.Check(t, is.Contains(res.Error.Suggestion, want), "%d", code)
		if code == 401 {
			assert.Check(t, is.Contains(res.Error.Message, "(empty body)"))
		}
		if code == 418 {
			assert.Check(t, is.Contains(res.Error.Message, "..."))
			assert.Check(t, !strings.Contains(res.Error.Message, "\uFFFD"), "cut inside a character")
		}
	}
}

// A cancelled run is reported as cancelled, not as a timeout of the request.
func TestFetchCancelled(t *testing.T) {
	started := make(chan struct{})
	srv := server(t, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	res := runCtx(t, ctx, Options{}, FetchName, map[string]any{"url": srv.URL})
	assertFail(t, res, tools.CodeNetworkError, "was cancelled")
}

// A body that breaks off mid-way is a network error, not a truncated success.
func TestFetchBodyError(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		fmt.Fprint(w, "only part")
	}})
	assertFail(t, fetch(t, Options{}, srv.URL), tools.CodeNetworkError, "read response body")
	assert.ErrorContains(t, (&guard{}).control("tcp", "host.example:80", nil), "not an IP address")
	assert.Check(t, is.Contains(requestError(context.DeadlineExceeded, "x", 0).Message, "timed out"))
	assert.Check(t, is.Contains(requestError(context.DeadlineExceeded, "x", 2*time.Second).Message, "after 2s"))
}

// A search backend that cannot be reached, or whose URL is not one, is an error
// naming the backend.
func TestSearchBackendUnreachable(t *testing.T) {
	srv := server(t, nil)
	u := srv.URL
	srv.Close()
	res := search(t, Options{SearchURL: u + "/search"}, map[string]any{"query": "go"})
	assertFail(t, res, tools.CodeNetworkError, "search backend")
	_, err := searchEndpoint("http://[::1/x", "q")
	assert.ErrorContains(t, err, "parse")
}

// The operator's search URL may carry credentials; the model never sees them.
func TestSearchURLCredentialsRedacted(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{"/search": func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}})
	u := srv.URL
	srv.Close()
	for _, creds := range []string{"op:s3cret@", "tok3n@"} {
		res := search(t, Options{SearchURL: strings.Replace(u, "http://", "http://"+creds, 1) + "/search"}, map[string]any{"query": "go"})
		assert.Assert(t, !res.Success)
		assert.Assert(t, !strings.Contains(res.Output, "s3cret") && !strings.Contains(res.Output, "tok3n"), res.Output)
		assert.Assert(t, is.Contains(res.Output, "xxxxx@"), res.Output)
	}
	res := search(t, Options{SearchURL: "ftp://op:s3cret@host/search"}, map[string]any{"query": "go"})
	assert.Assert(t, !res.Success && !strings.Contains(res.Output, "s3cret"), res.Output)
}

// A configured proxy is not used: it would resolve names where the dial guard cannot
// see them. The request goes straight to the server, and the proxy sees nothing.
func TestFetchIgnoresProxy(t *testing.T) {
	var proxied int
	proxy := server(t, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		proxied++
		fmt.Fprint(w, "from the proxy")
	}})
	target := server(t, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "direct")
	}})
	pu, err := url.Parse(proxy.URL)
	assert.NilError(t, err)
	opts := Options{HTTPClient: &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}}
	res := fetch(t, opts, strings.Replace(target.URL, "127.0.0.1", "localhost", 1))
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "direct")
	assert.Equal(t, proxied, 0)
}
