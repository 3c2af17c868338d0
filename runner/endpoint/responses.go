package endpoint

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
)

// The Responses API's wire shapes (POST /v1/responses), as agents send them. Codex with a
// model it knows offers more than function tools: a custom (free-form) apply_patch with
// a Lark grammar, a client-side tool_search, and for its newest models the tools as
// namespaces in an additional_tools input item, with a custom exec that runs JavaScript
// (code mode). Each is carried to the model (a free-form tool as tools.Spec.Freeform, a
// namespace's tools flattened under NAMESPACE__NAME) and each call is answered in the
// form the tool was offered in (custom_tool_call, tool_search_call, a function_call with
// its namespace), so Codex works with any model name.
type (
	responsesRequest struct {
		Model              string          `json:"model"`
		Instructions       string          `json:"instructions"`
		Input              json.RawMessage `json:"input"` // a string or a list of items
		Stream             bool            `json:"stream"`
		Temperature        *float64        `json:"temperature"`
		TopP               *float64        `json:"top_p"`
		MaxOutputTokens    int             `json:"max_output_tokens"`
		Tools              []responsesTool `json:"tools"`
		PreviousResponseID string          `json:"previous_response_id"`
	}
	// responsesTool is a tool offered: a function, a custom tool (its format a grammar or
	// text), a namespace of tools, a client-side tool_search, or a hosted tool.
	responsesTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Format      *struct {
			Type       string `json:"type"`
			Syntax     string `json:"syntax"`
			Definition string `json:"definition"`
		} `json:"format"`
		Execution string          `json:"execution"`
		Tools     []responsesTool `json:"tools"` // a namespace's
	}
	// responsesItem is an input item as the agent sends it.
	responsesItem struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"` // a string or a list of parts
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Namespace string          `json:"namespace"`
		Arguments json.RawMessage `json:"arguments"` // a string (function_call) or an object (tool_search_call)
		Input     string          `json:"input"`     // a custom tool call's text
		Output    json.RawMessage `json:"output"`    // a string or a list of parts
		Tools     []responsesTool `json:"tools"`     // additional_tools, tool_search_output
	}
	// outputItem is an item of the endpoint's answer.
	outputItem struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Status    string          `json:"status"`
		Role      string          `json:"role,omitempty"`
		Content   json.RawMessage `json:"content,omitempty"`
		CallID    string          `json:"call_id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Namespace string          `json:"namespace,omitempty"`
		Arguments any             `json:"arguments,omitempty"` // a string, or an object for tool_search_call
		Input     *string         `json:"input,omitempty"`
		Execution string          `json:"execution,omitempty"`
	}
)

// wireTool is how the agent named a tool it offered, for answering a call in kind.
type wireTool struct {
	name, namespace string
	kind            string // "function", "custom" or "tool_search"
}

// defaultNamespace is the namespace tools are in when none is named: a call of one of
// its tools is answered without a namespace, as Codex expects for its code mode's exec.
const defaultNamespace = "functions"

// neutralName is the name the model knows a tool by: its own, or NAMESPACE__NAME for a
// tool in a namespace other than the default (providers accept only [a-zA-Z0-9_-]).
func neutralName(namespace, name string) string {
	if namespace == "" || namespace == defaultNamespace {
		return name
	}
	return namespace + "__" + name
}

// toolSet collects the tools a Responses request offers, in order, each once.
type toolSet struct {
	in *inbound
}

// add offers t (in namespace, "" for none) to the model, or notes it as dropped.
func (ts toolSet) add(t responsesTool, namespace string) error {
	in := ts.in
	if t.Type == "namespace" {
		for _, sub := range t.Tools {
			if err := ts.add(sub, t.Name); err != nil {
				return err
			}
		}
		return nil
	}
	name := neutralName(namespace, t.Name)
	kind := t.Type
	switch {
	case t.Type == "function":
	case t.Type == "custom":
	case t.Type == "tool_search" && t.Execution == "client":
		// Searched by the agent itself (over its deferred tools): a function to the model.
		name = "tool_search"
	default: // a hosted tool (web_search, a server-side tool search): the provider's to run
		in.dropped = append(in.dropped, t.Type)
		return nil
	}
	if _, seen := in.wire[name]; seen {
		return nil
	}
	var spec tools.Spec
	if kind == "custom" {
		ff := &tools.Freeform{}
		if f := t.Format; f != nil && f.Type == "grammar" {
			ff.Syntax, ff.Definition = f.Syntax, f.Definition
		}
		spec = tools.Spec{Name: name, Description: t.Description, Parameters: tools.FreeformParameters(ff), Freeform: ff}
	} else {
		var err error
		if spec, err = toolSpec(name, t.Description, t.Parameters); err != nil {
			return err
		}
	}
	in.wire[name] = wireTool{name: t.Name, namespace: namespace, kind: kind}
	in.req.Tools = append(in.req.Tools, spec)
	return nil
}

// decodeResponses turns a Responses request into the neutral request: instructions and
// developer messages the system messages, the calls of one turn one assistant message
// (function, custom and tool-search calls alike), their outputs tool messages, and every
// tool offered (in tools, in additional_tools items, found by a tool search) a spec.
// Reasoning items are left out.
func (s *Server) decodeResponses(body []byte) (*inbound, error) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad responses request: %w", err)
	}
	if req.PreviousResponseID != "" {
		return nil, &unsupported{"previous_response_id is not supported by runner's endpoint (it stores no responses): send the whole input (store: false)"}
	}
	in := &inbound{model: req.Model, stream: req.Stream, wire: map[string]wireTool{}}
	in.req.Options = s.options(req.Temperature, req.TopP, req.MaxOutputTokens, nil)
	if req.Instructions != "" {
		in.req.Messages = append(in.req.Messages, model.Message{Role: model.RoleSystem, Content: req.Instructions})
	}
	ts := toolSet{in: in}
	for _, t := range req.Tools {
		if err := ts.add(t, ""); err != nil {
			return nil, err
		}
	}
	var items []responsesItem
	if json.Unmarshal(req.Input, &items) != nil {
		var text string
		if err := json.Unmarshal(req.Input, &text); err != nil {
			return nil, fmt.Errorf("bad responses request: input: neither text nor a list of items")
		}
		items = []responsesItem{{Role: "user", Content: req.Input}}
	}
	for _, it := range items {
		if err := s.responsesItem(in, ts, it); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// responsesItem adds one input item to the neutral request.
func (s *Server) responsesItem(in *inbound, ts toolSet, it responsesItem) error {
	msgs := &in.req.Messages
	call := func(c model.ToolCall) { // calls of one turn follow its text, as one assistant message
		n := len(*msgs)
		if n == 0 || (*msgs)[n-1].Role != model.RoleAssistant {
			*msgs = append(*msgs, model.Message{Role: model.RoleAssistant})
			n++
		}
		(*msgs)[n-1].ToolCalls = append((*msgs)[n-1].ToolCalls, c)
	}
	switch {
	case it.Type == "additional_tools":
		for _, t := range it.Tools {
			if err := ts.add(t, ""); err != nil {
				return err
			}
		}
	case it.Type == "function_call":
		args := it.Arguments
		if len(args) == 0 || args[0] != '"' { // an object, or nothing: as the string OpenAI sends
			args, _ = json.Marshal(argsString(args))
		}
		call(model.ToolCall{ID: it.CallID, Name: neutralName(it.Namespace, it.Name), Arguments: args})
	case it.Type == "custom_tool_call":
		args, _ := json.Marshal(map[string]string{tools.FreeformInput: it.Input})
		call(model.ToolCall{ID: it.CallID, Name: neutralName(it.Namespace, it.Name), Arguments: args})
	case it.Type == "tool_search_call":
		call(model.ToolCall{ID: it.CallID, Name: "tool_search", Arguments: argsObject(it.Arguments)})
	case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
		*msgs = append(*msgs, model.Message{Role: model.RoleTool, ToolCallID: it.CallID, Content: textOf(it.Output)})
	case it.Type == "tool_search_output":
		// The tools found are offered from now on; the model reads their names.
		found := ""
		for _, t := range it.Tools {
			if err := ts.add(t, ""); err != nil {
				return err
			}
			found = joinText(found, foundTool(t))
		}
		if found == "" {
			found = "no tool found"
		}
		*msgs = append(*msgs, model.Message{Role: model.RoleTool, ToolCallID: it.CallID, Content: found})
	case it.Type == "reasoning":
	case it.Role == "assistant":
		*msgs = append(*msgs, model.Message{Role: model.RoleAssistant, Content: textOf(it.Content)})
	case it.Role == "system" || it.Role == "developer":
		*msgs = append(*msgs, model.Message{Role: model.RoleSystem, Content: textOf(it.Content)})
	case it.Role == "user" || it.Type == "message":
		*msgs = append(*msgs, model.Message{Role: model.RoleUser, Content: textOf(it.Content)})
	}
	return nil
}

// foundTool describes a tool a tool search found, for the model: its name as the model
// calls it and its description (a namespace, each of its tools).
func foundTool(t responsesTool) string {
	if t.Type == "namespace" {
		out := ""
		for _, sub := range t.Tools {
			out = joinText(out, "- "+neutralName(t.Name, sub.Name)+": "+sub.Description)
		}
		return out
	}
	return "- " + t.Name + ": " + t.Description
}

// outputCalls are the model's calls as Responses output items, each in the form its tool
// was offered in.
func outputCalls(in *inbound, calls []model.ToolCall, st string) []outputItem {
	var out []outputItem
	for i, c := range calls {
		id := st + "_" + strconv.Itoa(i+1)
		w, offered := in.wire[c.Name]
		if !offered {
			w = wireTool{name: c.Name, kind: "function"} // a tool the agent did not offer: it says so
		}
		ns := w.namespace
		if ns == defaultNamespace {
			ns = ""
		}
		switch w.kind {
		case "custom":
			input := freeformText(c.Arguments)
			out = append(out, outputItem{Type: "custom_tool_call", ID: "ctc_runner_" + id, CallID: c.ID, Name: w.name, Namespace: ns, Input: &input, Status: "completed"})
		case "tool_search":
			out = append(out, outputItem{Type: "tool_search_call", ID: "tsc_runner_" + id, CallID: c.ID, Execution: "client",
				Arguments: argsObject(c.Arguments), Status: "completed"})
		default:
			out = append(out, outputItem{Type: "function_call", ID: "fc_runner_" + id, CallID: c.ID, Name: w.name, Namespace: ns,
				Arguments: argsString(c.Arguments), Status: "completed"})
		}
	}
	return out
}

// freeformText is the text of a free-form tool's call: its input argument (what the
// fallback schema asks for), or, from a model that wrote something else, the arguments
// as text.
func freeformText(args json.RawMessage) string {
	var a map[string]json.RawMessage
	if json.Unmarshal([]byte(argsString(args)), &a) == nil {
		var s string
		if json.Unmarshal(a[tools.FreeformInput], &s) == nil {
			return s
		}
	}
	return argsString(args)
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	in, resp, step, ok := s.answer(w, r, s.decodeResponses)
	if !ok {
		return
	}
	reply := s.newResponsesReply(in, resp, step)
	if !in.stream {
		writeJSON(w, http.StatusOK, reply.body(reply.status, reply.output))
		return
	}
	reply.stream(startSSE(w))
}

// outputText is a message's content part in the Responses API.
type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// responsesReply is one answer in the Responses API's terms.
type responsesReply struct {
	s          *Server
	id, model  string
	resp       *model.Response
	output     []outputItem
	status     string
	incomplete any // the reason an incomplete answer stopped; nil when completed
}

func (s *Server) newResponsesReply(in *inbound, resp *model.Response, step int) *responsesReply {
	st := strconv.Itoa(step)
	rr := &responsesReply{s: s, id: "resp_runner_" + st, model: s.modelName(in), resp: resp, status: "completed"}
	if resp.Content != "" {
		content, _ := json.Marshal([]outputText{{Type: "output_text", Text: resp.Content, Annotations: []any{}}})
		rr.output = append(rr.output, outputItem{Type: "message", ID: "msg_runner_" + st, Role: "assistant", Status: "completed", Content: content})
	}
	rr.output = append(rr.output, outputCalls(in, resp.ToolCalls, st)...)
	if resp.StopReason == model.StopLength && len(resp.ToolCalls) == 0 {
		rr.status, rr.incomplete = "incomplete", map[string]string{"reason": "max_output_tokens"}
	}
	return rr
}

// body is the response object with the given status and output (the stream's first
// events announce it in progress, with no output yet).
func (rr *responsesReply) body(status string, out []outputItem) map[string]any {
	if out == nil {
		out = []outputItem{}
	}
	u := rr.resp.Usage
	return map[string]any{
		"id": rr.id, "object": "response", "created_at": rr.s.now().Unix(), "status": status, "model": rr.model, "output": out,
		"incomplete_details": rr.incomplete, "error": nil,
		"usage": map[string]any{"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens,
			"total_tokens":          u.PromptTokens + u.CompletionTokens,
			"input_tokens_details":  map[string]int{"cached_tokens": u.CachedPromptTokens},
			"output_tokens_details": map[string]int{"reasoning_tokens": 0}},
	}
}

// responsesEvents numbers a stream's events, as the Responses API does.
type responsesEvents struct {
	ev  *sse
	seq int
}

func (e *responsesEvents) send(typ string, data map[string]any) {
	data["type"], data["sequence_number"] = typ, e.seq
	e.seq++
	e.ev.event(typ, data)
}

// stream sends the reply as the Responses API's events: the response created, each
// output item added, its content in one delta and done, then the response finished.
func (rr *responsesReply) stream(ev *sse) {
	e := &responsesEvents{ev: ev}
	e.send("response.created", map[string]any{"response": rr.body("in_progress", nil)})
	e.send("response.in_progress", map[string]any{"response": rr.body("in_progress", nil)})
	for i, it := range rr.output {
		e.send("response.output_item.added", map[string]any{"output_index": i, "item": inProgress(it)})
		rr.streamContent(e, i, it)
		e.send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	final := "response.completed"
	if rr.status == "incomplete" {
		final = "response.incomplete"
	}
	e.send(final, map[string]any{"response": rr.body(rr.status, rr.output)})
	ev.flush()
}

// inProgress is an output item as first announced: in progress, its content empty.
func inProgress(it outputItem) outputItem {
	it.Status = "in_progress"
	switch it.Type {
	case "message":
		it.Content = json.RawMessage("[]")
	case "function_call":
		it.Arguments = ""
	case "custom_tool_call":
		empty := ""
		it.Input = &empty
	}
	return it
}

// streamContent sends the content of output item i: a message's text, a function call's
// arguments or a custom tool call's input, each as one delta and its done event.
func (rr *responsesReply) streamContent(e *responsesEvents, i int, it outputItem) {
	text := rr.resp.Content
	switch it.Type {
	case "message":
		emptyPart := outputText{Type: "output_text", Annotations: []any{}}
		e.send("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "part": emptyPart})
		e.send("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "delta": text})
		e.send("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "text": text})
		e.send("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0,
			"part": outputText{Type: "output_text", Text: text, Annotations: []any{}}})
	case "function_call":
		e.send("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": it.Arguments})
		e.send("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i, "arguments": it.Arguments})
	case "custom_tool_call":
		e.send("response.custom_tool_call_input.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": *it.Input})
		e.send("response.custom_tool_call_input.done", map[string]any{"item_id": it.ID, "output_index": i, "input": *it.Input})
	}
}
