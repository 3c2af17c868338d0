package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentrunner/runner/runner/model"
)

// stream reads a server-sent-events answer, joining content deltas and tool-call deltas
// (which arrive in fragments keyed by index: id and name first, arguments in pieces).
func (m *Model) stream(ctx context.Context, creq goopenai.ChatCompletionRequest, req *model.Request) (*model.Response, error) {
	creq.Stream = true
	creq.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	s, err := m.client.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }() // a response body: Close loses no data

	a := streamed{calls: map[int]*partialCall{}, out: &model.Response{}}
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		a.add(chunk)
	}
	if !a.finished {
		// go-openai reports a body that stops early as a normal end; an answer without a
		// finish_reason was cut off, most likely by a dropped connection.
		return nil, &model.ProviderError{
			Provider: "openai", Host: m.Host(), Temporary: true,
			Message: "connection dropped: the stream ended before a finish_reason",
		}
	}
	return a.response(req), nil
}

// streamed is a streamed answer as its chunks add up.
type streamed struct {
	content  strings.Builder
	calls    map[int]*partialCall // by the call's index in the answer
	out      *model.Response
	finished bool // a finish_reason came
}

// partialCall is a tool call as its deltas add up.
type partialCall struct {
	id, name string
	args     strings.Builder
}

// add takes one chunk: the model's name, usage, and the first choice's deltas.
func (a *streamed) add(chunk goopenai.ChatCompletionStreamResponse) {
	if chunk.Model != "" {
		a.out.Model = chunk.Model
	}
	if chunk.Usage != nil {
		a.out.Usage = usage(*chunk.Usage)
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue
		}
		a.content.WriteString(choice.Delta.Content)
		for pos, tc := range choice.Delta.ToolCalls {
			a.addCall(pos, tc)
		}
		if choice.FinishReason != "" {
			a.finished = true
			a.out.StopReason = string(choice.FinishReason)
		}
	}
}

// addCall adds a tool call's delta, the pos'th of its chunk, to the call it continues:
// the one of its index, or of its position where the server sends no index.
func (a *streamed) addCall(pos int, tc goopenai.ToolCall) {
	idx := pos
	if tc.Index != nil {
		idx = *tc.Index
	}
	p := a.calls[idx]
	if p == nil {
		p = &partialCall{}
		a.calls[idx] = p
	}
	if tc.ID != "" {
		p.id = tc.ID
	}
	if tc.Function.Name != "" {
		p.name += tc.Function.Name
	}
	p.args.WriteString(tc.Function.Arguments)
}

// response is the finished answer, its tool calls in index order.
func (a *streamed) response(req *model.Request) *model.Response {
	a.out.Content = a.content.String()
	idxs := make([]int, 0, len(a.calls))
	for idx := range a.calls {
		idxs = append(idxs, idx)
	}
	sort.Ints(idxs)
	for i, idx := range idxs {
		p := a.calls[idx]
		a.out.ToolCalls = append(a.out.ToolCalls, toolCall(p.id, p.name, p.args.String(), req, i))
	}
	return a.out
}

// toolCall builds a neutral call. Arguments that parse are kept as raw JSON; anything
// else is kept as a JSON string, so the registry can quote it back to the model. A missing
// id (some local servers) is made up, unique within the conversation.
func toolCall(id, name, args string, req *model.Request, i int) model.ToolCall {
	if id == "" {
		id = fmt.Sprintf("call_%d_%d", req.Step(), i+1)
	}
	return model.ToolCall{ID: id, Name: name, Arguments: model.ArgsFromText(args)}
}
