package fakellm

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/model"
)

// Request is a chat request the server received, in neutral form, for assertions.
type Request struct {
	// API is "ollama", "openai", "openai-responses", "anthropic" or "gemini".
	API    string `json:"api"`
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	// Messages is the conversation as sent, tool results with their ids and names.
	Messages []model.Message `json:"messages"`
	// Tools are the names of the tools offered.
	Tools []string `json:"tools"`
	// Options are the sampling options as sent (Ollama's options map; OpenAI's fields).
	Options map[string]any `json:"options,omitempty"`
	// Reply is the index of the reply played in its sequence, -1 when exhausted.
	Reply int `json:"reply"`
	// Body is the raw request body.
	Body json.RawMessage `json:"-"`
	// custom are the Responses API's custom (free-form) tools offered, by name: a call
	// of one is answered as a custom_tool_call.
	custom map[string]bool
}

// Server plays a Script over HTTP. Ollama's API is at URL (/api/...), OpenAI's at URL+"/v1".
type Server struct {
	script Script

	mu       sync.Mutex
	requests []Request
	convs    map[string]*conversation
	cycles   map[int]int    // conversations started per route, for Route.Cycle
	loaded   map[string]int // model -> the context it was loaded with
	loads    int
	global   int
	served   int
	onReq    func(Request)
	started  time.Time
	httptest *httptest.Server
}

type conversation struct {
	next       int
	assistants int
	replies    []Reply // the route's cycle entry this conversation plays
}

// New returns a server for s that is not listening yet: use Handler, or Start.
func New(s Script) *Server {
	return &Server{script: s, convs: map[string]*conversation{}, cycles: map[int]int{}, loaded: map[string]int{}, started: time.Now()}
}

// Start returns a server for s listening on 127.0.0.1. Close it when done.
func Start(s Script) *Server {
	srv := New(s)
	srv.httptest = httptest.NewServer(srv.Handler())
	return srv
}

// URL is the server's base URL: OLLAMA_HOST for the Ollama API.
func (s *Server) URL() string { return s.httptest.URL }

// OpenAIURL is the base URL for the OpenAI API: OPENAI_BASE_URL.
func (s *Server) OpenAIURL() string { return s.httptest.URL + "/v1" }

// Close shuts the server down.
func (s *Server) Close() {
	if s.httptest != nil {
		s.httptest.CloseClientConnections()
		s.httptest.Close()
	}
}

// OnRequest sets a function called with every recorded request (cmd/fakellm logs them).
func (s *Server) OnRequest(fn func(Request)) {
	s.mu.Lock()
	s.onReq = fn
	s.mu.Unlock()
}

// Requests returns the chat requests received so far (none in Bench mode).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Served returns how many chat requests were answered or faulted.
func (s *Server) Served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

// Handler serves both APIs.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", s.ollamaChat)
	mux.HandleFunc("POST /api/show", s.ollamaShow)
	mux.HandleFunc("GET /api/tags", s.ollamaTags)
	mux.HandleFunc("GET /api/ps", s.ollamaPS)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": "0.0.0-fakellm"})
	})
	mux.HandleFunc("POST /v1/chat/completions", s.openaiChat)
	mux.HandleFunc("GET /v1/models", s.openaiModels)
	mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	mux.HandleFunc("POST /v1/responses", s.openaiResponses)
	mux.HandleFunc("POST /v1beta/models/{action}", s.geminiGenerate)
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "Ollama is running") })
	return mux
}

// next picks the reply for a conversation. Conversations are told apart by their opening
// (system and first user message); one whose assistant turns went down has started over.
func (s *Server) next(req *Request) (Reply, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served++
	replies, repeat := s.script.Replies, s.script.Repeat
	if s.script.Bench {
		i := s.global
		s.global++
		return pick(replies, repeat, i)
	}
	key, assistants := "default", 0
	first := ""
	var opening strings.Builder
	var users []string // the user messages before the first answer: what routes match
	for _, m := range req.Messages {
		switch {
		case m.Role == model.RoleAssistant:
			assistants++
		case m.Role == model.RoleUser && first == "":
			first = m.Content
			opening.WriteString(m.Content)
			users = append(users, m.Content)
		case m.Role == model.RoleUser && assistants == 0:
			users = append(users, m.Content)
		case m.Role == model.RoleSystem && first == "":
			opening.WriteString(m.Content)
		}
	}
	route, ambiguous := s.route(req.Model, req.Tools, users)
	if ambiguous != "" {
		req.Reply = -1
		s.requests = append(s.requests, *req)
		return Reply{Fault: FaultStatus, Status: http.StatusBadRequest, Message: ambiguous}, -1
	}
	if route >= 0 {
		r := s.script.Routes[route]
		replies, repeat = r.Replies, r.Repeat
		key = "route" + strconv.Itoa(route)
	}
	sum := sha256.Sum256([]byte(opening.String()))
	key += string(sum[:])
	c := s.convs[key]
	if c == nil || assistants < c.assistants {
		c = &conversation{}
		if route >= 0 && len(s.script.Routes[route].Cycle) > 0 {
			cycle := s.script.Routes[route].Cycle
			c.replies = cycle[s.cycles[route]%len(cycle)]
			s.cycles[route]++
		}
		s.convs[key] = c
	}
	if c.replies != nil {
		replies = c.replies
	}
	c.assistants = assistants
	i := c.next
	c.next++
	reply, idx := pick(replies, repeat, i)
	req.Reply = idx
	s.requests = append(s.requests, *req)
	if s.onReq != nil {
		s.onReq(*req)
	}
	return reply, idx
}

// route finds the route of a conversation by its opening user messages (those before the
// first answer: one for runner's loop; Codex sends its environment first and the task
// after): a route whose Match is one of them (spaces trimmed) wins; otherwise the one
// route whose Match occurs in one. Two tasks run in parallel whose prompts share a word
// must never get each other's replies, so a conversation that several routes match, none
// exactly, is an error naming them rather than a guess. A route with an empty Match
// catches what no other route takes.
func (s *Server) route(modelName string, offered, users []string) (int, string) {
	var exact, contained []int
	catchAll := -1
	for i, r := range s.script.Routes {
		switch {
		case r.Model != "" && r.Model != modelName:
		case r.Offers != "" && !slices.Contains(offered, r.Offers):
		case r.Match == "":
			if catchAll < 0 {
				catchAll = i
			}
		case slices.ContainsFunc(users, func(u string) bool { return r.Match == strings.TrimSpace(u) }):
			exact = append(exact, i)
		case slices.ContainsFunc(users, func(u string) bool { return strings.Contains(u, r.Match) }):
			contained = append(contained, i)
		}
	}
	switch {
	case len(exact) > 0:
		return exact[0], ""
	case len(contained) == 1:
		return contained[0], ""
	case len(contained) > 1:
		matches := make([]string, len(contained))
		for j, i := range contained {
			matches[j] = strconv.Quote(s.script.Routes[i].Match)
		}
		return -1, fmt.Sprintf("fakellm: the conversation's first message matches routes %s; make one match exact or unique",
			strings.Join(matches, ", "))
	}
	return catchAll, ""
}

func pick(replies []Reply, repeat bool, i int) (Reply, int) {
	switch {
	case i < len(replies):
		return replies[i], i
	case repeat && len(replies) > 0:
		return replies[len(replies)-1], len(replies) - 1
	}
	return Text(ExhaustedText), -1
}

// wait holds a reply back for its Delay, or until the client gives up.
func wait(r *http.Request, d Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(d))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// usage fills a reply's usage defaults: prompt tokens grow with the conversation.
func usage(r Reply, messages int) Usage {
	u := Usage{}
	if r.Usage != nil {
		u = *r.Usage
	}
	if u.PromptTokens == 0 {
		u.PromptTokens = 20 * messages
	}
	if u.CompletionTokens == 0 {
		u.CompletionTokens = 8 + 16*len(r.ToolCalls)
	}
	if u.EvalDuration == 0 {
		u.EvalDuration = Duration(100 * time.Millisecond)
	}
	return u
}

// callID is a call's id, made up when the script has none: unique per step.
func callID(c Call, step, n int) string {
	if c.ID != "" {
		return c.ID
	}
	return "call_" + strconv.Itoa(step) + "_" + strconv.Itoa(n+1)
}

// argsString and argsObject are a call's arguments in each wire form.
func argsString(c Call) string {
	if c.RawArgs != nil {
		return *c.RawArgs
	}
	if len(c.Args) == 0 {
		return "{}"
	}
	return string(c.Args)
}

func argsObject(c Call) json.RawMessage {
	if c.RawArgs != nil {
		b, _ := json.Marshal(*c.RawArgs) // no object to send: a string, as a broken server would
		return b
	}
	if len(c.Args) == 0 {
		return json.RawMessage("{}")
	}
	return c.Args
}
