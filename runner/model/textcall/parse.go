package textcall

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agentrunner/runner/runner/model"
)

const (
	openTag   = "<tool_call>"
	closeTag  = "</tool_call>"
	pythonTok = "<|python_tag|>"
)

// hermes reads every <tool_call> block. A missing closing tag at the end of the text is
// forgiven: models stop there often.
func hermes(text string) ([]model.ToolCall, string) {
	if !strings.Contains(text, openTag) {
		return nil, text
	}
	var calls []model.ToolCall
	var rest strings.Builder
	for {
		i := strings.Index(text, openTag)
		if i < 0 {
			rest.WriteString(text)
			break
		}
		rest.WriteString(text[:i])
		text = text[i+len(openTag):]
		end, skip := len(text), 0
		if j := strings.Index(text, closeTag); j >= 0 {
			end, skip = j, len(closeTag)
		}
		if j := strings.Index(text[:end], openTag); j >= 0 {
			end, skip = j, 0 // the next block began before this one closed
		}
		calls = append(calls, fromBlock(text[:end])...)
		text = text[end+skip:]
	}
	return mark(calls), strings.TrimSpace(rest.String())
}

// pythonTag reads what follows Llama's <|python_tag|>: JSON calls (several may be
// separated by ";") or Python-style name(arg=value, ...) calls.
func pythonTag(text string) ([]model.ToolCall, string) {
	i := strings.Index(text, pythonTok)
	if i < 0 {
		return nil, text
	}
	payload := text[i+len(pythonTok):]
	for _, stop := range []string{"<|eom_id|>", "<|eot_id|>"} {
		if j := strings.Index(payload, stop); j >= 0 {
			payload = payload[:j]
		}
	}
	rest := strings.TrimSpace(text[:i])
	if calls, ok := jsonCalls(payload, true); ok {
		return mark(calls), rest
	}
	if calls, ok := pythonCalls(payload); ok {
		return mark(calls), rest
	}
	return mark([]model.ToolCall{malformed(payload)}), rest
}

// bareJSON reads a text that is nothing but a call object or a list of them, perhaps in
// a ```json fence. Anything else is prose, even if it holds JSON.
func bareJSON(text string) ([]model.ToolCall, string) {
	body := unfence(text)
	if !strings.HasPrefix(body, "{") && !strings.HasPrefix(body, "[") {
		return nil, text
	}
	if calls, ok := jsonCalls(body, false); ok {
		return mark(calls), ""
	}
	return nil, text
}

// fromBlock reads the inside of a <tool_call> block: an object or a list of objects.
func fromBlock(block string) []model.ToolCall {
	body := unfence(block)
	if calls, ok := jsonCalls(body, false); ok {
		return calls
	}
	return []model.ToolCall{malformed(body)}
}

// jsonCalls reads one or more JSON values, each a call object or a list of them, and
// nothing else (separators ";" allowed when semi is set).
func jsonCalls(s string, semi bool) ([]model.ToolCall, bool) {
	var calls []model.ToolCall
	for {
		s = strings.TrimSpace(s)
		if s == "" {
			return calls, len(calls) > 0
		}
		if semi && len(calls) > 0 && s[0] == ';' {
			s = s[1:]
			continue
		}
		dec := json.NewDecoder(strings.NewReader(s))
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		got, ok := fromValue(v)
		if !ok {
			return nil, false
		}
		calls = append(calls, got...)
		s = s[dec.InputOffset():]
	}
}

func fromValue(v json.RawMessage) ([]model.ToolCall, bool) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil || len(list) == 0 {
			return nil, false
		}
		var out []model.ToolCall
		for _, item := range list {
			c, ok := fromObject(item)
			if !ok {
				return nil, false
			}
			out = append(out, c)
		}
		return out, true
	}
	c, ok := fromObject(v)
	if !ok {
		return nil, false
	}
	return []model.ToolCall{c}, true
}

// fromObject reads {"name": N, "arguments"|"parameters": A}, also OpenAI's nested
// {"function": {"name": N, "arguments": A}}.
func fromObject(raw json.RawMessage) (model.ToolCall, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return model.ToolCall{}, false
	}
	if fn, ok := obj["function"]; ok && bytes.HasPrefix(bytes.TrimSpace(fn), []byte("{")) {
		return fromObject(fn)
	}
	var name string
	if json.Unmarshal(obj["name"], &name) != nil || strings.TrimSpace(name) == "" {
		return model.ToolCall{}, false
	}
	args, ok := obj["arguments"]
	if !ok {
		args, ok = obj["parameters"]
	}
	for k := range obj {
		switch k {
		case "name", "arguments", "parameters", "id", "type":
		default:
			return model.ToolCall{}, false // an object with other keys is data, not a call
		}
	}
	if !ok || len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	return model.ToolCall{Name: strings.TrimSpace(name), Arguments: args}, true
}

var nameField = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"name"\s*:\s*"([^"\\]{1,100})"`) })

// malformed is the call for text that is clearly meant as one but does not parse: the
// name if one can be read, the text itself as the arguments.
func malformed(text string) model.ToolCall {
	name := unreadable
	if m := nameField().FindStringSubmatch(text); m != nil {
		name = m[1]
	}
	args, _ := json.Marshal(strings.TrimSpace(text))
	return model.ToolCall{Name: name, Arguments: args}
}

// unfence strips surrounding whitespace and one ``` or ```json fence.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = strings.TrimSuffix(s[3:], "```")
	if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
		s = s[nl+1:] // the language tag
	}
	return strings.TrimSpace(s)
}

// pythonCalls reads Llama's built-in tool syntax: name(arg="v", n=1) or
// brave_search.call(query="..."), several separated by ";" or newlines. Values are
// Python literals: strings, numbers, True, False, None, and JSON lists or objects.
func pythonCalls(s string) ([]model.ToolCall, bool) {
	p := &pyParser{s: s}
	var calls []model.ToolCall
	for {
		p.space(true)
		if p.done() {
			return calls, len(calls) > 0
		}
		c, ok := p.call()
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) done() bool { return p.i >= len(p.s) }

// space skips blanks, and with seps also ";" and "," between calls.
func (p *pyParser) space(seps bool) {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case seps && c == ';':
		default:
			return
		}
		p.i++
	}
}

func (p *pyParser) ident() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || p.i > start && c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

func (p *pyParser) call() (model.ToolCall, bool) {
	name := strings.TrimSuffix(p.ident(), ".call")
	p.space(false)
	if name == "" || p.done() || p.s[p.i] != '(' {
		return model.ToolCall{}, false
	}
	p.i++
	args := map[string]any{}
	for {
		p.space(false)
		if p.done() {
			return model.ToolCall{}, false
		}
		if p.s[p.i] == ')' {
			p.i++
			break
		}
		key := p.ident()
		p.space(false)
		if key == "" || p.done() || p.s[p.i] != '=' {
			return model.ToolCall{}, false
		}
		p.i++
		p.space(false)
		v, ok := p.value()
		if !ok {
			return model.ToolCall{}, false
		}
		args[key] = v
		p.space(false)
		if !p.done() && p.s[p.i] == ',' {
			p.i++
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return model.ToolCall{}, false
	}
	return model.ToolCall{Name: name, Arguments: b}, true
}

func (p *pyParser) value() (any, bool) {
	if p.done() {
		return nil, false
	}
	switch c := p.s[p.i]; c {
	case '"', '\'':
		return p.str(c)
	case '[', '{':
		dec := json.NewDecoder(strings.NewReader(p.s[p.i:]))
		var v any
		if dec.Decode(&v) != nil {
			return nil, false
		}
		p.i += int(dec.InputOffset())
		return v, true
	}
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(",) \t\n", rune(p.s[p.i])) {
		p.i++
	}
	word := p.s[start:p.i]
	switch word {
	case "True", "true":
		return true, true
	case "False", "false":
		return false, true
	case "None", "null":
		return nil, true
	}
	if n, err := strconv.ParseFloat(word, 64); err == nil {
		if i, err := strconv.ParseInt(word, 10, 64); err == nil {
			return i, true
		}
		return n, true
	}
	return nil, false
}

// str reads a quoted Python string with backslash escapes.
func (p *pyParser) str(q byte) (any, bool) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), true
		case c == '\\' && p.i+1 < len(p.s):
			p.i++
			switch e := p.s[p.i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
		p.i++
	}
	return nil, false
}
