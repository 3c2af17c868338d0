package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

// searx fakes a SearXNG /search endpoint with n results and records the last query.
func searx(t *testing.T, n int, last *url.Values) string {
	t.Helper()
	srv := server(t, map[string]http.HandlerFunc{"/search": func(w http.ResponseWriter, r *http.Request) {
		if last != nil {
			*last = r.URL.Query()
		}
		if r.URL.Query().Get("format") != "json" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		type result struct{ Title, URL, Content string }
		out := struct {
			Query   string   `json:"query"`
			Results []result `json:"results"`
		}{Query: r.URL.Query().Get("q")}
		for i := range n {
			out.Results = append(out.Results, result{
				Title:   fmt.Sprintf("Result %d", i+1),
				URL:     fmt.Sprintf("https://example.com/%d", i+1),
				Content: fmt.Sprintf("Snippet\n  number %d.", i+1),
			})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out) // a test server: the client checks what arrived
	}})
	return srv.URL + "/search"
}

func search(t *testing.T, opts Options, args map[string]any) tools.Result {
	t.Helper()
	return run(t, opts, SearchName, args)
}

func TestSearchResults(t *testing.T) {
	var got url.Values
	srv := searx(t, 8, &got)
	res := search(t, Options{SearchURL: srv}, map[string]any{"query": "go os.Root", "num_results": 2})
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "1. Result 1\n   https://example.com/1\n   Snippet number 1.\n\n"+
		"2. Result 2\n   https://example.com/2\n   Snippet number 2.")
	assert.Equal(t, got.Get("q"), "go os.Root")
	assert.Equal(t, got.Get("format"), "json")
	assert.Equal(t, res.Metadata["results"], 2)
	assert.Equal(t, res.Metadata["query"], "go os.Root")
}

func TestSearchDefaultCount(t *testing.T) {
	res := search(t, Options{SearchURL: searx(t, 8, nil)}, map[string]any{"query": "x"})
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Metadata["results"], 5)
	assert.Check(t, is.Contains(res.Output, "5. Result 5"))
	assert.Check(t, !strings.Contains(res.Output, "Result 6"))
}

func TestSearchFewerThanAsked(t *testing.T) {
	res := search(t, Options{SearchURL: searx(t, 3, nil)}, map[string]any{"query": "x", "num_results": 20})
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Metadata["results"], 3)
}

func TestSearchNoResults(t *testing.T) {
	res := search(t, Options{SearchURL: searx(t, 0, nil)}, map[string]any{"query": "zzqx"})
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, `No results for "zzqx". Try other keywords.`)
	assert.Equal(t, res.Metadata["results"], 0)
}

func TestSearchKeepsConfiguredParameters(t *testing.T) {
	var got url.Values
	srv := searx(t, 1, &got)
	res := search(t, Options{SearchURL: srv + "?categories=it&format=html"}, map[string]any{"query": "q"})
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, got.Get("categories"), "it")
	assert.Equal(t, got.Get("format"), "json")
}

func TestSearchUnconfigured(t *testing.T) {
	res := search(t, Options{}, map[string]any{"query": "anything"})
	assertFail(t, res, tools.CodeExecutionError, "not configured", "RUNNER_SEARCH_URL", "SearXNG", "http://localhost:8888/search")
}

func TestSearchBackendErrors(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{
		"/forbidden": func(w http.ResponseWriter, r *http.Request) { http.Error(w, "Forbidden", http.StatusForbidden) },
		"/html": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>a search page</html>")
		},
	})
	res := search(t, Options{SearchURL: srv.URL + "/forbidden"}, map[string]any{"query": "x"})
	assertFail(t, res, tools.CodeNetworkError, "HTTP 403")
	assert.Check(t, is.Contains(res.Error.Suggestion, "json format"))
	assert.Equal(t, res.Metadata["status_code"], 403)

	res = search(t, Options{SearchURL: srv.URL + "/html"}, map[string]any{"query": "x"})
	assertFail(t, res, tools.CodeExecutionError, "did not return the expected JSON", "a search page")

	closed := server(t, nil)
	dead := closed.URL + "/search"
	closed.Close()
	assertFail(t, search(t, Options{SearchURL: dead}, map[string]any{"query": "x"}), tools.CodeNetworkError, "search backend")

	assertFail(t, search(t, Options{SearchURL: "ftp://example.com/search"}, map[string]any{"query": "x"}),
		tools.CodeExecutionError, "is invalid")
	assertFail(t, search(t, Options{SearchURL: "http://169.254.169.254/search"}, map[string]any{"query": "x"}),
		tools.CodeDenied, "is blocked")
}

// The allow-list is for the model's fetches; the operator's search backend is exempt.
func TestSearchIgnoresAllowList(t *testing.T) {
	res := search(t, Options{SearchURL: searx(t, 1, nil), AllowHosts: []string{"example.com"}}, map[string]any{"query": "x"})
	assert.Assert(t, res.Success, res.Output)
}

func TestSearchInvalidArguments(t *testing.T) {
	opts := Options{SearchURL: "http://127.0.0.1:1/search"}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing query", map[string]any{}, "'query' is required"},
		{"empty query", map[string]any{"query": ""}, "query"},
		{"blank query", map[string]any{"query": "   "}, "The query is empty"},
		{"zero results", map[string]any{"query": "x", "num_results": 0}, "num_results"},
		{"too many results", map[string]any{"query": "x", "num_results": 21}, "num_results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertFail(t, search(t, opts, tc.args), tools.CodeInvalidArgument, tc.want)
		})
	}
}

func TestSearchSpec(t *testing.T) {
	ts := Tools(Options{})
	assert.Equal(t, len(ts), 2)
	assert.Equal(t, ts[0].Spec().Name, "fetch_webpage")
	assert.Equal(t, ts[0].Spec().Risk, tools.RiskSafeWrite)
	s := ts[1].Spec()
	assert.Equal(t, s.Name, "web_search")
	assert.Equal(t, s.Risk, tools.RiskReadOnly)
	assert.Check(t, !ts[1].RequiresApproval(tools.Args{"query": "x"}, nil))
	assert.DeepEqual(t, s.Parameters.Required, []string{"query"})
}

func TestOptionsFromEnv(t *testing.T) {
	t.Setenv(EnvSearchURL, " http://localhost:8888/search ")
	t.Setenv(EnvAllowHosts, "example.com, docs.go.dev\tgithub.com,,")
	opts := OptionsFromEnv()
	assert.Equal(t, opts.SearchURL, "http://localhost:8888/search")
	assert.DeepEqual(t, opts.AllowHosts, []string{"example.com", "docs.go.dev", "github.com"})

	t.Setenv(EnvSearchURL, "")
	t.Setenv(EnvAllowHosts, "")
	opts = OptionsFromEnv()
	assert.Equal(t, opts.SearchURL, "")
	assert.Equal(t, len(opts.AllowHosts), 0)
}
