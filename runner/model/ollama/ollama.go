// Package ollama is the model provider for an Ollama server: /api/chat with native tool
// calling, spoken through the wire types of Ollama's own Go package
// (github.com/ollama/ollama/api: api.ChatRequest, api.Message, api.ChatResponse). Its
// client (api.Client) runs the pre-flight check; chat requests are posted directly (see
// chat.go), because the client allocates an 8 MB line buffer per request.
package ollama

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/msgcache"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/runner/model/internal/wire"
)

// DefaultHost is where Ollama listens unless OLLAMA_HOST says otherwise.
const DefaultHost = "127.0.0.1:11434"

// Config configures a Model.
type Config struct {
	// Model is the Ollama model name, e.g. "qwen3:4b".
	Model string
	// Host is OLLAMA_HOST's value ("" means DefaultHost); see HostURL.
	Host string
	// Stream asks for a streamed response (NDJSON) instead of one JSON object.
	Stream bool
	// HTTPClient is the client to send requests with (nil: a default one). Its Timeout
	// should be 0, since the caller's context bounds each request.
	HTTPClient *http.Client
	// KeepAlive, when set, is sent as keep_alive (how long Ollama keeps the model loaded).
	KeepAlive time.Duration
}

// Model talks to one Ollama model. It is safe for concurrent use.
type Model struct {
	cfg    Config
	base   *url.URL
	client *api.Client  // the pre-flight check (/api/show)
	http   *http.Client // chat requests
	tools  toolcache.Cache[api.Tools]
	msgs   msgcache.Cache

	mu     sync.Mutex
	digest string // from /api/tags, once known (digestOf)
}

// New returns a Model for cfg. It makes no request; call Check before the first step.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("ollama: missing model name (e.g. ollama:qwen3:4b)")
	}
	base := HostURL(cfg.Host)
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Model{
		cfg:    cfg,
		base:   base,
		client: api.NewClient(base, wire.Client(cfg.HTTPClient, wire.ArgsObject)),
		http:   hc,
	}, nil
}

// Name returns "ollama:MODEL".
func (m *Model) Name() string { return "ollama:" + m.cfg.Model }

// Host returns the server's base URL, credentials redacted (it is shown to people).
func (m *Model) Host() string { return model.RedactURL(m.base.String()) }

// HostURL parses an OLLAMA_HOST value the way Ollama does: [scheme://]host[:port][/path],
// scheme http by default, port 11434 by default (80/443 when the scheme is given).
func HostURL(s string) *url.URL {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultHost
	}
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	// user:password@host: kept for the requests (HTTP basic auth), redacted by Host.
	var user *url.Userinfo
	if i := strings.LastIndex(hostport, "@"); i >= 0 {
		name, pass, hasPass := strings.Cut(hostport[:i], ":")
		name, _ = url.PathUnescape(name)
		pass, _ = url.PathUnescape(pass)
		user = url.User(name)
		if hasPass {
			user = url.UserPassword(name, pass)
		}
		hostport = hostport[i+1:]
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", defaultPort
		if hostport != "" {
			host = strings.Trim(hostport, "[]")
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		port = defaultPort
	}
	return &url.URL{Scheme: scheme, User: user, Host: net.JoinHostPort(host, port), Path: path}
}
