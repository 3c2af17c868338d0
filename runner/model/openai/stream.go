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
	defer s.Close()

	type partial struct {
		id, name string
		args     strings.Builder
	}
	var (
		content  strings.Builder
		calls    = map[int]*partial{}
		out      = &model.Response{}
		finished bool
	)
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if chunk.Model != "" {
			out.Model = chunk.Model
		}
		if chunk.Usage != nil {
			out.Usage = usage(*chunk.Usage)
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue
			}
			content.WriteString(choice.Delta.Content)
			for pos, tc := range choice.Delta.ToolCalls {
				idx := pos
				if tc.Index != nil {
					idx = *tc.Index
				}
				p := calls[idx]
				if p == nil {
					p = &partial{}
					calls[idx] = p
				}
				if tc.ID != "" {
					p.id = tc.ID
				}
				if tc.Function.Name != "" {
					p.name += tc.Function.Name
				}
				p.args.WriteString(tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finished = true
				out.StopReason = string(choice.FinishReason)
			}
		}
	}
	if !finished {
		// go-openai reports a body that stops early as a normal end; an answer without a
		// finish_reason was cut off, most likely by a dropped connection.
		return nil, &model.ProviderError{
			Provider: "openai", Host: m.Host(), Temporary: true,
			Message: "connection dropped: the stream ended before a finish_reason",
		}
	}
	out.Content = content.String()
	idxs := make([]int, 0, len(calls))
	for idx := range calls {
		idxs = append(idxs, idx)
	}
	sort.Ints(idxs)
	for i, idx := range idxs {
		p := calls[idx]
		out.ToolCalls = append(out.ToolCalls, toolCall(p.id, p.name, p.args.String(), req, i))
	}
	return out, nil
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
