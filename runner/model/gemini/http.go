package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/wire"
)

// generateResponse is one answer of generateContent, or one event of the stream.
type generateResponse struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	ModelVersion   string          `json:"modelVersion"`
	// Error is an error event of a stream; kept raw, since the SDK treats one that is
	// not an error object as no error.
	Error json.RawMessage `json:"error"`
}

type candidate struct {
	Content      *content `json:"content"`
	FinishReason string   `json:"finishReason"`
	// ContinuationToken resumes an answer the server stopped early (see continuation in stream.go).
	ContinuationToken []byte `json:"continuationToken"`
}

type promptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

type usageMetadata struct {
	PromptTokenCount     int32 `json:"promptTokenCount"`
	CandidatesTokenCount int32 `json:"candidatesTokenCount"`
	// CachedContentTokenCount is the part of the prompt read from a cache.
	CachedContentTokenCount int32 `json:"cachedContentTokenCount"`
}

// plus sums two usages, as the SDK sums the usage of the requests of a continued answer.
func (u *usageMetadata) plus(o *usageMetadata) *usageMetadata {
	if u == nil {
		return o
	}
	if o == nil {
		return u
	}
	return &usageMetadata{PromptTokenCount: u.PromptTokenCount + o.PromptTokenCount,
		CandidatesTokenCount:    u.CandidatesTokenCount + o.CandidatesTokenCount,
		CachedContentTokenCount: u.CachedContentTokenCount + o.CachedContentTokenCount}
}

// apiError is the API's error object, {"error":{"code","message","status"}}, from an
// error response (HTTPStatus set) or an error event inside a 200 stream.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`

	HTTPStatus int           `json:"-"`
	RetryAfter time.Duration `json:"-"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("Error %d, Message: %s, Status: %s", e.Code, e.Message, e.Status)
}

// streamError is an error event of a stream, if data is one.
func streamError(raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var e apiError
	if json.Unmarshal(raw, &e) != nil {
		return nil
	}
	return &e
}

// userAgent names the client. It does not claim to be the SDK (google-genai-sdk/...),
// which is what the SDK's User-Agent and x-goog-api-client headers say.
var userAgent = "agentrunner-runner gl-go/" + runtime.Version()

// post sends body to url as the SDK does: the key in x-goog-api-key, and the time left
// for the request in x-server-timeout (whole seconds, rounded up), so that the server
// gives up when the client would.
func (m *Model) post(ctx context.Context, url string, body []byte) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("User-Agent", userAgent)
	hreq.Header.Set("x-goog-api-key", m.cfg.APIKey)
	if t := timeout(ctx, m.cfg.HTTPClient.Timeout); t > 0 {
		hreq.Header.Set("x-server-timeout", strconv.FormatInt(int64(math.Ceil(t.Seconds())), 10))
	}
	return m.cfg.HTTPClient.Do(hreq)
}

// timeout is the shorter of the client's timeout and the context's time left (0: none).
func timeout(ctx context.Context, client time.Duration) time.Duration {
	t := client
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline); t == 0 || left < t {
			t = left
		}
	}
	return t
}

// maxErrorBody bounds the error body read: the message is cut to 500 bytes anyway.
const maxErrorBody = 1 << 20

// statusError reads an error response: the API's error object, or whatever a proxy sent,
// which the SDK reports with the HTTP status line as its status.
func statusError(resp *http.Response) *apiError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	retryAfter, _ := model.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	e := &apiError{Code: resp.StatusCode, Status: resp.Status, HTTPStatus: resp.StatusCode, RetryAfter: retryAfter}
	if len(raw) == 0 {
		return e
	}
	var body struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && body.Error != nil {
		e.Code, e.Message, e.Status = body.Error.Code, body.Error.Message, body.Error.Status
		return e
	}
	e.Message = string(raw)
	return e
}

// providerError classifies an error of Step as the retry wrapper needs it.
func (m *Model) providerError(err error) error {
	return model.ClassifyError("gemini", m.Host(), err, m.classify)
}

// classify reads the Gemini API's error object; nil for other errors.
func (m *Model) classify(err error) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return nil
	}
	code := ae.Code // the error object's code wins over the HTTP status, as in the SDK
	if code == 0 {
		code = ae.HTTPStatus
	}
	msg := ae.Message
	if ae.Status != "" && !strings.Contains(msg, ae.Status) {
		msg = ae.Status + ": " + msg
	}
	if code == 0 {
		// An error object inside a 200 stream: the server gave up mid-answer.
		return &model.ProviderError{Provider: "gemini", Host: m.Host(), Message: strings.TrimSpace(msg), Err: err}
	}
	return model.HTTPError("gemini", m.Host(), code, msg, ae.RetryAfter, err)
}

// badResponse is a body that does not parse: not a passing fault.
type badResponse struct{ err error }

func (e *badResponse) Error() string { return e.err.Error() }
func (e *badResponse) Unwrap() error { return e.err }

// maxEvent bounds one line of a stream: far beyond any real answer, it keeps a broken
// server from growing a line without end.
const maxEvent = 64 << 20

// readEvents reads server-sent events from body and calls fn with each event's data (its
// data lines joined by newlines). last is set for an event the stream ended inside, with
// no blank line after it: the SDK reads that one too, but it may be cut short. Comments
// and the event, id and retry fields are skipped; any other line is an error object, as
// the SDK reads a line without "data:", or a broken stream.
func readEvents(body io.Reader, fn func(data []byte, last bool) error) error {
	br := bufio.NewReaderSize(body, 32<<10)
	var data []byte
	pending := false
	var long []byte // a line longer than the buffer, gathered
	for {
		line, err := wire.ReadLine(br, &long, maxEvent)
		if errors.Is(err, wire.ErrLineTooLong) {
			return &badResponse{fmt.Errorf("a stream line longer than %d MB", maxEvent>>20)}
		}
		if err != nil && err != io.EOF {
			// A body cut short is a failed connection, whatever half of it would parse as.
			return fmt.Errorf("read response body: %w", err)
		}
		eof := err == io.EOF
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if pending {
				if ferr := fn(data, eof); ferr != nil {
					return ferr
				}
				data, pending = data[:0], false
			}
			if eof {
				return nil
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		switch string(field) {
		case "data":
			if pending {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(value, []byte(" "))...)
			pending = true
		case "", "event", "id", "retry": // a comment, or fields the API does not use
		default:
			var chunk struct {
				Error *apiError `json:"error"`
			}
			if json.Unmarshal(line, &chunk) == nil && chunk.Error != nil {
				return chunk.Error
			}
			return &badResponse{fmt.Errorf("invalid stream chunk: %s", model.Truncate(string(line), 200))}
		}
		if eof {
			if pending {
				return fn(data, true)
			}
			return nil
		}
	}
}
