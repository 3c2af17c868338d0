package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/format"
)

// The request's types carry the wire's field names, with the SDK's omitempty rules (an
// empty text or args is left out), so the body is the one genai would send; the
// conformance test holds them to that.

// generateRequest is the body of generateContent and streamGenerateContent.
type generateRequest struct {
	Contents          []content `json:"contents,omitempty"`
	SystemInstruction *content  `json:"systemInstruction,omitempty"`
	// Tools is the rendered tool list, kept rendered by the tool cache.
	Tools json.RawMessage `json:"tools,omitempty"`
	// GenerationConfig is always sent, {} when empty, as the SDK does.
	GenerationConfig generationConfig `json:"generationConfig"`
	// ContinuationToken resumes an answer that stopped with finishReason CONTINUATION.
	ContinuationToken []byte `json:"continuationToken,omitempty"`
}

// generationConfig holds the sampling options. The SDK's types are 32-bit, so the values
// are rounded to float32 and int32 as before.
type generationConfig struct {
	Temperature     *float32 `json:"temperature,omitempty"`
	TopP            *float32 `json:"topP,omitempty"`
	Seed            *int32   `json:"seed,omitempty"`
	MaxOutputTokens int32    `json:"maxOutputTokens,omitempty"`
}

// Roles of contents.
const (
	roleUser  = "user"
	roleModel = "model"
)

// content is one turn: the request's history and the response's candidate alike.
type content struct {
	Parts []part `json:"parts,omitempty"`
	Role  string `json:"role,omitempty"`
}

// part is one piece of a turn. ThoughtSignature is bytes, base64 on the wire.
type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature []byte            `json:"thoughtSignature,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

// functionCall is a call the model made, or one sent back in the history.
type functionCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	// Args is the arguments object as the server sent it: numbers keep every digit,
	// which the SDK's map[string]any did not.
	Args object `json:"args,omitempty"`
}

// functionResponse is a tool's result; the runner's results are {"output": text}.
type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name,omitempty"`
	Response responseOutput `json:"response"`
}

type responseOutput struct {
	Output string `json:"output"`
}

// object is a JSON object kept as raw bytes. Like the SDK's map, it takes an object or
// null and nothing else, and an empty one is left out of a request.
type object []byte

// UnmarshalJSON takes an object as is and null as empty.
func (o *object) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*o = nil
	case len(b) > 0 && b[0] == '{':
		*o = append((*o)[:0], b...)
	default:
		return fmt.Errorf("functionCall args: want an object, got %s", model.Truncate(string(b), 40))
	}
	return nil
}

// MarshalJSON writes the object (null when unset; omitempty leaves it out).
func (o object) MarshalJSON() ([]byte, error) {
	if len(o) == 0 {
		return []byte("null"), nil
	}
	return o, nil
}

// request translates a neutral request. System messages become the system instruction;
// parts of one role in a row share a turn, so the results of a turn's calls go back
// together, in the order of the calls.
func (m *Model) request(req *model.Request) (*generateRequest, error) {
	body := &generateRequest{}
	var err error
	if body.Tools, err = m.tools.Get(req.Tools, renderTools); err != nil {
		return nil, err
	}
	o := req.Options
	gc := &body.GenerationConfig
	if o.Temperature != nil {
		t := float32(*o.Temperature)
		gc.Temperature = &t
	}
	if o.TopP != nil {
		p := float32(*o.TopP)
		gc.TopP = &p
	}
	if o.Seed != nil {
		s := int32(*o.Seed)
		gc.Seed = &s
	}
	if o.MaxTokens > 0 {
		gc.MaxOutputTokens = int32(o.MaxTokens)
	}
	add := func(role string, parts ...part) {
		if n := len(body.Contents); n > 0 && body.Contents[n-1].Role == role {
			body.Contents[n-1].Parts = append(body.Contents[n-1].Parts, parts...)
			return
		}
		body.Contents = append(body.Contents, content{Role: role, Parts: parts})
	}
	var system []part
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleSystem:
			system = append(system, part{Text: msg.Content})
		case model.RoleUser:
			add(roleUser, part{Text: msg.Content})
		case model.RoleTool:
			add(roleUser, part{FunctionResponse: &functionResponse{
				Name: msg.ToolName, Response: responseOutput{Output: msg.Content},
			}})
		case model.RoleAssistant:
			var parts []part
			if msg.Content != "" {
				parts = append(parts, part{Text: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				m.mu.Lock()
				sig := m.signatures[tc.ID]
				m.mu.Unlock()
				parts = append(parts, part{ThoughtSignature: sig, FunctionCall: &functionCall{Name: tc.Name, Args: argsObject(tc.Arguments)}})
			}
			if len(parts) == 0 {
				parts = append(parts, part{Text: " "}) // a turn needs a part
			}
			add(roleModel, parts...)
		}
	}
	if len(system) > 0 {
		// The SDK gives a system instruction without a role the role "user".
		body.SystemInstruction = &content{Role: roleUser, Parts: system}
	}
	return body, nil
}

// toolCall makes a neutral call of a functionCall part. Gemini's API gives calls no id,
// so one is made up from the step, as the loop would. The call's thoughtSignature is kept
// to go back with it.
func (m *Model) toolCall(p *part, step, i int) model.ToolCall {
	fc := p.FunctionCall
	id := fc.ID
	if id == "" {
		id = fmt.Sprintf("call_%d_%d", step, i+1)
	}
	args := json.RawMessage(fc.Args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if len(p.ThoughtSignature) > 0 {
		m.mu.Lock()
		m.signatures[id] = p.ThoughtSignature
		m.mu.Unlock()
	}
	return model.ToolCall{ID: id, Name: fc.Name, Arguments: args}
}

// argsObject is a call's arguments as the object functionCall wants: a string holding one
// is unwrapped, anything else is sent empty, and empty is left out, as the SDK leaves out
// an empty map.
func argsObject(raw json.RawMessage) object {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil || buf.String() == "{}" {
		return nil
	}
	return buf.Bytes()
}

// tool is one entry of the request's tools.
type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations,omitempty"`
}

type functionDeclaration struct {
	Name        string  `json:"name,omitempty"`
	Description string  `json:"description,omitempty"`
	Parameters  *schema `json:"parameters,omitempty"`
	// ParametersJSONSchema is standard JSON Schema, for what schema cannot hold.
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// schema is Gemini's OpenAPI subset: the keywords tools/format keeps (geminiKeywords),
// typed as the SDK's Schema types them, so empty ones are dropped the same way.
type schema struct {
	Type        string             `json:"type,omitempty"`
	Description string             `json:"description,omitempty"`
	Nullable    *bool              `json:"nullable,omitempty"`
	Enum        []string           `json:"enum,omitempty"`
	Items       *schema            `json:"items,omitempty"`
	Properties  map[string]*schema `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
	Minimum     *float64           `json:"minimum,omitempty"`
	Maximum     *float64           `json:"maximum,omitempty"`
	MinLength   *int64             `json:"minLength,omitempty"`
	MaxLength   *int64             `json:"maxLength,omitempty"`
	MinItems    *int64             `json:"minItems,omitempty"`
	MaxItems    *int64             `json:"maxItems,omitempty"`
	Pattern     string             `json:"pattern,omitempty"`
}

// renderTools renders the shared Gemini rendering as the request's tools JSON, through
// the typed declarations.
func renderTools(specs []tools.Spec) (json.RawMessage, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(format.Gemini(specs))
	if err != nil {
		return nil, fmt.Errorf("gemini: render tools: %w", err)
	}
	var t tool
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("gemini: render tools: %w", err)
	}
	out, err := json.Marshal([]tool{t})
	if err != nil {
		return nil, fmt.Errorf("gemini: render tools: %w", err)
	}
	return out, nil
}
