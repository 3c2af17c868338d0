package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/wire"
)

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	MaxTokens   int64           `json:"max_tokens"`
	Messages    []turn          `json:"messages"`
	Model       string          `json:"model"`
	System      []textBlock     `json:"system,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	TopP        *float64        `json:"top_p,omitempty"`
	Tools       json.RawMessage `json:"tools,omitempty"`
	Stream      bool            `json:"stream,omitempty"`
}

// turn is one message of the conversation: a role and its blocks.
type turn struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// block is a content block of a request: text, tool_use or tool_result.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []textBlock     `json:"content,omitempty"`
	IsError   *bool           `json:"is_error,omitempty"`
}

// message is the API's answer, whole or accumulated from a stream.
type message struct {
	Model   string         `json:"model"`
	Content []contentBlock `json:"content"`
	Usage   usage          `json:"usage"`
}

// contentBlock is a block of an answer. Thinking and other blocks are read and left out.
type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// usage is the API's count. input_tokens leaves out the prompt tokens read from or written
// to the prompt cache, which the API counts apart: the prompt is all three.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// modelUsage is runner's count of u: every prompt token, the cached reads apart.
func (u usage) modelUsage() model.Usage {
	return model.Usage{
		PromptTokens:       int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
		CompletionTokens:   int(u.OutputTokens),
		CachedPromptTokens: int(u.CacheReadInputTokens),
	}
}

// userAgent names the client. It does not claim to be the SDK (Anthropic/Go ...).
var userAgent = "agentrunner-runner gl-go/" + runtime.Version()

// post sends body to /v1/messages with the key and the API version, as the SDK does.
func (m *Model) post(ctx context.Context, body *messagesRequest) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", userAgent)
	hreq.Header.Set("X-Api-Key", m.cfg.APIKey)
	hreq.Header.Set("Anthropic-Version", apiVersion)
	return m.cfg.HTTPClient.Do(hreq)
}

// isJSON reports whether a content type is JSON, the only answer the SDK decodes.
func isJSON(contentType string) bool {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	return strings.Contains(mediaType, "application/json") || strings.HasSuffix(mediaType, "+json")
}

// maxErrorBody bounds the error body read: the message is cut to 500 bytes anyway.
const maxErrorBody = 1 << 20

// apiError is an error response, {"type":"error","error":{"type","message"}}, or an
// error event inside a stream (Status 0). Raw is the body as sent.
type apiError struct {
	Status     int
	RetryAfter time.Duration
	Raw        string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, model.Truncate(e.Raw, 300))
}

// message is the error object's "type: message", or the whole body when it has none.
func (e *apiError) message() string {
	t, msg := e.kind()
	switch {
	case msg != "" && t != "":
		return t + ": " + msg
	case msg != "":
		return msg
	}
	return strings.TrimSpace(e.Raw)
}

// kind is the error object's type and message.
func (e *apiError) kind() (typ, msg string) {
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(e.Raw), &body) != nil {
		return "", ""
	}
	return body.Error.Type, body.Error.Message
}

// statusError reads an error response.
func statusError(resp *http.Response) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return fmt.Errorf("read response body: %w", err)
	}
	retryAfter, _ := model.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return &apiError{Status: resp.StatusCode, RetryAfter: retryAfter, Raw: string(raw)}
}

// providerError classifies an error of Step as the retry wrapper needs it.
func (m *Model) providerError(err error) error {
	return model.ClassifyError("anthropic", m.Host(), err, m.classify)
}

// classify reads Anthropic's error object and a response that does not parse; nil for
// other errors.
func (m *Model) classify(err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		if ae.Status == 0 {
			return m.streamError(ae)
		}
		return model.HTTPError("anthropic", m.Host(), ae.Status, ae.message(), ae.RetryAfter, err)
	}
	var bad *badResponse
	if errors.As(err, &bad) {
		return &model.ProviderError{Provider: "anthropic", Host: m.Host(), Message: "unexpected response: " + model.Truncate(err.Error(), 300), Err: err}
	}
	return nil
}

// streamError classifies an error event: the server gave up mid-answer. Anthropic sends
// the errors its statuses 500 and 529 stand for (api_error, overloaded_error) this way
// too, and those pass; any other kind will not heal by asking again.
func (m *Model) streamError(ae *apiError) *model.ProviderError {
	typ, _ := ae.kind()
	return &model.ProviderError{Provider: "anthropic", Host: m.Host(), Message: model.Truncate(ae.message(), 500),
		Temporary: typ == "overloaded_error" || typ == "api_error" || typ == "rate_limit_error", Err: ae}
}

// badResponse is an answer that does not parse or make sense: not a passing fault.
type badResponse struct{ err error }

func (e *badResponse) Error() string { return e.err.Error() }
func (e *badResponse) Unwrap() error { return e.err }

// maxEvent bounds one line of a stream: far beyond any real answer, it keeps a broken
// server from growing a line without end.
const maxEvent = 32 << 20

// stream reads the events into one message, as the SDK's accumulator does.
func (m *Model) stream(ctx context.Context, body *messagesRequest) (*message, error) {
	resp, err := m.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // a response body: Close loses no data
	if resp.StatusCode >= 400 {
		return nil, statusError(resp)
	}
	var acc accumulator
	err = readEvents(resp.Body, func(event string, data []byte) error {
		switch event {
		case "", "ping": // no event name: nothing the API sends
			return nil
		case "error":
			return &apiError{Raw: string(data)}
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return nil
		}
		var ev streamEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return &badResponse{fmt.Errorf("decode %s event: %w", event, err)}
		}
		if err := acc.add(&ev); err != nil {
			return &model.ProviderError{Provider: "anthropic", Host: m.Host(), Message: "unexpected stream: " + err.Error(), Err: err}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !acc.stopped {
		// A body that ends without message_stop was cut off, most likely by a dropped
		// connection: the same request may well succeed.
		return nil, &model.ProviderError{Provider: "anthropic", Host: m.Host(), Temporary: true,
			Message: "connection dropped: the stream ended before message_stop"}
	}
	return &acc.msg, nil
}

// streamEvent is one event of a stream; which fields are set depends on its type.
type streamEvent struct {
	Type         string          `json:"type"`
	Message      message         `json:"message"`
	Index        int64           `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Usage struct {
		InputTokens              *int64 `json:"input_tokens"`
		OutputTokens             int64  `json:"output_tokens"`
		CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// accumulator builds the message from the events of a stream.
type accumulator struct {
	msg     message
	stopped bool
}

// add takes in one event. Blocks start in index order; deltas and stops name a block
// that has started. A tool call's input is its JSON pieces joined, {} if they do not
// make JSON once the block (or the message) stops.
func (a *accumulator) add(ev *streamEvent) error {
	switch ev.Type {
	case "message_start":
		a.msg = ev.Message
	case "message_delta":
		// Usage counts here are whole-message totals: output always, input when sent.
		a.msg.Usage.OutputTokens = ev.Usage.OutputTokens
		if ev.Usage.InputTokens != nil {
			a.msg.Usage.InputTokens = *ev.Usage.InputTokens
		}
		if ev.Usage.CacheReadInputTokens != nil {
			a.msg.Usage.CacheReadInputTokens = *ev.Usage.CacheReadInputTokens
		}
		if ev.Usage.CacheCreationInputTokens != nil {
			a.msg.Usage.CacheCreationInputTokens = *ev.Usage.CacheCreationInputTokens
		}
	case "content_block_start":
		if ev.Index != int64(len(a.msg.Content)) {
			return fmt.Errorf("received event of type %s for content block at index %d, expected index %d", ev.Type, ev.Index, len(a.msg.Content))
		}
		var b contentBlock
		if err := json.Unmarshal(ev.ContentBlock, &b); err != nil {
			return err
		}
		a.msg.Content = append(a.msg.Content, b)
	case "content_block_delta":
		b, err := a.block(ev)
		if err != nil {
			return err
		}
		switch ev.Delta.Type {
		case "text_delta":
			b.Text += ev.Delta.Text
		case "input_json_delta":
			if ev.Delta.PartialJSON != "" {
				if string(b.Input) == "{}" {
					b.Input = json.RawMessage(ev.Delta.PartialJSON)
				} else {
					b.Input = append(b.Input, ev.Delta.PartialJSON...)
				}
			}
		}
	case "content_block_stop":
		b, err := a.block(ev)
		if err != nil {
			return err
		}
		settle(b)
	case "message_stop":
		for i := range a.msg.Content {
			settle(&a.msg.Content[i])
		}
		a.stopped = true
	}
	return nil
}

// block is the started block an event names.
func (a *accumulator) block(ev *streamEvent) (*contentBlock, error) {
	if ev.Index < 0 || ev.Index >= int64(len(a.msg.Content)) {
		return nil, fmt.Errorf("received event of type %s for content block at index %d but there are only %d content blocks", ev.Type, ev.Index, len(a.msg.Content))
	}
	return &a.msg.Content[ev.Index], nil
}

// settle empties a tool call's input that its pieces did not make JSON of (a call cut off).
func settle(b *contentBlock) {
	if len(b.Input) > 0 && !json.Valid(b.Input) {
		b.Input = json.RawMessage("{}")
	}
}

// readEvents reads server-sent events from body and calls fn with each event's name and
// data (its data lines, each followed by a newline), as the SDK's decoder does: an event
// ends at a blank line, one the stream ends inside is dropped, comments and other fields
// are skipped.
func readEvents(body io.Reader, fn func(event string, data []byte) error) error {
	br := bufio.NewReaderSize(body, 32<<10)
	var long []byte // a line longer than the buffer, gathered
	var event string
	var data []byte
	pending := false
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
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			if eof {
				return nil
			}
			if pending {
				if err := fn(event, data); err != nil {
					return err
				}
				event, data, pending = "", data[:0], false
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			event, pending = string(value), true
		case "data":
			data = append(append(data, value...), '\n')
			pending = true
		}
		if eof {
			return nil
		}
	}
}
