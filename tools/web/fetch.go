package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/agentrunner/runner/tools"
)

// FetchName is fetch_webpage's canonical name.
const FetchName = "fetch_webpage"

// fetchTool holds two guarded clients: closed refuses loopback and private addresses
// (a task without network: true), open allows them. Separate clients keep their
// connection pools apart, so a connection opened for one task is never reused by a
// task that may not open it.
type fetchTool struct {
	open, closed *http.Client
	openGuard    *guard
	closedGuard  *guard
	maxBytes     int64
	userAgent    string
}

func (t *fetchTool) Spec() tools.Spec {
	return tools.Spec{
		Name: FetchName,
		Description: "Fetch a web page or API response over HTTP(S). HTML is returned as readable markdown; " +
			"JSON and text as they are; binary content only as its type and size. Reads at most 1 MB. " +
			"Use POST with a body to call an API; POST requests may need approval.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"url":             tools.String("The http:// or https:// URL to fetch.").WithMinLength(1),
			"method":          tools.String("HTTP method.").WithEnum("GET", "POST").WithDefault("GET"),
			"headers":         tools.StringMap("Extra request headers, e.g. {\"Accept\": \"application/json\"}."),
			"body":            tools.String("Request body, sent with POST only."),
			"timeout_seconds": tools.Integer("Seconds before the request is abandoned.").WithRange(1, 60).WithDefault(10),
		}, "url"),
		Risk: tools.RiskSafeWrite,
	}
}

// RequiresApproval: a GET only reads, but a POST can change things on the other side.
func (t *fetchTool) RequiresApproval(args tools.Args, _ *tools.Workspace) bool {
	return strings.EqualFold(args.String("method"), http.MethodPost)
}

// confined reports whether a call must stay off loopback and private addresses: unless
// the task gave network: true, a fetch could otherwise reach the model server or any
// other service on the CI machine's network. No workspace means no permission.
func confined(ws *tools.Workspace) bool { return ws == nil || !ws.Network }

func (t *fetchTool) guardFor(ws *tools.Workspace) (*guard, *http.Client) {
	if confined(ws) {
		return t.closedGuard, t.closed
	}
	return t.openGuard, t.open
}

func (t *fetchTool) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	raw := strings.TrimSpace(args.String("url"))
	u, err := url.Parse(raw)
	if err != nil {
		return tools.Errorf(tools.CodeInvalidArgument, "Pass a full URL such as https://example.com/page.",
			"'%s' is not a valid URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return tools.Errorf(tools.CodeInvalidArgument, "Only http:// and https:// URLs can be fetched; use read_file for local files.",
			"Unsupported URL scheme '%s' in '%s'", u.Scheme, raw)
	}
	if u.Hostname() == "" {
		return tools.Errorf(tools.CodeInvalidArgument, "Pass a full URL such as https://example.com/page.",
			"URL '%s' has no host", raw)
	}
	method := strings.ToUpper(args.String("method"))
	if method != "" && method != http.MethodGet && method != http.MethodPost {
		return tools.Errorf(tools.CodeInvalidArgument, "Use GET or POST.", "Unsupported method '%s'", method)
	}
	if args.Has("body") && args.String("body") != "" && method != http.MethodPost {
		return tools.Errorf(tools.CodeInvalidArgument, "Set method to POST to send a body, or drop the body.",
			"A body can only be sent with POST")
	}
	for k, v := range args.StringMap("headers") {
		if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
			return tools.Errorf(tools.CodeInvalidArgument, "Header names are tokens like 'Accept'; values cannot contain newlines.",
				"Invalid header '%s'", k)
		}
	}
	if n := args.Int("timeout_seconds"); args.Has("timeout_seconds") && (n < 1 || n > 60) {
		return tools.Errorf(tools.CodeInvalidArgument, "Use a timeout between 1 and 60 seconds.",
			"timeout_seconds %d is out of range", n)
	}
	g, _ := t.guardFor(ws)
	if err := g.checkURL(u, true); err != nil {
		return requestError(err, raw, 0)
	}
	return nil
}

func (t *fetchTool) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	raw := strings.TrimSpace(args.String("url"))
	method := strings.ToUpper(args.String("method"))
	if method == "" {
		method = http.MethodGet
	}
	timeout := 10 * time.Second
	if args.Has("timeout_seconds") {
		timeout = time.Duration(args.Int("timeout_seconds")) * time.Second
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// fail names our timeout only when it, not the caller's deadline, ran out.
	fail := func(err error) tools.Result {
		if parent.Err() != nil {
			return tools.Fail(requestError(err, raw, 0))
		}
		return tools.Fail(requestError(err, raw, timeout))
	}

	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(args.String("body"))
	}
	req, err := http.NewRequestWithContext(ctx, method, raw, body)
	if err != nil {
		return tools.Failf(tools.CodeInvalidArgument, "Pass a full URL such as https://example.com/page.",
			"Cannot build a request for '%s': %v", raw, err)
	}
	req.Header.Set("User-Agent", t.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.8")
	for k, v := range args.StringMap("headers") {
		req.Header.Set(k, v)
	}

	_, client := t.guardFor(ws)
	resp, err := client.Do(req)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = resp.Body.Close() }() // a response body: Close loses no data
	data, truncated, err := readBody(resp.Body, t.maxBytes)
	if err != nil {
		return fail(err)
	}

	final := resp.Request.URL.String()
	ctype := resp.Header.Get("Content-Type")
	meta := map[string]any{
		"status_code":  resp.StatusCode,
		"content_type": ctype,
		"bytes":        len(data),
		"truncated":    truncated,
		"final_url":    final,
	}
	if resp.StatusCode >= 400 {
		res := tools.Failf(tools.CodeNetworkError, statusSuggestion(resp.StatusCode),
			"HTTP %s from %s: %s", resp.Status, final, bodyExcerpt(data))
		res.Metadata = meta
		return res
	}
	out, kind := render(data, ctype, final)
	meta["format"] = kind
	if truncated {
		out += "\n\n[Truncated: the response is larger than " + sizeText(t.maxBytes) + "; only the first " + sizeText(t.maxBytes) + " was read.]"
	}
	res := tools.OK(out)
	res.Metadata = meta
	return res
}

func statusSuggestion(code int) string {
	switch {
	case code == http.StatusNotFound || code == http.StatusGone:
		return "Check the URL; the page does not exist."
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return "The server refused access; the page may need credentials or may block automated clients."
	case code == http.StatusTooManyRequests:
		return "The server is rate limiting; wait before retrying or use another source."
	case code >= 500:
		return "The server failed; retry later or use another source."
	}
	return "Check the URL, method, headers and body."
}
