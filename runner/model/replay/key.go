// Package replay records model responses into a cassette directory and plays them back
// offline. A response is stored under a hash of the normalised request: the model's
// name, the conversation (roles, text, tool calls by name and canonical arguments, the
// tools answered), the tool specs and the sampling options. Call ids are left out: the
// providers and the loop derive them from the step, and servers make up their own.
//
// A cassette is plain JSON a reviewer can read and diff: index.json lists every
// recording, each response is one file beside it holding its normalised request, and
// the tool lists are stored once each under tools/.
package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/toolcache"
	"github.com/agentrunner/runner/tools"
)

// Request is a model request in the normalised form that is hashed and stored.
type Request struct {
	Messages []Message `json:"messages"`
	// Tools is the hash of the tool list; the list itself is in tools/HASH.json.
	Tools   string        `json:"tools"`
	Options model.Options `json:"options"`
}

// Message is a conversation turn without its ids.
type Message struct {
	Role      string `json:"role"`
	Content   string `json:"content,omitempty"`
	ToolCalls []Call `json:"tool_calls,omitempty"`
	ToolName  string `json:"tool_name,omitempty"`
}

// Call is a tool call without its id, its arguments as compact JSON with sorted keys.
type Call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Tool is one tool spec as stored under tools/.
type Tool struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Parameters  *tools.Schema `json:"parameters"`
	// Freeform is a free-form tool's grammar (an external agent's custom tool); absent
	// for JSON tools, so their lists hash as before.
	Freeform *tools.Freeform `json:"freeform,omitempty"`
}

// toolHashes caches each tool list's hash and encoding: the list does not change during a
// run, and encoding sixteen schemas every step would be per-step cost for nothing.
var toolHashes toolcache.Cache[encodedTools]

type encodedTools struct {
	hash string
	json []byte
}

func encodeTools(specs []tools.Spec) (encodedTools, error) {
	list := make([]Tool, len(specs))
	for i, s := range specs {
		list[i] = Tool{Name: s.Name, Description: s.Description, Parameters: s.Parameters, Freeform: s.Freeform}
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return encodedTools{}, fmt.Errorf("replay: encode tool specs: %w", err)
	}
	return encodedTools{hash: digest(b)[:16], json: b}, nil
}

// Normalise returns req in stored form, with the encoding of its tool list.
func Normalise(req *model.Request) (Request, []byte, error) {
	et, err := toolHashes.Get(req.Tools, encodeTools)
	if err != nil {
		return Request{}, nil, err
	}
	n := Request{Messages: make([]Message, len(req.Messages)), Tools: et.hash, Options: req.Options}
	for i, m := range req.Messages {
		nm := Message{Role: m.Role, Content: m.Content, ToolName: m.ToolName}
		switch {
		case req.External && m.Role != model.RoleAssistant:
			// An external agent writes its own system prompt, user turns and tool
			// results: the date, its session's ids and its tools' timings in them must
			// not make a replay miss.
			nm.Content = maskExternal(m.Content)
		case m.Role == model.RoleTool:
			nm.Content = maskVolatile(m.Content)
		}
		for _, c := range m.ToolCalls {
			nm.ToolCalls = append(nm.ToolCalls, Call{Name: c.Name, Arguments: canonicalArgs(c.Arguments)})
		}
		n.Messages[i] = nm
	}
	return n, et.json, nil
}

// Hash is the key of a normalised request (the model's name is kept beside it).
func (r Request) Hash() string {
	b, _ := json.Marshal(r) // plain strings, numbers and raw JSON: cannot fail
	return digest(b)
}

// canonicalArgs gives arguments one form: an object (also one sent as a JSON string)
// re-encoded with sorted keys; anything else as it came, as a JSON string if not JSON.
func canonicalArgs(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil && json.Valid([]byte(s)) {
		raw = []byte(s)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep big integers exact
	if dec.Decode(&v) != nil || dec.More() {
		b, _ := json.Marshal(string(raw))
		return b
	}
	b, _ := json.Marshal(v) // maps encode with sorted keys
	return b
}

// volatile matches what a tool's output holds that changes from run to run although the
// agent did the same: timestamps (terminal_last_command's "Executed at"), durations
// that tests print ("ok example.com/x 0.004s", "in 0.12s", "35ms") and the name of
// the scenario's temporary workspace.
var volatile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?` +
		`|\b\d+\.\d+(?:s|ms|µs|us|ns)\b|\b\d+(?:ms|µs|us|ns)\b` +
		`|runner-[^\s/"']*-\d+`)
})

// maskVolatile replaces volatile text with a fixed mark, so that replaying a run whose
// commands print the time asks the recorded question.
func maskVolatile(s string) string {
	return volatile().ReplaceAllStringFunc(s, func(m string) string {
		switch {
		case strings.HasPrefix(m, "runner-"):
			return "runner-<workspace>"
		case strings.Contains(m, ":"):
			return "<time>"
		}
		return "<duration>"
	})
}

// externalVolatile is what an external agent's own text holds that changes from run to
// run, besides what volatile matches: UUIDs (session and request ids), dates without a
// time (Claude Code's "Today's date is", Codex's <current_date>), ids its tools print
// (Codex's "Chunk ID: 3f9a2c") and timings in words (Codex's "Wall time: 0.0213 seconds").
var externalVolatile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b` +
		`|(?i:\b(?:chunk|call|request|session|trace) id: [\w-]+)` +
		`|\b\d{4}-\d{2}-\d{2}\b` +
		`|\b\d+(?:\.\d+)? seconds?\b`)
})

// maskExternal masks volatile text, then an external agent's ids, dates and timings.
func maskExternal(s string) string {
	return externalVolatile().ReplaceAllStringFunc(maskVolatile(s), func(m string) string {
		switch {
		case strings.Count(m, "-") == 4 || strings.Contains(strings.ToLower(m), " id: "):
			return "<id>"
		case strings.HasSuffix(m, "second") || strings.HasSuffix(m, "seconds"):
			return "<duration>"
		}
		return "<date>"
	})
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
