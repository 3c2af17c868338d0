package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ToolCall is one tool call in provider-neutral form. Arguments is always the raw JSON
// object (never a string holding one). Its fields match model.ToolCall, so a value
// converts with model.ToolCall(tc).
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// openAICall is a Chat Completions tool call; Ollama's has the same shape.
type openAICall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// ParseOpenAI returns the tool calls of a Chat Completions assistant message. It also
// takes a whole response (the first choice's message), a bare tool_calls array, and the
// legacy single "function_call". Calls without an id get "call_N".
func ParseOpenAI(data []byte) ([]ToolCall, error) {
	calls, err := parseOpenAIShape(data)
	if err != nil {
		return nil, fmt.Errorf("parse openai tool calls: %w", err)
	}
	return calls, nil
}

// ParseOllama returns the tool calls of an Ollama /api/chat message, a whole response
// (its "message"), or a bare tool_calls array. Ollama sends arguments as an object and
// usually no id, so calls get "call_N".
func ParseOllama(data []byte) ([]ToolCall, error) {
	calls, err := parseOpenAIShape(data)
	if err != nil {
		return nil, fmt.Errorf("parse ollama tool calls: %w", err)
	}
	return calls, nil
}

func parseOpenAIShape(data []byte) ([]ToolCall, error) {
	var msg struct {
		ToolCalls    []openAICall `json:"tool_calls"`
		FunctionCall *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function_call"`
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
		Message json.RawMessage `json:"message"`
	}
	switch first(data) {
	case '[':
		if err := json.Unmarshal(data, &msg.ToolCalls); err != nil {
			return nil, fmt.Errorf("tool_calls array: %w", err)
		}
	case '{':
		if err := json.Unmarshal(data, &msg); err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		// A whole response wraps the message: OpenAI in choices, Ollama in message.
		if len(msg.Choices) > 0 {
			return parseOpenAIShape(msg.Choices[0].Message)
		}
		if first(msg.Message) == '{' {
			return parseOpenAIShape(msg.Message)
		}
	default:
		return nil, errNotJSON(data)
	}
	calls := make([]ToolCall, 0, len(msg.ToolCalls)+1)
	for i, c := range msg.ToolCalls {
		tc, err := newCall(i, c.ID, c.Function.Name, c.Function.Arguments)
		if err != nil {
			return nil, err
		}
		calls = append(calls, tc)
	}
	if fc := msg.FunctionCall; fc != nil && len(calls) == 0 {
		tc, err := newCall(0, "", fc.Name, fc.Arguments)
		if err != nil {
			return nil, err
		}
		calls = append(calls, tc)
	}
	return calls, nil
}

// ParseAnthropic returns the tool_use blocks of a Messages API response: the content
// block array, or a message object holding it in "content".
func ParseAnthropic(data []byte) ([]ToolCall, error) {
	type block struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	var blocks []block
	switch first(data) {
	case '[':
		if err := json.Unmarshal(data, &blocks); err != nil {
			return nil, fmt.Errorf("parse anthropic tool calls: content blocks: %w", err)
		}
	case '{':
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(data, &msg); err != nil {
			return nil, fmt.Errorf("parse anthropic tool calls: message: %w", err)
		}
		if first(msg.Content) != '[' {
			return nil, nil // absent, or plain text content: no calls
		}
		return ParseAnthropic(msg.Content)
	default:
		return nil, fmt.Errorf("parse anthropic tool calls: %w", errNotJSON(data))
	}
	var calls []ToolCall
	for _, b := range blocks {
		if b.Type != "tool_use" {
			continue
		}
		tc, err := newCall(len(calls), b.ID, b.Name, b.Input)
		if err != nil {
			return nil, fmt.Errorf("parse anthropic tool calls: %w", err)
		}
		calls = append(calls, tc)
	}
	return calls, nil
}

// ParseGemini returns the functionCall parts of a Gemini response: the parts array, a
// content object ({"role":"model","parts":[...]}), or a whole response (the first
// candidate's content). Gemini sends no id unless asked, so calls get "call_N".
func ParseGemini(data []byte) ([]ToolCall, error) {
	type part struct {
		FunctionCall *struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCall"`
	}
	var parts []part
	switch first(data) {
	case '[':
		if err := json.Unmarshal(data, &parts); err != nil {
			return nil, fmt.Errorf("parse gemini tool calls: parts: %w", err)
		}
	case '{':
		var obj struct {
			Parts      []part `json:"parts"`
			Candidates []struct {
				Content json.RawMessage `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("parse gemini tool calls: content: %w", err)
		}
		if len(obj.Candidates) > 0 {
			if first(obj.Candidates[0].Content) != '{' {
				return nil, nil // a blocked or empty candidate has no content
			}
			return ParseGemini(obj.Candidates[0].Content)
		}
		parts = obj.Parts
	default:
		return nil, fmt.Errorf("parse gemini tool calls: %w", errNotJSON(data))
	}
	var calls []ToolCall
	for _, p := range parts {
		fc := p.FunctionCall
		if fc == nil {
			continue
		}
		tc, err := newCall(len(calls), fc.ID, fc.Name, fc.Args)
		if err != nil {
			return nil, fmt.Errorf("parse gemini tool calls: %w", err)
		}
		calls = append(calls, tc)
	}
	return calls, nil
}

// newCall checks one call and normalizes its id and arguments. i is the call's index in
// its message, which makes synthesized ids stable across parses of the same message.
func newCall(i int, id, name string, args json.RawMessage) (ToolCall, error) {
	if name == "" {
		return ToolCall{}, fmt.Errorf("call %d has no function name", i)
	}
	norm, err := NormalizeArguments(args)
	if err != nil {
		return ToolCall{}, fmt.Errorf("call %d (%s): %w", i, name, err)
	}
	if id == "" {
		id = "call_" + strconv.Itoa(i)
	}
	return ToolCall{ID: id, Name: name, Arguments: norm}, nil
}

// NormalizeArguments turns a call's arguments into compact object JSON: an object is
// kept, a string holding an object (OpenAI's encoding, and some models double-encode)
// is unwrapped, and absent, null or empty arguments become {}.
func NormalizeArguments(raw json.RawMessage) (json.RawMessage, error) {
	b := bytes.TrimSpace(raw)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("arguments string: %w", err)
		}
		b = bytes.TrimSpace([]byte(s))
	}
	if len(b) == 0 || string(b) == "null" {
		return json.RawMessage("{}"), nil
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("arguments are not a JSON object: %s", excerpt(b))
	}
	var out bytes.Buffer
	out.Grow(len(b))
	if err := json.Compact(&out, b); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON (%w): %s", err, excerpt(b))
	}
	return out.Bytes(), nil
}

// first returns the first non-space byte of data, or 0.
func first(data []byte) byte {
	b := bytes.TrimSpace(data)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func errNotJSON(data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("empty input")
	}
	return fmt.Errorf("want a JSON object or array, got %s", excerpt(data))
}

// excerpt shortens input for an error message.
func excerpt(b []byte) string {
	const limit = 80
	if len(b) > limit {
		return strconv.Quote(string(b[:limit])) + "..."
	}
	return strconv.Quote(string(b))
}
