package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/auth"
	"github.com/ollama/ollama/envconfig"
	"github.com/ollama/ollama/version"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/wire"
)

// Step sends the conversation to /api/chat. The request and its answer are Ollama's wire
// types, sent and read here rather than by api.Client.Chat, which allocates an 8 MB
// line buffer per request: 94% of the bytes a step allocated, and a third of its time.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	body, err := m.body(req)
	if err != nil {
		return nil, err
	}
	resp, err := m.post(ctx, chatPath, body)
	if err != nil {
		return nil, m.sendError(err)
	}
	defer func() { _ = resp.Body.Close() }() // a response body: Close loses no data
	if resp.StatusCode >= http.StatusBadRequest {
		return nil, m.statusError(resp)
	}
	var acc accumulator
	if err := m.read(resp.Body, &acc); err != nil {
		return nil, err
	}
	if !acc.done {
		// A reply without its final "done" record is a dropped connection, not an answer.
		return nil, &model.ProviderError{
			Provider: "ollama", Host: m.Host(), Temporary: true,
			Message: "connection dropped: the response ended before its final record",
		}
	}
	return acc.response(req.Step()), nil
}

const chatPath = "/api/chat"

// userAgent is what api.Client sends, so the server's logs look the same.
var userAgent = fmt.Sprintf("ollama/%s (%s %s) Go/%s", version.Version, runtime.GOARCH, runtime.GOOS, runtime.Version())

// post sends body to path the way api.Client does, signing the request when it would:
// with OLLAMA_AUTH set, or for ollama.com.
func (m *Model) post(ctx context.Context, path string, body []byte) (*http.Response, error) {
	u := m.base.JoinPath(path)
	var token string
	if envconfig.UseAuth() || m.base.Hostname() == "ollama.com" {
		now := strconv.FormatInt(time.Now().Unix(), 10)
		var err error
		token, err = auth.Sign(ctx, []byte(fmt.Sprintf("%s,%s?ts=%s", http.MethodPost, path, now)))
		if err != nil {
			return nil, &signError{err}
		}
		q := u.Query()
		q.Set("ts", now)
		u.RawQuery = q.Encode()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/x-ndjson")
	hreq.Header.Set("User-Agent", userAgent)
	if token != "" {
		hreq.Header.Set("Authorization", token)
	}
	return m.http.Do(hreq)
}

// signError is a request that could not be signed (no key in ~/.ollama).
type signError struct{ err error }

func (e *signError) Error() string {
	return "sign the request (OLLAMA_AUTH or ollama.com): " + e.err.Error()
}
func (e *signError) Unwrap() error { return e.err }

// sendError classifies a request that got no response, or whose body broke off.
func (m *Model) sendError(err error) error {
	return model.ClassifyError("ollama", m.Host(), err, func(err error) error {
		var se *signError
		if errors.As(err, &se) {
			return &model.ProviderError{Provider: "ollama", Host: m.Host(), Message: se.Error(), Err: err}
		}
		return nil
	})
}

// statusError reads an error response: {"error": "..."} as Ollama sends it, or whatever
// text a proxy put there. The error wraps the api package's own error types.
func (m *Model) statusError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	raw = bytes.TrimSpace(raw)
	var body struct {
		Error     string `json:"error"`
		SigninURL string `json:"signin_url"`
	}
	msg := string(raw)
	if json.Unmarshal(raw, &body) == nil {
		msg = body.Error
	}
	retryAfter, _ := model.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	if resp.StatusCode == http.StatusUnauthorized {
		ae := api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: body.SigninURL}
		text := "unauthorized"
		if msg != "" {
			text += ": " + msg
		}
		return model.HTTPError("ollama", m.Host(), resp.StatusCode, text, retryAfter, ae)
	}
	if msg == "" {
		msg = "the server sent no error message"
	}
	se := api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: msg}
	return model.HTTPError("ollama", m.Host(), resp.StatusCode, msg, retryAfter, se)
}

// maxLine bounds one record of the response: far beyond any real answer, it keeps a
// broken server from growing a line without end.
const maxLine = 32 << 20

// readers are reused between requests: a step reads through one buffer, allocated once.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// read decodes the response, streamed (one record a line) or not (one record), into acc.
func (m *Model) read(body io.Reader, acc *accumulator) error {
	br := readers.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() {
		br.Reset(nil)
		readers.Put(br)
	}()
	var long []byte // a line longer than the buffer, gathered
	for {
		line, err := wire.ReadLine(br, &long, maxLine)
		if errors.Is(err, wire.ErrLineTooLong) {
			return &model.ProviderError{Provider: "ollama", Host: m.Host(),
				Message: fmt.Sprintf("unexpected response: a record longer than %d MB", maxLine>>20)}
		}
		if err != nil && err != io.EOF {
			// A body cut short is a failed connection, whatever half of it would parse as;
			// a deadline that ended the read is the caller's to judge.
			return m.sendError(fmt.Errorf("read response body: %w", err))
		}
		if rerr := m.record(line, acc); rerr != nil {
			return rerr
		}
		if err == io.EOF {
			return nil
		}
	}
}

// chatLine is one record: a chat response, or an error the server sent mid-answer.
type chatLine struct {
	api.ChatResponse
	Error string `json:"error,omitempty"`
}

// record decodes one line into acc. Arguments that came as a string are first put in
// the form api.ToolCallFunctionArguments accepts (see wire.Fix).
func (m *Model) record(line []byte, acc *accumulator) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	line = wire.Fix(line, wire.ArgsObject)
	var rec chatLine
	if err := json.Unmarshal(line, &rec); err != nil {
		// Not JSON at all: the body itself says most about what answered.
		what := strings.ToValidUTF8(string(line), "\uFFFD")
		if json.Valid(line) {
			what = err.Error()
		}
		return &model.ProviderError{Provider: "ollama", Host: m.Host(),
			Message: "unexpected response: " + model.Truncate(what, 300), Err: err}
	}
	if rec.Error != "" {
		return &model.ProviderError{Provider: "ollama", Host: m.Host(),
			Message: "unexpected response: " + model.Truncate(rec.Error, 300)}
	}
	acc.add(rec.ChatResponse)
	return nil
}
