package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{" 0.5 ", 500 * time.Millisecond, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"Sat, 01 Mar 2025 12:00:07 GMT", 7 * time.Second, true},
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0, true}, // in the past
	}
	for _, tc := range tests {
		got, ok := ParseRetryAfter(tc.in, now)
		assert.Equal(t, ok, tc.ok, tc.in)
		assert.Equal(t, got, tc.want, tc.in)
	}
}

func TestProviderErrorMessage(t *testing.T) {
	e := HTTPError("ollama", "http://127.0.0.1:11434", 500, "model runner crashed\n", 0, nil)
	assert.Error(t, e, "ollama at http://127.0.0.1:11434: HTTP 500 Internal Server Error: model runner crashed")
	assert.Assert(t, e.Temporary)
	assert.Assert(t, HTTPError("o", "h", 429, "", 0, nil).Temporary)
	assert.Assert(t, !HTTPError("o", "h", 404, "", 0, nil).Temporary)

	inner := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	te := TransportError("openai", "https://x/v1", inner)
	assert.Error(t, te, "openai at https://x/v1: connection failed: dial: connection refused")
	assert.Assert(t, te.Temporary)
	assert.Assert(t, errors.Is(te, syscall.ECONNREFUSED))
}

func TestIsConnectionError(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{io.EOF, true},
		{fmt.Errorf("post: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "dial", Err: errors.New("refused")}, true},
		{errors.New("http: server closed idle connection"), true},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "nope", IsNotFound: true}}, false},
		{errors.New("invalid character 'x' looking for beginning of value"), false},
		{&net.OpError{Op: "read", Err: context.DeadlineExceeded}, false}, // a deadline is the caller's business
		{nil, false},
	}
	for _, tc := range tests {
		assert.Equal(t, IsConnectionError(tc.err), tc.want, "%v", tc.err)
	}
}

func TestTruncate(t *testing.T) {
	assert.Equal(t, Truncate("héllo", 10), "héllo")
	assert.Equal(t, Truncate("héllo", 2), "h…") // does not cut the é in half
}

// ClassifyError is every provider's frame: the caller's deadline passes for the caller,
// a classified error stays, the provider's reading comes next, and the rest is a failed
// connection (temporary) or an unexpected response (not).
func TestClassifyError(t *testing.T) {
	own := errors.New("the provider's own error type")
	byProvider := func(err error) error {
		if errors.Is(err, own) {
			return HTTPError("p", "h", 429, "slow down", 0, err)
		}
		return nil
	}
	classify := func(err error) *ProviderError {
		t.Helper()
		var pe *ProviderError
		assert.Assert(t, errors.As(ClassifyError("p", "h", err, byProvider), &pe), "%v", err)
		return pe
	}

	pe := classify(fmt.Errorf("send: %w", context.DeadlineExceeded))
	assert.Assert(t, !pe.Temporary && pe.Message == "" && errors.Is(pe, context.DeadlineExceeded))

	already := &ProviderError{Provider: "p", Message: "stream cut short", Temporary: true}
	wrapped := fmt.Errorf("read: %w", already)
	assert.Equal(t, ClassifyError("p", "h", wrapped, byProvider), wrapped, "classified once")

	pe = classify(fmt.Errorf("call: %w", own))
	assert.Assert(t, pe.Temporary && pe.StatusCode == 429, "the provider's reading")

	pe = classify(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})
	assert.Assert(t, pe.Temporary)
	assert.ErrorContains(t, pe, "connection failed: ")

	pe = classify(errors.New("invalid character '<' looking for beginning of value"))
	assert.Assert(t, !pe.Temporary)
	assert.Equal(t, pe.Message, "unexpected response: invalid character '<' looking for beginning of value")
	assert.Equal(t, ClassifyError("p", "h", io.ErrUnexpectedEOF, nil).(*ProviderError).Temporary, true, "no reading of its own")
}
