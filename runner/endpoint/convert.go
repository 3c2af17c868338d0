package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
)

// readBody reads a request body with the workspace's path shown as Canonical: the model
// sees one path whatever the run's temporary directory, so its answers, and a
// cassette's key, do not depend on it. The path holds no character JSON escapes (New
// checks), so it is found in the raw body as the agent wrote it.
//
// The body is the agent's, so it is bounded before anything decodes it: at most maxBody
// bytes (a larger Content-Length is refused unread), and nested and counted by
// runner/bounded's scan, which allocates nothing, before encoding/json sees it. Either
// refusal is a *badRequest.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > maxBody {
		return nil, tooLarge(r.ContentLength)
	}
	b, err := readAll(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(-1)
		}
		return nil, fmt.Errorf("read request: %w", err)
	}
	if err := bounded.JSON("request", b, bounded.EndpointRequest); err != nil {
		return nil, &badRequest{status: http.StatusBadRequest, kind: "invalid_request_error", msg: "runner's endpoint: " + err.Error()}
	}
	return replacePath(b, s.workdir, s.canon), nil
}

// readAll reads the body into one buffer of its announced length (io.ReadAll would
// grow one to its size, allocating about twice more on the way), or grows one for a body
// that announces none.
func readAll(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 {
		return io.ReadAll(r.Body)
	}
	b := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(r.Body, b); err != nil {
		return nil, err
	}
	return b, nil
}

func tooLarge(n int64) *badRequest {
	size := ""
	if n > 0 {
		size = fmt.Sprintf(" %d bytes,", n)
	}
	return &badRequest{status: http.StatusRequestEntityTooLarge, kind: "request_too_large",
		msg: fmt.Sprintf("runner's endpoint: the request body is%s more than the %d MiB it reads", size, maxBody>>20)}
}

// badRequest is a request the endpoint cannot read: over the size cap, nested past the
// bound, not JSON of the route's shape. No agent working as it should sends one, so it is
// the agent's fault: answered in its protocol, recorded, and the scenario fails.
type badRequest struct {
	status int
	kind   string
	msg    string
}

func (b *badRequest) Error() string { return b.msg }

// unsupported is a well-formed request asking for what the endpoint does not do
// (previous_response_id): refused, the agent not blamed.
type unsupported struct{ msg string }

func (u *unsupported) Error() string { return u.msg }

// decoded reads and decodes a model request with decode; on failure it answers the
// refusal itself and returns false. A request that cannot be read is the agent's fault
// (Server.fault).
func (s *Server) decoded(w http.ResponseWriter, r *http.Request, decode func([]byte) (*inbound, error)) (*inbound, bool) {
	body, err := s.readBody(r)
	if err == nil {
		var in *inbound
		if in, err = decode(body); err == nil {
			return in, true
		}
	}
	var bad *badRequest
	var un *unsupported
	switch {
	case errors.As(err, &un):
		writeError(w, r, http.StatusBadRequest, "invalid_request_error", un.msg)
		return nil, false
	case !errors.As(err, &bad):
		if r.Context().Err() != nil {
			return nil, false // the agent hung up mid-body: nothing to answer
		}
		bad = &badRequest{status: http.StatusBadRequest, kind: "invalid_request_error", msg: "runner's endpoint: " + err.Error()}
	}
	s.fault(bad.msg)
	writeError(w, r, bad.status, bad.kind, bad.msg)
	return nil, false
}

// answer is the part every API's handler shares: it decodes the agent's request with
// decode and has the model answer it (exchange). false: the agent has been answered
// already, with the refusal of its request or the step's failure.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, decode func([]byte) (*inbound, error)) (*inbound, *model.Response, int, bool) {
	in, ok := s.decoded(w, r, decode)
	if !ok {
		return nil, nil, 0, false
	}
	resp, step, err := s.exchange(r.Context(), in)
	if err != nil {
		failed(w, r, err)
		return nil, nil, 0, false
	}
	return in, resp, step, true
}

// modelName is the model an answer names: the one the agent asked for, else the task's.
func (s *Server) modelName(in *inbound) string {
	if in.model != "" {
		return in.model
	}
	return s.cfg.Model.Name()
}

// toAgent maps Canonical back to the workspace's path in what the model answered.
func (s *Server) toAgent(resp *model.Response) *model.Response {
	if len(s.canon) == 0 {
		return resp
	}
	resp.Content = string(replacePath([]byte(resp.Content), s.canon, s.workdir))
	calls := make([]model.ToolCall, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		c.Arguments = replacePath(c.Arguments, s.canon, s.workdir)
		calls[i] = c
	}
	resp.ToolCalls = calls
	return resp
}

// replacePath replaces the path from with to where it stands as a whole path or a
// path's start: not preceded by a path character ("/x/workspace" is another path) nor
// followed by a name character ("/workspace2" is another directory).
func replacePath(b, from, to []byte) []byte {
	if len(from) == 0 || !bytes.Contains(b, from) {
		return b
	}
	out := make([]byte, 0, len(b))
	i := 0
	for {
		j := bytes.Index(b[i:], from)
		if j < 0 {
			break
		}
		j += i
		end := j + len(from)
		whole := (j == 0 || !pathByte(b[j-1]) || escaped(b, j)) && (end == len(b) || !nameByte(b[end]))
		out = append(out, b[i:j]...)
		if whole {
			out = append(out, to...)
		} else {
			out = append(out, from...)
		}
		i = end
	}
	return append(out, b[i:]...)
}

// escaped reports whether b[j-2:j] is a JSON escape of a line break or tab (\n, \r, \t):
// a path at the start of a line inside a JSON string.
func escaped(b []byte, j int) bool {
	return j >= 2 && b[j-2] == '\\' && (b[j-1] == 'n' || b[j-1] == 'r' || b[j-1] == 't')
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

func pathByte(c byte) bool { return nameByte(c) || c == '/' }

// options merges what a request sets over the task's model_options.
func (s *Server) options(temperature, topP *float64, maxTokens int, seed *int) model.Options {
	o := s.cfg.Options
	if temperature != nil {
		o.Temperature = temperature
	}
	if topP != nil {
		o.TopP = topP
	}
	if maxTokens > 0 {
		o.MaxTokens = maxTokens
	}
	if seed != nil {
		o.Seed = seed
	}
	return o
}

// toolSpec turns a tool the agent offers into a spec: its schema passed on as written.
func toolSpec(name, description string, params json.RawMessage) (tools.Spec, error) {
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	if len(bytes.TrimSpace(params)) > 0 && string(bytes.TrimSpace(params)) != "null" {
		if err := json.Unmarshal(params, &schema); err != nil {
			return tools.Spec{}, fmt.Errorf("tool %q: parameters: %w", name, err)
		}
	}
	sch, err := tools.RawSchema(schema)
	if err != nil {
		return tools.Spec{}, fmt.Errorf("tool %q: %w", name, err)
	}
	return tools.Spec{Name: name, Description: description, Parameters: sch}, nil
}

// argsString is a call's arguments as the JSON text OpenAI's APIs carry: an object
// encoded, or the text of a string that holds one.
func argsString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// argsObject is a call's arguments as the object Anthropic's API carries ({} when they
// are not one).
func argsObject(raw json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(argsString(raw))
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// toolsResult is a tool's result as the agent reported it, as the transcript records it.
func toolsResult(output string, ok bool) result.ToolResult {
	if ok {
		return result.ToolResult{Success: true, Output: output}
	}
	return result.ToolResult{Output: output, Error: &result.ToolError{Code: string(tools.CodeExecutionError), Message: "the agent reported the call as failed"}}
}

// textOf joins the text of a content field that is a string, or a list of parts each
// with a "text" (OpenAI's text and input_text/output_text parts, Anthropic's text
// blocks), as paragraphs; other parts (images) are named, not sent.
func textOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	out := ""
	for _, p := range parts {
		switch {
		case p.Text != "" || strings.Contains(p.Type, "text"):
			out = joinText(out, p.Text)
		default:
			out = joinText(out, "["+p.Type+"]")
		}
	}
	return out
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError answers with an error in the protocol of the route: Anthropic's shape for
// /v1/messages, OpenAI's for the rest.
func writeError(w http.ResponseWriter, r *http.Request, status int, kind, msg string) {
	if strings.HasPrefix(r.URL.Path, "/v1/messages") {
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": msg}})
		return
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": kind, "param": nil, "code": kind}})
}

// failed answers an exchange's error: a refusal as itself, a model failure as a 502.
func failed(w http.ResponseWriter, r *http.Request, err error) {
	if rf, ok := err.(*refusal); ok {
		writeError(w, r, rf.status, rf.kind, rf.msg)
		return
	}
	writeError(w, r, http.StatusBadGateway, "api_error", "runner's endpoint: "+err.Error())
}

// sse writes server-sent events as they are produced.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event: "event: NAME" when name is set, then its data.
func (e *sse) event(name string, data any) {
	var b []byte
	switch d := data.(type) {
	case string:
		b = []byte(d)
	default:
		b, _ = json.Marshal(d)
	}
	var buf bytes.Buffer
	if name != "" {
		buf.WriteString("event: " + name + "\n")
	}
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	_, _ = e.w.Write(buf.Bytes())
}

func (e *sse) flush() {
	if e.f != nil {
		e.f.Flush()
	}
}

// estimateTokens is a rough count for count_tokens: about four bytes a token.
func estimateTokens(b []byte) int { return len(b)/4 + 1 }

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	b, err := readAll(r)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": estimateTokens(b)})
}

func (s *Server) modelEntry(id string) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": 1700000000, "owned_by": "runner",
		"type": "model", "display_name": id, "created_at": "2024-01-01T00:00:00Z"}
}

// models lists the run's model (OpenAI's and Anthropic's list shapes together).
func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	e := s.modelEntry(s.cfg.Model.Name())
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{e}, "has_more": false, "first_id": e["id"], "last_id": e["id"]})
}

// modelInfo describes any model asked for as the run's: whatever the agent names, the
// run's model answers.
func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.modelEntry(r.PathValue("id")))
}
