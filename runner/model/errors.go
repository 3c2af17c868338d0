package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentrunner/runner/runner/scrub"
)

// ProviderError is a failed model request, classified so that the retry wrapper can tell
// a passing fault (connection, 429, 5xx) from one that will not heal (other 4xx, a body
// that does not parse).
type ProviderError struct {
	// Provider is "ollama", "openai", ...
	Provider string
	// Host is where the request went (host:port or base URL), for the user to check.
	Host string
	// StatusCode is the HTTP status, or 0 when no response arrived.
	StatusCode int
	// RetryAfter is the server's Retry-After, or 0 when it sent none.
	RetryAfter time.Duration
	// Message is the provider's own explanation (its error body, or the transport error).
	Message string
	// Temporary reports whether the same request may succeed later.
	Temporary bool
	// Err is the underlying error, if any.
	Err error
}

// Error says who failed, where, and what the provider said.
func (e *ProviderError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	if e.Host != "" {
		b.WriteString(" at ")
		b.WriteString(e.Host)
	}
	b.WriteString(": ")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "HTTP %d %s: ", e.StatusCode, http.StatusText(e.StatusCode))
	}
	switch {
	case e.Message != "":
		b.WriteString(e.Message)
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString("request failed")
	}
	// The host and the underlying error may quote the server URL with its credentials
	// (OPENAI_BASE_URL=http://user:pass@host, or a lone token as user name, which Go's
	// url.Error keeps), and the server's message may quote the key ("Incorrect API key
	// provided: sk-..."): this text reaches reports and transcripts.
	return scrub.String(RedactText(b.String()))
}

// Unwrap returns the underlying error.
func (e *ProviderError) Unwrap() error { return e.Err }

// Redacted returns err with its message cleaned of credentials: URL user info (RedactText)
// and every secret the process knows (runner/scrub). errors.Is and As still see err. The
// providers' pre-flight checks wrap what they return with it, since their messages name
// the server and quote net/http's errors, which quote the request URL.
func Redacted(err error) error {
	if err == nil {
		return nil
	}
	return &redacted{err}
}

type redacted struct{ err error }

func (r *redacted) Error() string { return scrub.String(RedactText(r.err.Error())) }
func (r *redacted) Unwrap() error { return r.err }

// HTTPError classifies an HTTP error status: 429 and 5xx are temporary, the rest are not.
func HTTPError(provider, host string, status int, message string, retryAfter time.Duration, err error) *ProviderError {
	return &ProviderError{
		Provider:   provider,
		Host:       host,
		StatusCode: status,
		RetryAfter: retryAfter,
		Message:    Truncate(strings.TrimSpace(scrub.String(message)), 500), // scrubbed before the cut
		Temporary:  status == http.StatusTooManyRequests || status >= 500,
		Err:        err,
	}
}

// ClassifyError is the frame of every provider's classification of a failed request, as
// the retry wrapper needs it: the caller's deadline or cancellation passes for the caller
// to judge; an error already classified (a stream cut short) stays as it is; then the
// provider's own reading of its error types, classify (nil when none of them is err); and
// what is left came without an HTTP status (UnexpectedError).
func ClassifyError(provider, host string, err error, classify func(error) error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller's deadline or the retry wrapper's request timeout: it decides.
		return &ProviderError{Provider: provider, Host: host, Err: err}
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		return err
	}
	if classify != nil {
		if classified := classify(err); classified != nil {
			return classified
		}
	}
	return UnexpectedError(provider, host, err)
}

// UnexpectedError classifies an error that came without an HTTP status: a failed
// connection is temporary (TransportError), anything else is an unexpected response.
func UnexpectedError(provider, host string, err error) *ProviderError {
	pe := TransportError(provider, host, err)
	if !pe.Temporary {
		pe.Message = "unexpected response: " + Truncate(err.Error(), 300)
	}
	return pe
}

// TransportError classifies an error that came without an HTTP status: a connection that
// failed or dropped is temporary; anything else (a body that does not parse) is not.
func TransportError(provider, host string, err error) *ProviderError {
	temp := IsConnectionError(err)
	msg := scrub.String(RedactText(err.Error()))
	if temp {
		msg = "connection failed: " + msg
	}
	return &ProviderError{
		Provider:  provider,
		Host:      host,
		Message:   Truncate(msg, 500),
		Temporary: temp,
		Err:       err,
	}
}

// IsConnectionError reports whether err is a network failure (refused, reset, dropped,
// cut short) rather than a protocol or content error. Context errors are not: the caller
// decides what a deadline means.
func IsConnectionError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	// A host that does not resolve is a configuration error, not a passing fault.
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTemporary || dnsErr.IsTimeout
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	// net/http reports a server that hung up between requests this way.
	msg := err.Error()
	return strings.Contains(msg, "server closed idle connection") ||
		strings.Contains(msg, "connection reset") ||
		strings.Contains(msg, "broken pipe")
}

// ParseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date (RFC 9110
// 10.2.3). It returns false for an empty or unreadable value; a date in the past is 0.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs != secs {
			return 0, false
		}
		if secs > 1e6 { // beyond any sane cap; avoid overflowing Duration
			secs = 1e6
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	return d, true
}

// Truncate shortens s to at most n bytes (on a rune boundary), marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// ErrBudgetSpent is what a model call returns, unsent, once the run has spent its
// --budget-usd (runner/model/budget): the loop and runner's endpoint stop the scenario
// with stop reason budget rather than report a failed model.
var ErrBudgetSpent = errors.New("the run's budget is spent")
