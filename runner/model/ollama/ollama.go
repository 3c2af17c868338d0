// Package ollama is the model provider for an Ollama server, through Ollama's own Go
// client (github.com/ollama/ollama/api) on /api/chat with native tool calling.
package ollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/agentrunner/runner/runner/model"
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
	// HTTPClient is the client to send requests with (nil: a default one). Its transport
	// is wrapped; its Timeout should be 0, since the caller's context bounds each request.
	HTTPClient *http.Client
	// KeepAlive, when set, is sent as keep_alive (how long Ollama keeps the model loaded).
	KeepAlive time.Duration
}

// Model talks to one Ollama model.
type Model struct {
	cfg    Config
	base   *url.URL
	client *api.Client
	tools  toolcache.Cache[api.Tools]
}

// New returns a Model for cfg. It makes no request; call Check before the first step.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("ollama: missing model name (e.g. ollama:qwen3:4b)")
	}
	base := HostURL(cfg.Host)
	hc := wire.Client(cfg.HTTPClient, wire.ArgsObject)
	return &Model{cfg: cfg, base: base, client: api.NewClient(base, hc)}, nil
}

// Name returns "ollama:MODEL".
func (m *Model) Name() string { return "ollama:" + m.cfg.Model }

// Host returns the server's base URL.
func (m *Model) Host() string { return m.base.String() }

// Step sends the conversation to /api/chat.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	chat, err := m.chatRequest(req)
	if err != nil {
		return nil, err
	}
	ctx, capture := wire.WithCapture(ctx)
	var acc accumulator
	err = m.client.Chat(ctx, chat, acc.add)
	if err != nil {
		return nil, m.providerError(err, capture)
	}
	if !acc.done {
		// The client library ends quietly when the body stops early; a reply without its
		// final "done" record is a dropped connection, not an answer.
		return nil, &model.ProviderError{
			Provider: "ollama", Host: m.Host(), Temporary: true,
			Message: "connection dropped: the response ended before its final record",
		}
	}
	return acc.response(stepNumber(req)), nil
}

// providerError maps the client's errors (api.StatusError, transport errors, bodies that
// do not parse) to a classified ProviderError.
func (m *Model) providerError(err error, capture *wire.Capture) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller's deadline or the retry wrapper's request timeout: it decides.
		return &model.ProviderError{Provider: "ollama", Host: m.Host(), Err: err}
	}
	status, retryAfter := capture.Status()
	var se api.StatusError
	var ae api.AuthorizationError
	switch {
	case errors.As(err, &se):
		if se.StatusCode != 0 {
			status = se.StatusCode
		}
		ra, _ := model.ParseRetryAfter(retryAfter, time.Now())
		return model.HTTPError("ollama", m.Host(), status, se.ErrorMessage, ra, err)
	case errors.As(err, &ae):
		return model.HTTPError("ollama", m.Host(), ae.StatusCode, "unauthorized", 0, err)
	}
	pe := model.TransportError("ollama", m.Host(), err)
	if !pe.Temporary {
		pe.Message = "unexpected response: " + model.Truncate(err.Error(), 300)
	}
	return pe
}

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
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: path}
}

// stepNumber is the 1-based number of the step req asks for.
func stepNumber(req *model.Request) int {
	n := 1
	for _, msg := range req.Messages {
		if msg.Role == model.RoleAssistant {
			n++
		}
	}
	return n
}
