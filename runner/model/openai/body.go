package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/msgcache"
)

// go-openai encodes the whole conversation on every request, and each message twice over
// (its MarshalJSON, then encoding/json checking and compacting that output): at step 200
// of a run, about half a millisecond a step. The client takes the request with an empty
// message list instead, and splicer, the HTTPDoer it sends through, puts in the
// conversation from a cache holding each message's encoding, made once by go-openai's own
// ChatCompletionMessage.MarshalJSON. The body is byte for byte what go-openai would send.

// spliceKey carries the conversation of one request to splicer.
type spliceKey struct{}

type conversation struct {
	msgs  []model.Message
	cache *msgcache.Cache
}

// splicer is the HTTPDoer go-openai sends through.
type splicer struct {
	next goopenai.HTTPDoer
	host string
}

// Do fills in the conversation of a request Step marked, then sends it.
func (s *splicer) Do(req *http.Request) (*http.Response, error) {
	conv, ok := req.Context().Value(spliceKey{}).(*conversation)
	if !ok || req.Body == nil {
		return s.next.Do(req)
	}
	head, err := io.ReadAll(req.Body)
	_ = req.Body.Close() // a response body: Close loses no data
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	body, err := conv.cache.Splice(head, conv.msgs, encodeMessage)
	if err != nil {
		return nil, &model.ProviderError{Provider: "openai", Host: s.host, Message: "cannot encode the request: " + err.Error(), Err: err}
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return s.next.Do(req)
}

// withConversation marks ctx's request for splicer and returns the message list to give
// go-openai: empty, so that it encodes as [] where the conversation goes.
func (m *Model) withConversation(ctx context.Context, req *model.Request) (context.Context, []goopenai.ChatCompletionMessage) {
	if !m.splice {
		return ctx, messages(req)
	}
	return context.WithValue(ctx, spliceKey{}, &conversation{msgs: req.Messages, cache: &m.msgs}), []goopenai.ChatCompletionMessage{}
}

// canSplice checks, once per Model, that go-openai encodes a request the way splicer
// expects; if a new version does not, requests are encoded whole, as go-openai does.
func canSplice(name string) bool {
	head, err := json.Marshal(goopenai.ChatCompletionRequest{Model: name, Messages: []goopenai.ChatCompletionMessage{}})
	if err != nil {
		return false
	}
	var c msgcache.Cache
	_, err = c.Splice(head, nil, encodeMessage)
	return err == nil
}

// messages translates the conversation into go-openai's messages.
func messages(req *model.Request) []goopenai.ChatCompletionMessage {
	msgs := make([]goopenai.ChatCompletionMessage, len(req.Messages))
	for i := range req.Messages {
		msgs[i] = message(&req.Messages[i])
	}
	return msgs
}

func message(msg *model.Message) goopenai.ChatCompletionMessage {
	out := goopenai.ChatCompletionMessage{Role: msg.Role, Content: msg.Content, ToolCallID: msg.ToolCallID}
	for _, tc := range msg.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, goopenai.ToolCall{
			ID:       tc.ID,
			Type:     goopenai.ToolTypeFunction,
			Function: goopenai.FunctionCall{Name: tc.Name, Arguments: model.ArgsText(tc.Arguments)},
		})
	}
	return out
}

// encodeMessage is the cache's encoder: one message as go-openai encodes it in a request.
func encodeMessage(msg *model.Message) ([]byte, error) {
	return json.Marshal(message(msg))
}
