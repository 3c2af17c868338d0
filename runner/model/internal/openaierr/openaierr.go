// Package openaierr reads go-openai's error types for the two clients built on it
// (runner/model/openai and runner/model/openairesponses), so that both classify a failed
// request the same way: its status, message and Retry-After.
package openaierr

import (
	"errors"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/wire"
)

// Classify reads go-openai's error types, with the status and Retry-After the capture
// saw; nil for other errors (model.ClassifyError's classify, for provider at host).
func Classify(provider, host string, err error, capture *wire.Capture) error {
	status, retryAfterHeader := capture.Status()
	retryAfter, _ := model.ParseRetryAfter(retryAfterHeader, time.Now())
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr) && (apiErr.HTTPStatusCode != 0 || status != 0):
		code := apiErr.HTTPStatusCode
		if code == 0 {
			code = status
		}
		return model.HTTPError(provider, host, code, apiErr.Message, retryAfter, err)
	case errors.As(err, &reqErr):
		// Not an error object: what a proxy sent, if anything (the status says the rest;
		// an empty body leaves the message empty, as OpenAI's SDK does, and the error
		// shows go-openai's).
		msg := strings.TrimSpace(string(reqErr.Body))
		return model.HTTPError(provider, host, reqErr.HTTPStatusCode, msg, retryAfter, err)
	case apiErr != nil:
		// An error object inside a 200 stream: the server gave up mid-answer.
		return &model.ProviderError{Provider: provider, Host: host, Message: apiErr.Message, Err: err}
	}
	return nil
}
