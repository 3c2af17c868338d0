package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentrunner/runner/tools"
)

// SearchName is web_search's canonical name.
const SearchName = "web_search"

const searchTimeout = 20 * time.Second

type searchTool struct {
	client    *http.Client
	url       string
	maxBytes  int64
	userAgent string
}

func (t *searchTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        SearchName,
		Description: "Search the web. Returns titles, URLs and snippets; read a result in full with fetch_webpage.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"query":       tools.String("The search query.").WithMinLength(1),
			"num_results": tools.Integer("How many results to return.").WithRange(1, 20).WithDefault(5),
		}, "query"),
		Risk: tools.RiskReadOnly,
	}
}

func (t *searchTool) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

func (t *searchTool) Validate(args tools.Args, _ *tools.Workspace) *tools.Error {
	if strings.TrimSpace(args.String("query")) == "" {
		return tools.Errorf(tools.CodeInvalidArgument, "Pass a few keywords as the query.", "The query is empty")
	}
	if n := args.Int("num_results"); args.Has("num_results") && (n < 1 || n > 20) {
		return tools.Errorf(tools.CodeInvalidArgument, "Ask for 1 to 20 results.", "num_results %d is out of range", n)
	}
	return nil
}

// searxResponse is the part of SearXNG's JSON output the tool reads.
type searxResponse struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

// Execute implements tools.Tool; whatever it reports has the search URL's credentials
// scrubbed (transport errors quote the request URL).
func (t *searchTool) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	res := t.execute(ctx, args, ws)
	if u, err := url.Parse(t.url); err == nil && u.User != nil && res.Error != nil {
		r := strings.NewReplacer(u.User.String()+"@", redactedUser(u)+"@", u.User.Username()+":***@", redactedUser(u)+"@")
		res.Output, res.Error.Message = r.Replace(res.Output), r.Replace(res.Error.Message)
	}
	return res
}

func (t *searchTool) execute(ctx context.Context, args tools.Args, _ *tools.Workspace) tools.Result {
	if t.url == "" {
		return tools.Failf(tools.CodeExecutionError,
			"Set "+EnvSearchURL+" to a SearXNG instance with the JSON format enabled, e.g. http://localhost:8888/search. Until then, use fetch_webpage on a known URL.",
			"web_search is not configured: no search backend URL")
	}
	query := strings.TrimSpace(args.String("query"))
	n := 5
	if args.Has("num_results") {
		n = args.Int("num_results")
	}
	endpoint, err := searchEndpoint(t.url, query)
	if err != nil {
		return tools.Failf(tools.CodeExecutionError, "Fix "+EnvSearchURL+"; it must be an http(s) URL such as http://localhost:8888/search.",
			"The search backend URL '%s' is invalid: %v", redactURL(t.url), err)
	}
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return tools.Failf(tools.CodeExecutionError, "", "Cannot build the search request: %v", err)
	}
	req.Header.Set("User-Agent", t.userAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return tools.Fail(requestError(err, "search backend "+redactURL(t.url), searchTimeout))
	}
	defer func() { _ = resp.Body.Close() }() // a response body: Close loses no data
	data, _, err := readBody(resp.Body, t.maxBytes)
	if err != nil {
		return tools.Fail(requestError(err, "search backend "+redactURL(t.url), searchTimeout))
	}
	if resp.StatusCode >= 400 {
		suggestion := "Check that the search backend is running and reachable."
		if resp.StatusCode == http.StatusForbidden {
			// SearXNG answers 403 when the json format is not enabled.
			suggestion = "Enable the json format on the SearXNG instance (search.formats: [html, json] in settings.yml)."
		}
		return tools.Failf(tools.CodeNetworkError, suggestion, "Search backend returned HTTP %s: %s",
			resp.Status, bodyExcerpt(data)).WithMeta("status_code", resp.StatusCode)
	}
	var parsed searxResponse
	if err := json.Unmarshal(data, &parsed); err != nil {
		return tools.Failf(tools.CodeExecutionError, "Point "+EnvSearchURL+" at a SearXNG /search endpoint that serves format=json.",
			"The search backend did not return the expected JSON (%v): %s", err, bodyExcerpt(data))
	}
	results := parsed.Results
	if len(results) > n {
		results = results[:n]
	}
	if len(results) == 0 {
		return tools.OK(fmt.Sprintf("No results for %q. Try other keywords.", query)).
			WithMeta("query", query).WithMeta("results", 0)
	}
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, oneLine(r.Title), r.URL)
		if s := oneLine(r.Content); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	return tools.OK(strings.TrimRight(b.String(), "\n")).WithMeta("query", query).WithMeta("results", len(results))
}

// searchEndpoint adds q and format=json to the configured URL, keeping its own query
// parameters (a SearXNG URL may carry categories or a language).
func searchEndpoint(base, query string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("want an http or https URL with a host")
	}
	q := u.Query()
	q.Set("q", query)
	q.Set("format", "json")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// redactURL hides the credentials of the operator's search URL
// (RUNNER_SEARCH_URL=https://user:pass@host/search) in what the model and the
// transcript see: user:xxxxx@, and a lone user name (often a token) as xxxxx@.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return strings.Replace(u.String(), u.User.String()+"@", redactedUser(u)+"@", 1)
}

// redactedUser is how a URL's userinfo is shown.
func redactedUser(u *url.URL) string {
	if _, ok := u.User.Password(); ok {
		return u.User.Username() + ":xxxxx"
	}
	return "xxxxx"
}
