package openai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentrunner/runner/runner/model"
)

// checkTimeout bounds the pre-flight request: a server that does not answer a model list
// in this time will not run a suite either.
const checkTimeout = 15 * time.Second

// Check is the pre-flight before the first scenario: one GET /models, so an unreachable
// server, a host that does not resolve or a rejected key is one clear error before any
// scenario starts, not one per scenario after the retries. A server without /models (it is
// optional for compatible servers) or one that does not list the model passes: many serve
// whatever name they are sent.
func (m *Model) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	_, err := m.client.ListModels(ctx)
	if err == nil {
		return nil
	}
	// Every message names the server; none may show its user info.
	return model.Redacted(m.checkError(err))
}

func (m *Model) checkError(err error) error {
	host := m.cfg.BaseURL
	if u, perr := url.Parse(m.cfg.BaseURL); perr == nil && u.Host != "" {
		host = u.Hostname()
	}
	var dnsErr *net.DNSError
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &dnsErr):
		return fmt.Errorf("cannot reach the OpenAI-compatible server at %s: DNS lookup of %q failed (%v); check OPENAI_BASE_URL for a typo, or the machine's DNS",
			m.Host(), host, dnsErr.Err)
	case errors.As(err, &apiErr) && (apiErr.HTTPStatusCode == http.StatusUnauthorized || apiErr.HTTPStatusCode == http.StatusForbidden),
		errors.As(err, &reqErr) && (reqErr.HTTPStatusCode == http.StatusUnauthorized || reqErr.HTTPStatusCode == http.StatusForbidden):
		return fmt.Errorf("the OpenAI-compatible server at %s rejected the key (HTTP %d): set OPENAI_API_KEY to a valid key", m.Host(), statusOf(apiErr, reqErr))
	case errors.As(err, &apiErr), errors.As(err, &reqErr):
		return nil // it answered: /models is optional, and the scenarios will say more
	case model.IsConnectionError(err), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cannot reach the OpenAI-compatible server at %s: %w; is the server running? (OPENAI_BASE_URL sets its address, e.g. http://127.0.0.1:8080/v1)",
			m.Host(), err)
	}
	return fmt.Errorf("OpenAI-compatible server at %s: listing models: %w", m.Host(), err)
}

func statusOf(a *goopenai.APIError, r *goopenai.RequestError) int {
	if a != nil {
		return a.HTTPStatusCode
	}
	if r != nil {
		return r.HTTPStatusCode
	}
	return 0
}
