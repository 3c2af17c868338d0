package openai_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/openai"
	"github.com/agentrunner/runner/runner/model/providers"
)

func check(t *testing.T, cfg openai.Config) error {
	t.Helper()
	cfg.Model = "gpt-4o-mini"
	m, err := openai.New(cfg)
	assert.NilError(t, err)
	return providers.Check(context.Background(), m)
}

func TestCheckReachableServerPasses(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{})
	defer srv.Close()
	assert.NilError(t, check(t, openai.Config{BaseURL: srv.OpenAIURL()}))

	// A server without /models answered: that is enough.
	nf := httptest.NewServer(http.NotFoundHandler())
	defer nf.Close()
	assert.NilError(t, check(t, openai.Config{BaseURL: nf.URL + "/v1"}))
}

func TestCheckUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	err = check(t, openai.Config{BaseURL: "http://" + addr + "/v1"})
	assert.Check(t, is.ErrorContains(err, "cannot reach the OpenAI-compatible server at http://"+addr+"/v1"))
	assert.Check(t, is.ErrorContains(err, "is the server running?"))
}

// A host that does not resolve is named as a DNS failure. The dialer fails the way Go's
// resolver does for an unknown name, so the test needs no DNS server.
func TestCheckDNSFailure(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "llm.example.internal", IsNotFound: true}}
	}}}
	err := check(t, openai.Config{BaseURL: "http://llm.example.internal:8080/v1", HTTPClient: client})
	assert.Check(t, is.ErrorContains(err, `DNS lookup of "llm.example.internal" failed (no such host); check OPENAI_BASE_URL`))
}

func TestCheckRejectedKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
	}))
	defer srv.Close()
	err := check(t, openai.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-wrong"})
	assert.Check(t, is.ErrorContains(err, "rejected the key (HTTP 401): set OPENAI_API_KEY"))
}
