package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

func fetch(t *testing.T, opts Options, url string, extra ...any) tools.Result {
	t.Helper()
	args := map[string]any{"url": url}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	return run(t, opts, FetchName, args)
}

func TestFetchHTMLToMarkdown(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{"/docs/page.html": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>T</title><style>body{color:red}</style>
<script>alert("x")</script></head><body><h1>Install</h1><p>Run <code>make</code> then read
<a href="next.html">the next page</a>.</p><ul><li>one</li><li>two</li></ul>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
<noscript>enable js</noscript></body></html>`)
	}})
	res := fetch(t, Options{}, srv.URL+"/docs/page.html")
	assert.Assert(t, res.Success, res.Output)
	for _, want := range []string{"# Install", "`make`", "[the next page](" + srv.URL + "/docs/next.html)", "- one", "| k | v |"} {
		assert.Check(t, is.Contains(res.Output, want))
	}
	for _, gone := range []string{"alert", "color:red", "enable js", "<h1>"} {
		assert.Check(t, !strings.Contains(res.Output, gone), "%q left in %q", gone, res.Output)
	}
	assert.Equal(t, res.Metadata["format"], "markdown")
	assert.Equal(t, res.Metadata["status_code"], 200)
	assert.Equal(t, res.Metadata["content_type"], "text/html; charset=utf-8")
	assert.Equal(t, res.Metadata["truncated"], false)
	assert.Equal(t, res.Metadata["final_url"], srv.URL+"/docs/page.html")
}

func TestFetchTextLike(t *testing.T) {
	const js = `{"name": "runner",  "tags": ["a", "b"]}`
	srv := server(t, map[string]http.HandlerFunc{
		"/json": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, js)
		},
		"/text": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "line 1\n<b>not html</b>\n")
		},
		"/latin1": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		},
		"/untyped": func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil // stop net/http from sniffing for us
			fmt.Fprint(w, "plain words")
		},
	})
	for _, tc := range []struct{ path, want string }{
		{"/json", js},
		{"/text", "line 1\n<b>not html</b>\n"},
		{"/latin1", "café"},
		{"/untyped", "plain words"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := fetch(t, Options{}, srv.URL+tc.path)
			assert.Assert(t, res.Success, res.Output)
			assert.Equal(t, res.Output, tc.want)
			assert.Equal(t, res.Metadata["format"], "text")
			assert.Equal(t, res.Metadata["bytes"], len(tc.want)-strings.Count(tc.want, "é"))
		})
	}
}

func TestFetchBinary(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 2040)...)
	srv := server(t, map[string]http.HandlerFunc{
		"/img": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Write(png)
		},
		"/mislabelled": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("ab\x00\x00cd"))
		},
	})
	res := fetch(t, Options{}, srv.URL+"/img")
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "[Binary content: image/png, 2 KB. Not shown; download it with a command if you need it.]")
	assert.Equal(t, res.Metadata["bytes"], 2048)
	assert.Equal(t, res.Metadata["format"], "binary")

	res = fetch(t, Options{}, srv.URL+"/mislabelled")
	assert.Assert(t, res.Success, res.Output)
	assert.Check(t, is.Contains(res.Output, "Binary content: text/plain, 6 bytes"))
}

func TestFetchTruncatesAtOneMB(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{"/big": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		line := strings.Repeat("x", 1023) + "\n"
		for range 1100 { // 1100 KB
			io.WriteString(w, line)
		}
	}})
	res := fetch(t, Options{}, srv.URL+"/big")
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Metadata["truncated"], true)
	assert.Equal(t, res.Metadata["bytes"], 1<<20)
	assert.Check(t, strings.HasSuffix(res.Output, "[Truncated: the response is larger than 1 MB; only the first 1 MB was read.]"))
	assert.Check(t, strings.HasPrefix(res.Output, strings.Repeat("x", 1023)+"\n"))
}

func TestFetchHTTPErrors(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{
		"/missing": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no such page: /missing", http.StatusNotFound)
		},
		"/boom": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, strings.Repeat("stack frame\n", 200))
		},
	})
	res := fetch(t, Options{}, srv.URL+"/missing")
	assertFail(t, res, tools.CodeNetworkError, "HTTP 404 Not Found", "no such page: /missing")
	assert.Equal(t, res.Metadata["status_code"], 404)
	assert.Check(t, is.Contains(res.Error.Suggestion, "Check the URL"))

	res = fetch(t, Options{}, srv.URL+"/boom")
	assertFail(t, res, tools.CodeNetworkError, "HTTP 500")
	assert.Check(t, len(res.Error.Message) < 700, "excerpt not bounded: %d bytes", len(res.Error.Message))
	assert.Check(t, is.Contains(res.Error.Message, "..."))
}

func TestFetchTimeout(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{"/slow": func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}})
	start := time.Now()
	res := fetch(t, Options{}, srv.URL+"/slow", "timeout_seconds", 1)
	assertFail(t, res, tools.CodeTimeout, "timed out after 1s")
	assert.Check(t, time.Since(start) < 3*time.Second)

	// The caller's deadline counts too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res = runCtx(t, ctx, Options{}, FetchName, map[string]any{"url": srv.URL + "/slow"})
	assertFail(t, res, tools.CodeTimeout, "timed out")
	assert.Check(t, !strings.Contains(res.Error.Message, "after 10s"), res.Error.Message)
}

func TestFetchConnectionRefused(t *testing.T) {
	srv := server(t, nil)
	url := srv.URL
	srv.Close()
	assertFail(t, fetch(t, Options{}, url), tools.CodeNetworkError, "failed")
}

func TestFetchRedirects(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{
		"/hop/": func(w http.ResponseWriter, r *http.Request) {
			var n int
			_, _ = fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/hop/"), "%d", &n) // a test server: the client checks what arrived
			if n == 0 {
				fmt.Fprint(w, "arrived")
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
		},
		"/metadata": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/", http.StatusFound)
		},
		"/metadata-name": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://metadata.google.internal/computeMetadata/v1/", http.StatusMovedPermanently)
		},
		"/file": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		},
	})
	res := fetch(t, Options{}, srv.URL+"/hop/5")
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "arrived")
	assert.Equal(t, res.Metadata["final_url"], srv.URL+"/hop/0")

	assertFail(t, fetch(t, Options{}, srv.URL+"/hop/6"), tools.CodeNetworkError, "stopped after 5 redirects")
	assertFail(t, fetch(t, Options{}, srv.URL+"/metadata"), tools.CodeDenied, "169.254.169.254 is blocked", "metadata")
	assertFail(t, fetch(t, Options{}, srv.URL+"/metadata-name"), tools.CodeDenied, "metadata.google.internal is blocked")
	assertFail(t, fetch(t, Options{}, srv.URL+"/file"), tools.CodeNetworkError, "unsupported URL scheme")
}

func TestFetchBlockedAddresses(t *testing.T) {
	for _, url := range []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://169.254.10.1:8080/",
		"http://[fe80::1]/",
		"http://[fd00:ec2::254]/",
		"http://100.100.100.200/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/",
		"http://[64:ff9b::a9fe:a9fe]/", // NAT64 spelling of 169.254.169.254
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://METADATA.google.internal./",
	} {
		t.Run(url, func(t *testing.T) {
			assertFail(t, fetch(t, Options{}, url), tools.CodeDenied, "is blocked")
		})
	}
}

// Execute alone skips Validate's URL check, so this proves the dial-time guard: the
// same refusal a hostname that resolves (or rebinds) to the address would meet.
func TestFetchDialGuard(t *testing.T) {
	tl := Tools(Options{})[0]
	for _, url := range []string{"http://169.254.169.254/", "http://[fe80::1]:80/", "http://100.100.100.200/"} {
		t.Run(url, func(t *testing.T) {
			res := tl.Execute(context.Background(), tools.Args{"url": url, "timeout_seconds": 2.0}, nil)
			assertFail(t, res, tools.CodeDenied, "is blocked")
		})
	}
}

func TestFetchBlockPrivate(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "local")
	}})
	assert.Assert(t, fetch(t, Options{}, srv.URL).Success, "loopback is allowed by default")
	res := fetch(t, Options{BlockPrivate: true}, srv.URL)
	assertFail(t, res, tools.CodeDenied, "127.0.0.1 is blocked", "local addresses")
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	assertFail(t, fetch(t, Options{BlockPrivate: true}, localhost), tools.CodeDenied, "is blocked")
}

func TestFetchAllowList(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{
		"/ok": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "allowed") },
		"/away": func(w http.ResponseWriter, r *http.Request) {
			// Same server, other name: the allow-list is by host name.
			http.Redirect(w, r, strings.Replace("http://"+r.Host, "localhost", "127.0.0.1", 1)+"/ok", http.StatusFound)
		},
	})
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	opts := Options{AllowHosts: []string{"https://LOCALHOST:9999/path", "example.com"}}

	res := fetch(t, opts, localhost+"/ok")
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "allowed")

	assertFail(t, fetch(t, opts, srv.URL+"/ok"), tools.CodeDenied, "127.0.0.1 is blocked", "not in the allowed hosts (localhost, example.com)")
	assertFail(t, fetch(t, opts, localhost+"/away"), tools.CodeDenied, "not in the allowed hosts")
}

func TestAllowedHosts(t *testing.T) {
	g := &guard{allowHosts: normalizeHosts([]string{"*.example.com", " Docs.Go.dev ", "[::1]:8080", ""})}
	assert.DeepEqual(t, g.allowHosts, []string{"example.com", "docs.go.dev", "::1"})
	for host, want := range map[string]bool{
		"example.com": true, "api.example.com": true, "badexample.com": false,
		"docs.go.dev": true, "go.dev": false, "::1": true, "evil.com": false,
	} {
		assert.Equal(t, g.allowed(host), want, host)
	}
	assert.Check(t, (&guard{}).allowed("anything.org"))
}

func TestFetchPOST(t *testing.T) {
	srv := server(t, map[string]http.HandlerFunc{"/echo": func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Token"), body)
	}})
	res := fetch(t, Options{}, srv.URL+"/echo", "method", "POST", "body", `{"a":1}`,
		"headers", map[string]any{"Content-Type": "application/json", "X-Token": "t0k"})
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, `POST application/json t0k {"a":1}`)

	res = fetch(t, Options{UserAgent: "ua-test"}, srv.URL+"/echo", "headers", map[string]any{"X-Token": "g"})
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "GET  g ")
}

func TestFetchRequiresApproval(t *testing.T) {
	reg := newRegistry(t, Options{})
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{`{"url":"http://example.com"}`, false},
		{`{"url":"http://example.com","method":"GET"}`, false},
		{`{"url":"http://example.com","method":"POST","body":"x"}`, true},
	} {
		call, err := reg.Prepare(FetchName, []byte(tc.raw))
		assert.Assert(t, err == nil, "%v", err)
		assert.Equal(t, call.RequiresApproval(nil), tc.want, tc.raw)
		assert.Equal(t, call.Risk(), tools.RiskSafeWrite)
	}
}

func TestFetchInvalidArguments(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"file scheme", map[string]any{"url": "file:///etc/passwd"}, "Unsupported URL scheme 'file'"},
		{"ftp scheme", map[string]any{"url": "ftp://example.com/x"}, "Unsupported URL scheme 'ftp'"},
		{"no scheme", map[string]any{"url": "example.com/page"}, "Unsupported URL scheme ''"},
		{"no host", map[string]any{"url": "http:///path"}, "has no host"},
		{"unparsable", map[string]any{"url": "http://[::1"}, "not a valid URL"},
		{"missing url", map[string]any{}, "'url' is required"},
		{"bad method", map[string]any{"url": "http://example.com", "method": "DELETE"}, "method"},
		{"timeout too long", map[string]any{"url": "http://example.com", "timeout_seconds": 61}, "timeout_seconds"},
		{"timeout zero", map[string]any{"url": "http://example.com", "timeout_seconds": 0}, "timeout_seconds"},
		{"body with GET", map[string]any{"url": "http://example.com", "body": "x"}, "only be sent with POST"},
		{"bad header", map[string]any{"url": "http://example.com", "headers": map[string]any{"Bad Name": "v"}}, "Invalid header 'Bad Name'"},
		{"header injection", map[string]any{"url": "http://example.com", "headers": map[string]any{"X": "a\r\nHost: evil"}}, "Invalid header 'X'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertFail(t, run(t, Options{}, FetchName, tc.args), tools.CodeInvalidArgument, tc.want)
		})
	}
}

// A caller's client (here httptest's, which trusts the test certificate) lends its TLS
// settings; the guard still applies.
func TestFetchWithHTTPClient(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secure")
	}))
	defer srv.Close()
	assertFail(t, fetch(t, Options{}, srv.URL), tools.CodeNetworkError, "certificate")

	res := fetch(t, Options{HTTPClient: srv.Client()}, srv.URL)
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "secure")

	// By name, so that the refusal comes from the dialer installed in the copied transport.
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	assertFail(t, fetch(t, Options{HTTPClient: srv.Client(), BlockPrivate: true}, localhost), tools.CodeDenied, "is blocked")
}

// Without network: true a fetch must not reach services on the runner's machine or
// network (an Ollama or vLLM server answers on 127.0.0.1), whichever way the address
// is spelt, and neither by a redirect. With network: true loopback is allowed again,
// metadata addresses are not.
func TestFetchNoNetworkRefusesLocal(t *testing.T) {
	var posted int
	srv := server(t, map[string]http.HandlerFunc{
		"/api/generate": func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				posted++
			}
			fmt.Fprint(w, "model server")
		},
		"/to-metadata": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		},
	})
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	closed := workspace(t, false)
	for _, u := range []string{
		srv.URL + "/api/generate",
		"http://localhost:" + port + "/api/generate",
		"http://[::ffff:127.0.0.1]:" + port + "/api/generate",
		"http://[::ffff:7f00:1]:" + port + "/api/generate",
		"http://[::127.0.0.1]:" + port + "/api/generate",
		"http://[::1]:" + port + "/",
		"http://0.0.0.0:" + port + "/",
		"http://0.1.2.3:" + port + "/",
		"http://10.0.0.1:" + port + "/",
		"http://172.16.0.1/", "http://192.168.0.1/", "http://100.64.0.1/", "http://[fd00::1]/",
		"http://[2002:7f00:1::]:" + port + "/", // 6to4 spelling of 127.0.0.1
		"http://[fe80::1]/",
	} {
		t.Run(u, func(t *testing.T) {
			res := runIn(t, context.Background(), closed, Options{}, FetchName,
				map[string]any{"url": u, "method": "POST", "body": `{"prompt":"x"}`, "timeout_seconds": 2})
			assertFail(t, res, tools.CodeDenied, "is blocked")
		})
	}
	assert.Equal(t, posted, 0, "a POST reached the local server")

	// Through the dialer alone (Execute skips Validate's literal check): a name that
	// resolves to loopback is refused after DNS.
	tl := Tools(Options{})[0]
	res := tl.Execute(context.Background(), tools.Args{"url": "http://localhost:" + port + "/api/generate"}, closed)
	assertFail(t, res, tools.CodeDenied, "is blocked")
	res = tl.Execute(context.Background(), tools.Args{"url": srv.URL + "/api/generate"}, nil)
	assertFail(t, res, tools.CodeDenied, "is blocked", "network: true") // no workspace, no network

	open := workspace(t, true)
	res = runIn(t, context.Background(), open, Options{}, FetchName, map[string]any{"url": "http://localhost:" + port + "/api/generate"})
	assert.Assert(t, res.Success, res.Output)
	res = runIn(t, context.Background(), open, Options{}, FetchName, map[string]any{"url": srv.URL + "/to-metadata"})
	assertFail(t, res, tools.CodeDenied, "169.254.169.254 is blocked")
	res = runIn(t, context.Background(), open, Options{}, FetchName, map[string]any{"url": "http://[::ffff:169.254.169.254]/"})
	assertFail(t, res, tools.CodeDenied, "is blocked")
}

// A redirect from an allowed host to loopback is refused at the hop, by name and by
// address. The allowed host is a server on loopback that the guard is told to treat as
// public (exempt), since a test cannot run a server on a public address.
func TestFetchRedirectToLoopbackRefused(t *testing.T) {
	var hit int
	target := server(t, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		hit++
		fmt.Fprint(w, "internal")
	}})
	targetName := strings.Replace(target.URL, "127.0.0.1", "localhost", 1)
	outside := server(t, map[string]http.HandlerFunc{
		"/ok": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "public page") },
		"/by-address": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/secret", http.StatusFound)
		},
		"/by-name": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, targetName+"/secret", http.StatusFound)
		},
		"/mapped": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, strings.Replace(target.URL, "127.0.0.1", "[::ffff:127.0.0.1]", 1), http.StatusFound)
		},
	})
	tl := Tools(Options{})[0].(*fetchTool)
	tl.closedGuard.exempt = strings.TrimPrefix(outside.URL, "http://")
	closed := workspace(t, false)
	get := func(u string) tools.Result {
		args := tools.Args{"url": u, "method": "GET", "timeout_seconds": 2.0}
		if err := tl.Validate(args, closed); err != nil {
			return tools.Fail(err)
		}
		return tl.Execute(context.Background(), args, closed)
	}
	outsideName := strings.Replace(outside.URL, "127.0.0.1", "localhost", 1) // by name: Validate checks literals
	res := get(outsideName + "/ok")
	assert.Assert(t, res.Success, "the exempt first hop must be reachable: %s", res.Output)
	for _, p := range []string{"/by-address", "/by-name", "/mapped"} {
		assertFail(t, get(outsideName+p), tools.CodeDenied, "is blocked")
	}
	assert.Equal(t, hit, 0, "a redirect reached the loopback server")
}
