// Package wire is the HTTP layer under the provider clients: a bounded line reader for
// streamed bodies, and an http.RoundTripper that remembers what the client libraries drop
// (the status and Retry-After of an error response) and repairs tool-call arguments that
// a server sent in the other accepted form (an object where go-openai wants a string, a
// string where Ollama wants an object), so that the libraries' strict decoders do not
// fail on them.
package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// ArgsForm is the form a client library needs tool-call arguments in.
type ArgsForm int

const (
	// ArgsString: arguments must be a JSON string (OpenAI); objects are re-encoded.
	ArgsString ArgsForm = iota
	// ArgsObject: arguments must be a JSON object (Ollama); a string holding an object is
	// decoded, any other string is wrapped as {RawArgsKey: string} for the provider to undo.
	ArgsObject
)

// RawArgsKey marks arguments that arrived as a string that is not a JSON object. The
// provider turns such arguments back into that string, so the tool registry can tell the
// model what was wrong with them.
const RawArgsKey = "\x00raw_arguments"

// Capture records the error response of one request.
type Capture struct {
	mu         sync.Mutex
	status     int
	retryAfter string
}

// Status returns the last error status seen (0 if none) and its Retry-After header.
func (c *Capture) Status() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.retryAfter
}

type captureKey struct{}

// WithCapture returns a context whose requests through a Transport are recorded in the
// returned Capture.
func WithCapture(ctx context.Context) (context.Context, *Capture) {
	c := &Capture{}
	return context.WithValue(ctx, captureKey{}, c), c
}

// Transport wraps Base (http.DefaultTransport when nil).
type Transport struct {
	Base http.RoundTripper
	Args ArgsForm
}

// Client returns an *http.Client that uses a Transport over c's transport (c may be nil).
// It never sets a client timeout: the caller's context bounds each request.
func Client(c *http.Client, form ArgsForm) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c //nolint:govet // copying the config, not a lock
	}
	out.Transport = &Transport{Base: out.Transport, Args: form}
	return out
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode >= 400 {
		if c, ok := req.Context().Value(captureKey{}).(*Capture); ok {
			c.mu.Lock()
			c.status, c.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
			c.mu.Unlock()
		}
		return resp, nil
	}
	ct := resp.Header.Get("Content-Type")
	if strings.Contains(ct, "event-stream") || strings.Contains(ct, "ndjson") {
		resp.Body = &lineFixer{src: bufio.NewReader(resp.Body), closer: resp.Body, form: t.Args}
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close() // a response body: Close loses no data
	if err != nil {
		// A body cut short is a failed connection, whatever half of it would parse as.
		return nil, fmt.Errorf("read response body: %w", err)
	}
	body = Fix(body, t.Args)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// lineFixer repairs a streamed body line by line (SSE "data: {...}" or NDJSON).
type lineFixer struct {
	src    *bufio.Reader
	closer io.Closer
	form   ArgsForm
	buf    []byte
	err    error
}

func (l *lineFixer) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		line, err := l.src.ReadBytes('\n')
		l.err = err
		if err != nil && err != io.EOF {
			// Drop the torn last line: a client must see a stream that stopped (and
			// know it from the missing final record), not a line that fails to parse.
			continue
		}
		l.buf = fixLine(line, l.form)
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

func (l *lineFixer) Close() error { return l.closer.Close() }

func fixLine(line []byte, form ArgsForm) []byte {
	prefix := 0
	if bytes.HasPrefix(line, []byte("data:")) {
		prefix = len("data:")
	}
	payload := line[prefix:]
	trimmed := bytes.TrimSpace(payload)
	if len(trimmed) == 0 || trimmed[0] != '{' || !needsFix(trimmed, form) {
		return line
	}
	fixed := Fix(trimmed, form)
	out := make([]byte, 0, prefix+len(fixed)+2)
	out = append(out, line[:prefix]...)
	if prefix > 0 {
		out = append(out, ' ')
	}
	out = append(out, fixed...)
	if bytes.HasSuffix(line, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

var argsKey = []byte(`"arguments"`)

// needsFix is a cheap scan: does any "arguments" value start in the wrong form?
func needsFix(b []byte, form ArgsForm) bool {
	for {
		i := bytes.Index(b, argsKey)
		if i < 0 {
			return false
		}
		b = b[i+len(argsKey):]
		j := 0
		for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r' || b[j] == '\n' || b[j] == ':') {
			j++
		}
		if j < len(b) {
			switch {
			case form == ArgsString && b[j] == '{':
				return true
			case form == ArgsObject && b[j] == '"':
				return true
			}
		}
	}
}

// Fix rewrites every tool call's "function"."arguments" in a JSON document into the form
// the library wants. A document that is not JSON, or needs nothing, is returned as is.
func Fix(doc []byte, form ArgsForm) []byte {
	if !needsFix(doc, form) {
		return doc
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // keep numbers exactly as sent
	var v any
	if err := dec.Decode(&v); err != nil {
		return doc
	}
	if !walk(v, form) {
		return doc
	}
	out, err := json.Marshal(v)
	if err != nil {
		return doc
	}
	return out
}

// walk fixes "arguments" under any "function" object and reports whether it changed one.
// It does not descend into arguments themselves: a tool's own parameters are left alone.
func walk(v any, form ArgsForm) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if fn, ok := child.(map[string]any); ok && k == "function" {
				if args, ok := fn["arguments"]; ok {
					if fixed, ok := fixArgs(args, form); ok {
						fn["arguments"] = fixed
						changed = true
					}
				}
				for fk, fchild := range fn {
					if fk != "arguments" && walk(fchild, form) {
						changed = true
					}
				}
				continue
			}
			if walk(child, form) {
				changed = true
			}
		}
	case []any:
		for _, child := range x {
			if walk(child, form) {
				changed = true
			}
		}
	}
	return changed
}

func fixArgs(args any, form ArgsForm) (any, bool) {
	switch form {
	case ArgsString:
		if obj, ok := args.(map[string]any); ok {
			b, err := json.Marshal(obj)
			if err != nil {
				return nil, false
			}
			return string(b), true
		}
	case ArgsObject:
		if s, ok := args.(string); ok {
			var obj map[string]any
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			if err := dec.Decode(&obj); err == nil && obj != nil && !dec.More() {
				return obj, true
			}
			return map[string]any{RawArgsKey: s}, true
		}
	}
	return nil, false
}

// ErrLineTooLong is ReadLine's error for a line longer than its bound.
var ErrLineTooLong = errors.New("line too long")

// ReadLine returns the next line of br, with its newline if it has one, and io.EOF with
// the last. Most lines are br's own buffer (no copy); one longer than that buffer is
// gathered in *long, which the caller keeps between calls, and one longer than max bytes
// is ErrLineTooLong, so a broken server cannot grow a line without end. The line is
// valid until the next call.
func ReadLine(br *bufio.Reader, long *[]byte, max int) ([]byte, error) {
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(*long)+len(line) > max {
				return nil, ErrLineTooLong
			}
			*long = append(*long, line...)
			continue
		}
		if len(*long) > 0 {
			line = append(*long, line...)
			*long = (*long)[:0]
		}
		return line, err
	}
}
