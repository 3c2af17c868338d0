package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentrunner/runner/runner/model"
)

// The continuation protocol: a candidate may stop early with a continuationToken
// (finishReason CONTINUATION, or, in a stream, a checkpoint with no finish reason), and
// the same request sent again with the token at the top of the body carries the answer
// on. The SDK does this by itself (GenerateContentConfig.AutomaticContinuation defaults to
// true), so the runner does too, the same way: continuation.go in the SDK is the model
// for what follows.

// maxHops bounds the requests of one continued answer. The SDK has no bound; a server
// that kept sending new tokens would keep the step going forever.
const maxHops = 32

// maxReconnects is the SDK's bound on resumed streams in a row that bring nothing new.
const maxReconnects = 3

// Finish reasons the protocol treats as not finished.
const (
	finishUnspecified  = "FINISH_REASON_UNSPECIFIED"
	finishContinuation = "CONTINUATION"
)

func resumable(finish string) bool {
	return finish == "" || finish == finishUnspecified || finish == finishContinuation
}

func canResume(token []byte, finish string, feedback bool) bool {
	return !feedback && len(token) > 0 && resumable(finish)
}

// continuation is the token that continues a generateContent answer, or nil.
func continuation(r *generateResponse) []byte {
	if len(r.Candidates) == 0 {
		return nil
	}
	c := &r.Candidates[0]
	if len(c.ContinuationToken) > 0 && resumable(c.FinishReason) {
		return c.ContinuationToken
	}
	return nil
}

// stream reads streamGenerateContent. A stream that stops with a continuation token, or
// drops after a checkpoint token, is resumed from it, and the usage of the requests adds
// up; a stream that ends before a finish reason otherwise is a dropped connection.
func (m *Model) stream(ctx context.Context, body *generateRequest, acc *accumulator) error {
	var (
		resume     []byte
		reconnects int
		lastErr    error          // the latest error since the answer last made progress
		total      *usageMetadata // of the requests so far
	)
	for hops := 1; ; hops++ {
		h := hop{start: resume}
		body.ContinuationToken = resume
		var stop error
		err := m.streamOnce(ctx, body, func(r *generateResponse) error {
			h.observe(r, total)
			stop = acc.add(r)
			return stop
		})
		if stop != nil {
			return stop // a blocked prompt
		}
		if h.usage != nil {
			total = h.usage
		}
		if err != nil && ctx.Err() != nil {
			return err
		}
		var ae *apiError
		if err != nil && !h.received && errors.As(err, &ae) {
			return err // a refused request: the retry wrapper's to judge
		}
		if err != nil {
			lastErr = err
		} else if h.yielded || (len(h.token) > 0 && !bytes.Equal(h.token, h.start)) {
			lastErr = nil
		}
		resume, reconnects = h.next(reconnects)
		if canResume(resume, h.finish, h.feedback) {
			if hops >= maxHops {
				return &badResponse{fmt.Errorf("the answer still asked to be continued after %d requests", maxHops)}
			}
			continue
		}
		if err != nil {
			return err
		}
		if h.finish == "" && !h.feedback && lastErr != nil {
			return lastErr
		}
		break
	}
	if !acc.finished {
		return &model.ProviderError{Provider: "gemini", Host: m.Host(), Temporary: true,
			Message: "connection dropped: the stream ended before a finishReason"}
	}
	return nil
}

// streamOnce makes one streamGenerateContent request and calls fn with each response.
func (m *Model) streamOnce(ctx context.Context, body *generateRequest, fn func(*generateResponse) error) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("gemini: encode request: %w", err)
	}
	resp, err := m.post(ctx, m.streamURL, b)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // a response body: Close loses no data
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return statusError(resp)
	}
	return readEvents(resp.Body, func(data []byte, last bool) error {
		var r generateResponse
		if err := json.Unmarshal(data, &r); err != nil {
			if last {
				return nil // cut off mid-event: the stream ended there, unfinished
			}
			return &badResponse{fmt.Errorf("decode stream event: %w", err)}
		}
		if e := streamError(r.Error); e != nil {
			return e
		}
		return fn(&r)
	})
}

// hop is what one request of a streamed answer saw.
type hop struct {
	// start is the token the request resumed from; token the latest one seen.
	start, token []byte
	received     bool // any event
	yielded      bool // any part
	feedback     bool // promptFeedback: never resumed
	// finish is the last finish reason other than none and unspecified.
	finish string
	// usage is the running total: the requests before plus this one's latest.
	usage *usageMetadata
}

// observe notes what r says about continuing, and rewrites it as the SDK hands it on: a
// finish reason the stream resumes after cleared, the usage made a running total.
func (h *hop) observe(r *generateResponse, before *usageMetadata) {
	h.received = true
	if r.PromptFeedback != nil {
		h.feedback = true
	}
	if len(r.Candidates) > 0 {
		c := &r.Candidates[0]
		if c.Content != nil && len(c.Content.Parts) > 0 {
			h.yielded = true
		}
		ended := c.FinishReason != "" && c.FinishReason != finishUnspecified
		if ended {
			h.finish = c.FinishReason
		}
		if len(c.ContinuationToken) > 0 {
			h.token = c.ContinuationToken
		} else if ended && !resumable(c.FinishReason) {
			h.token = nil
		}
		if ended && canResume(h.token, c.FinishReason, r.PromptFeedback != nil) {
			c.FinishReason = ""
		}
	}
	if r.UsageMetadata != nil {
		r.UsageMetadata = before.plus(r.UsageMetadata)
		h.usage = r.UsageMetadata
	}
}

// next is the token to resume from after this request (nil: do not) and the count of
// resumptions in a row that brought nothing new.
func (h *hop) next(reconnects int) ([]byte, int) {
	newToken := len(h.token) > 0 && !bytes.Equal(h.token, h.start)
	switch {
	case h.feedback:
		return nil, 0
	case h.finish != "":
		if h.finish == finishContinuation && newToken {
			return h.token, 0
		}
		return nil, reconnects
	case newToken:
		return h.token, 0
	case h.yielded || reconnects >= maxReconnects:
		return nil, reconnects
	}
	return h.start, reconnects + 1
}
