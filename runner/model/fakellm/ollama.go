package fakellm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	ollamamodel "github.com/ollama/ollama/types/model"

	"github.com/agentrunner/runner/runner/model"
)

func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	rec := Request{API: "ollama", Body: raw}
	if s.script.Bench {
		var head struct {
			Stream *bool `json:"stream"`
		}
		_ = json.Unmarshal(raw, &head)
		rec.Stream = head.Stream == nil || *head.Stream
	} else {
		var req api.ChatRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "fakellm: bad chat request: " + err.Error()})
			return
		}
		rec.Model, rec.Options = req.Model, req.Options
		rec.Stream = req.Stream == nil || *req.Stream // Ollama streams unless told not to
		for _, m := range req.Messages {
			nm := model.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName}
			for _, tc := range m.ToolCalls {
				args, _ := json.Marshal(tc.Function.Arguments)
				nm.ToolCalls = append(nm.ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
			}
			rec.Messages = append(rec.Messages, nm)
		}
		for _, t := range req.Tools {
			rec.Tools = append(rec.Tools, t.Function.Name)
		}
	}
	var loadTime time.Duration
	if !s.script.Bench {
		loadTime = s.load(r, rec.Model, rec.Options)
	}
	if !s.script.Bench && len(rec.Messages) == 0 {
		// A chat request without messages only loads the model, as Ollama answers it.
		writeJSON(w, http.StatusOK, api.ChatResponse{Model: rec.Model, CreatedAt: s.started, Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "load",
			Metrics: api.Metrics{LoadDuration: loadTime, TotalDuration: loadTime}})
		return
	}
	reply, _ := s.next(&rec)
	wait(r, reply.Delay)
	switch reply.Fault {
	case FaultStatus:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		writeJSON(w, statusCode(reply), map[string]string{"error": statusMessage(reply)})
	case FaultDrop:
		drop(w)
	case FaultMalformed:
		b := ollamaBody(reply, rec, s.started, loadTime)
		b.chunks = [][]byte{[]byte(`{"model":"fake","message":{"role":"assistant","content":` + "<html>not json</html>\n")}
		b.write(w)
	case FaultTruncate:
		ollamaBody(reply, rec, s.started, loadTime).truncate(w)
	default:
		ollamaBody(reply, rec, s.started, loadTime).write(w)
	}
}

// ollamaBody renders a reply as /api/chat does: one object, or NDJSON lines (content in
// pieces, the tool calls whole, then a final "done" record with the metrics).
func ollamaBody(reply Reply, rec Request, started time.Time, loadTime time.Duration) body {
	u := usage(reply, len(rec.Messages))
	st := model.StepOf(rec.Messages)
	name := rec.Model
	if name == "" {
		name = "fake"
	}
	var calls []api.ToolCall
	for i, c := range reply.ToolCalls {
		calls = append(calls, api.ToolCall{ID: callID(c, st, i), Function: api.ToolCallFunction{Index: i, Name: c.Name}})
	}
	final := api.ChatResponse{
		Model:      name,
		CreatedAt:  started,
		Message:    api.Message{Role: "assistant"},
		Done:       true,
		DoneReason: "stop",
		Metrics: api.Metrics{
			TotalDuration:   time.Duration(u.EvalDuration) + 10*time.Millisecond + loadTime,
			LoadDuration:    loadTime,
			PromptEvalCount: u.PromptTokens,
			EvalCount:       u.CompletionTokens,
			EvalDuration:    time.Duration(u.EvalDuration),
		},
	}
	if !rec.Stream {
		final.Message.Content = reply.Text
		final.Message.ToolCalls = calls
		return body{contentType: "application/json; charset=utf-8", chunks: [][]byte{ollamaLine(final, reply)}}
	}
	b := body{contentType: "application/x-ndjson", stream: true}
	for _, piece := range split(reply.Text) {
		b.chunks = append(b.chunks, ollamaLine(api.ChatResponse{
			Model: name, CreatedAt: started, Message: api.Message{Role: "assistant", Content: piece},
		}, reply))
	}
	if len(calls) > 0 {
		b.chunks = append(b.chunks, ollamaLine(api.ChatResponse{
			Model: name, CreatedAt: started, Message: api.Message{Role: "assistant", ToolCalls: calls},
		}, reply))
	}
	b.chunks = append(b.chunks, ollamaLine(final, reply))
	return b
}

// ollamaLine marshals one record, putting each scripted call's arguments in: objects as
// Ollama sends them, or strings when the reply asks for them (or holds malformed ones).
func ollamaLine(r api.ChatResponse, reply Reply) []byte {
	b, _ := json.Marshal(r)
	if len(r.Message.ToolCalls) > 0 {
		var doc map[string]any
		_ = json.Unmarshal(b, &doc)
		msg := doc["message"].(map[string]any)
		tcs := msg["tool_calls"].([]any)
		for i, c := range reply.ToolCalls {
			fn := tcs[i].(map[string]any)["function"].(map[string]any)
			if reply.ArgsAs == "string" {
				fn["arguments"] = argsString(c)
			} else {
				fn["arguments"] = json.RawMessage(argsObject(c))
			}
		}
		b, _ = json.Marshal(doc)
	}
	return append(b, '\n')
}

// split cuts text into up to three pieces, as a stream would deliver it.
func split(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	if len(words) < 3 {
		return []string{text}
	}
	third := len(words) / 3
	return []string{
		strings.Join(words[:third], ""),
		strings.Join(words[third:2*third], ""),
		strings.Join(words[2*third:], ""),
	}
}

func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "fakellm: bad show request: " + err.Error()})
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name //nolint:staticcheck // SA1019: older clients still send name; a real server accepts both.
	}
	caps := []string{"completion", "tools"}
	if s.script.Models != nil {
		var ok bool
		if caps, ok = s.script.Models[name]; !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "model '" + name + "' not found"})
			return
		}
	}
	resp := api.ShowResponse{
		Details:   api.ModelDetails{Format: "gguf", Family: "fake", ParameterSize: "1B", QuantizationLevel: "Q4_K_M"},
		ModelInfo: map[string]any{"general.architecture": "fake", "fake.context_length": s.contextLength()},
	}
	for _, c := range caps {
		resp.Capabilities = append(resp.Capabilities, ollamamodel.Capability(c))
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) ollamaTags(w http.ResponseWriter, _ *http.Request) {
	resp := api.ListResponse{}
	for name := range s.script.Models {
		resp.Models = append(resp.Models, api.ListModelResponse{Name: name, Model: name, Digest: digest(name)})
	}
	writeJSON(w, http.StatusOK, resp)
}

// ollamaPS lists the models loaded by a chat request, with the context they run with
// and their placement.
func (s *Server) ollamaPS(w http.ResponseWriter, _ *http.Request) {
	resp := api.ProcessResponse{}
	s.mu.Lock()
	for name, ctx := range s.loaded {
		p, ok := s.script.Placements[name]
		if !ok {
			p = Placement{Size: 1 << 30, SizeVRAM: 1 << 30}
		}
		resp.Models = append(resp.Models, api.ProcessModelResponse{Name: name, Model: name, Digest: digest(name), ContextLength: ctx, Size: p.Size, SizeVRAM: p.SizeVRAM})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
}

// load loads the model for a request, as Ollama's scheduler does: again when it is not
// loaded or was loaded with another num_ctx. It returns the load_duration to report: the
// script's LoadDelay for a load, its ScheduleTime otherwise.
func (s *Server) load(r *http.Request, name string, opts map[string]any) time.Duration {
	ctx := s.contextLength()
	if n, ok := opts["num_ctx"].(float64); ok && n > 0 {
		ctx = int(n)
	}
	s.mu.Lock()
	have, loaded := s.loaded[name]
	if loaded && have == ctx {
		s.mu.Unlock()
		if s.script.ScheduleTime > 0 {
			return time.Duration(s.script.ScheduleTime)
		}
		return time.Millisecond
	}
	s.loaded[name] = ctx
	s.loads++
	s.mu.Unlock()
	wait(r, s.script.LoadDelay)
	return time.Duration(s.script.LoadDelay)
}

// Loads is how many times the server loaded a model: what a real server's log shows as
// "loading model" lines.
func (s *Server) Loads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads
}

// Unload drops a model from memory, as a server evicting it for another does.
func (s *Server) Unload(name string) {
	s.mu.Lock()
	delete(s.loaded, name)
	s.mu.Unlock()
}

func (s *Server) contextLength() int {
	if s.script.ContextLength > 0 {
		return s.script.ContextLength
	}
	return 4096
}

// digest is a stable made-up digest for a model name.
func digest(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}
