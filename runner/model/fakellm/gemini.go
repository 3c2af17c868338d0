package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"github.com/agentrunner/runner/runner/model"
)

// geminiRequest is the body of generateContent; its contents are the SDK's own types,
// which carry the wire's field names. The SDK is not in the runner (runner/model/gemini
// speaks REST with types of its own), so the fake reading requests with the SDK's types
// is a second, independent check of what the client sends.
type geminiRequest struct {
	Contents          []*genai.Content `json:"contents"`
	SystemInstruction *genai.Content   `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		Temperature     *float64 `json:"temperature"`
		TopP            *float64 `json:"topP"`
		Seed            *int     `json:"seed"`
		MaxOutputTokens int      `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

// geminiGenerate serves POST /v1beta/models/MODEL:generateContent and
// :streamGenerateContent (server-sent events with ?alt=sse, as the SDK asks).
func (s *Server) geminiGenerate(w http.ResponseWriter, r *http.Request) {
	name, method, _ := strings.Cut(r.PathValue("action"), ":")
	if method != "generateContent" && method != "streamGenerateContent" {
		geminiError(w, http.StatusNotFound, "fakellm: unknown method "+method)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if r.Header.Get("X-Goog-Api-Key") == "" {
		geminiError(w, http.StatusForbidden, "fakellm: the x-goog-api-key header is required")
		return
	}
	if method == "streamGenerateContent" && r.URL.Query().Get("alt") != "sse" {
		// Without alt=sse the real API streams one JSON array, which no client here reads.
		geminiError(w, http.StatusBadRequest, "fakellm: streamGenerateContent wants ?alt=sse")
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		geminiError(w, http.StatusBadRequest, "fakellm: bad generateContent request: "+err.Error())
		return
	}
	rec := Request{API: "gemini", Body: raw, Model: name, Stream: method == "streamGenerateContent", Options: map[string]any{}}
	gc := req.GenerationConfig
	if gc.Temperature != nil {
		rec.Options["temperature"] = *gc.Temperature
	}
	if gc.TopP != nil {
		rec.Options["top_p"] = *gc.TopP
	}
	if gc.Seed != nil {
		rec.Options["seed"] = *gc.Seed
	}
	if gc.MaxOutputTokens != 0 {
		rec.Options["max_tokens"] = gc.MaxOutputTokens
	}
	if si := req.SystemInstruction; si != nil {
		var b strings.Builder
		for _, p := range si.Parts {
			b.WriteString(p.Text)
		}
		rec.Messages = append(rec.Messages, model.Message{Role: model.RoleSystem, Content: b.String()})
	}
	for _, c := range req.Contents {
		if c.Role == genai.RoleModel {
			nm := model.Message{Role: model.RoleAssistant}
			for _, p := range c.Parts {
				if p.FunctionCall != nil {
					args, _ := json.Marshal(p.FunctionCall.Args)
					nm.ToolCalls = append(nm.ToolCalls, model.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: args})
				}
				nm.Content += p.Text
			}
			rec.Messages = append(rec.Messages, nm)
			continue
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				out, _ := p.FunctionResponse.Response["output"].(string)
				rec.Messages = append(rec.Messages, model.Message{Role: model.RoleTool, ToolName: p.FunctionResponse.Name, ToolCallID: p.FunctionResponse.ID, Content: out})
			default:
				rec.Messages = append(rec.Messages, model.Message{Role: model.RoleUser, Content: p.Text})
			}
		}
	}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			rec.Tools = append(rec.Tools, d.Name)
		}
	}
	reply, _ := s.next(&rec)
	wait(r, reply.Delay)
	play(w, reply, rec.Stream, func() body { return geminiBody(reply, rec) }, geminiError,
		"data: {\"candidates\": <html>not json</html>\n\n",
		`{"candidates":[<html>not json</html>`)
}

func geminiError(w http.ResponseWriter, status int, msg string) {
	st := "INVALID_ARGUMENT"
	switch {
	case status == http.StatusTooManyRequests:
		st = "RESOURCE_EXHAUSTED"
	case status == http.StatusServiceUnavailable:
		st = "UNAVAILABLE"
	case status >= 500:
		st = "INTERNAL"
	case status == http.StatusForbidden:
		st = "PERMISSION_DENIED"
	case status == http.StatusNotFound:
		st = "NOT_FOUND"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}

// geminiBody renders a reply as generateContent does: one response, or a stream of them
// (text in pieces, the function calls whole, then the finish reason with the usage).
func geminiBody(reply Reply, rec Request) body {
	u := usage(reply, len(rec.Messages))
	name := rec.Model
	if name == "" {
		name = "fake"
	}
	usage := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(u.PromptTokens),
		CandidatesTokenCount: int32(u.CompletionTokens), TotalTokenCount: int32(u.PromptTokens + u.CompletionTokens)}
	var calls []*genai.Part
	for _, c := range reply.ToolCalls {
		var args map[string]any
		_ = json.Unmarshal(argsObject(c), &args)
		calls = append(calls, &genai.Part{FunctionCall: &genai.FunctionCall{Name: c.Name, Args: args}})
	}
	response := func(parts []*genai.Part, finish genai.FinishReason, u *genai.GenerateContentResponseUsageMetadata) []byte {
		resp := map[string]any{
			"candidates":   []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, FinishReason: finish}},
			"modelVersion": name,
		}
		if u != nil {
			resp["usageMetadata"] = u
		}
		b, _ := json.Marshal(resp)
		return b
	}
	if !rec.Stream {
		parts := []*genai.Part{}
		if reply.Text != "" {
			parts = append(parts, &genai.Part{Text: reply.Text})
		}
		return body{contentType: "application/json", chunks: [][]byte{response(append(parts, calls...), genai.FinishReasonStop, usage)}}
	}
	b := body{contentType: "text/event-stream", stream: true}
	for _, piece := range split(reply.Text) {
		b.chunks = append(b.chunks, sse(response([]*genai.Part{{Text: piece}}, "", nil)))
	}
	if len(calls) > 0 {
		b.chunks = append(b.chunks, sse(response(calls, "", nil)))
	}
	b.chunks = append(b.chunks, sse(response([]*genai.Part{{Text: ""}}, genai.FinishReasonStop, usage)))
	return b
}
