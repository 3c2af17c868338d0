package providers_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/model/retry"
)

// closedAddr is a 127.0.0.1 port nothing listens on: every request is refused.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := l.Addr().String()
	assert.NilError(t, l.Close())
	return addr
}

// Issue 16 A: a lone user name in a server URL (a token, OPENAI_BASE_URL=http://TOKEN@host)
// leaked through Go's url.Error, which redacts only passwords, and the OpenAI pre-check's
// "cannot reach ... at http://user:PASSWORD@..." printed the password. Each provider's
// pre-check and request fail against a closed port; no message may hold the token.
func TestURLTokenInServerErrorsIsRedacted(t *testing.T) {
	addr := closedAddr(t)
	const token, password = "tok-lone-user-4242", "pw-in-url-4242"
	for _, tc := range []struct{ spec, name, value string }{
		{"openai:m", "OPENAI_BASE_URL", "http://" + token + "@" + addr + "/v1"},
		{"openai:m", "OPENAI_BASE_URL", "http://me:" + password + "@" + addr + "/v1"},
		{"openai-responses:m", "OPENAI_BASE_URL", "http://" + token + "@" + addr + "/v1"},
		{"ollama:m", "OLLAMA_HOST", token + "@" + addr},
		{"ollama:m", "OLLAMA_HOST", "http://me:" + password + "@" + addr},
		{"anthropic:m", "ANTHROPIC_BASE_URL", "http://" + token + "@" + addr},
		{"gemini:m", "GEMINI_BASE_URL", "http://" + token + "@" + addr},
	} {
		vars := map[string]string{tc.name: tc.value, "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k"}
		m, err := providers.Open(tc.spec, providers.OpenOptions{Getenv: env(vars), Retries: 1, Retry: retry.Options{Sleep: func(context.Context, time.Duration) error { return nil }}})
		assert.NilError(t, err, tc.spec)
		var msgs []string
		if err := providers.Check(context.Background(), m); err != nil {
			msgs = append(msgs, err.Error())
		}
		if _, err := providers.Probe(context.Background(), m); err != nil {
			msgs = append(msgs, err.Error())
		}
		_, err = m.Step(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
		assert.Assert(t, err != nil, tc.spec)
		msgs = append(msgs, err.Error())
		for _, msg := range msgs {
			assert.Assert(t, !strings.Contains(msg, token) && !strings.Contains(msg, password), "%s=%s: %s", tc.name, tc.value, msg)
			assert.Assert(t, strings.Contains(msg, "127.0.0.1"), "the server is still named: %s", msg)
		}
	}
}
