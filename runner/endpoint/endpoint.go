// Package endpoint is runner's model endpoint: the HTTP server an external agent (Claude
// Code, Codex CLI, a command) talks to instead of a provider. One Server per scenario.
// It speaks what the agent speaks (OpenAI chat completions and Responses, Anthropic
// Messages, each streamed or not, and the auxiliary routes the agents call) and forwards
// every model request to the run's model.Model through runner's own providers, so any
// --model (oracle, a cassette, a fake, Ollama) drives any agent.
//
// Every request is a step, as in runner's own loop: it is counted against max_steps (the
// request past it is refused with an error in the agent's protocol), recorded in the
// transcript (the messages new since the previous request, the response with its tool
// calls, usage and latency; a tool result the agent sends back becomes the tool_call
// event of the call it answers), and summed into an agent.Outcome the scenario reads as it
// reads the loop's.
//
// The agent holds a per-run token, never a provider key: a request without it is
// refused (constant-time compare). The real keys stay in this process, in the providers.
//
// Replay: the agent's requests hold its workspace's path, which changes from run to run.
// The endpoint shows the model the path as Canonical and maps it back in the answer, so
// a cassette recorded in one workspace replays in another, byte for byte the same
// conversation (see Server.canonical).
package endpoint

import (
	"golang.org/x/sync/semaphore"

	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/agent"
	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/retry"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
)

// Canonical is the workspace's path as the model sees it (see Server.canonical).
const Canonical = "/workspace"

// Config is one scenario's endpoint.
type Config struct {
	// Model answers every request.
	Model model.Model
	// Options are the task's model_options: the base under what a request sets itself.
	Options model.Options
	// MaxSteps is the most model requests answered; the next is refused.
	MaxSteps int
	// Record receives the transcript events (runner/scenario's recorder).
	Record agent.Recorder
	// Workdir is the workspace's path as the agent sees it ("" maps nothing).
	Workdir string
	// Token is the per-run token ("" makes one).
	Token string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server is one scenario's endpoint. It is safe for concurrent use: agents send
// requests in parallel (a side request for a title while the main one runs).
type Server struct {
	cfg   Config
	token []byte
	now   func() time.Time
	http  *http.Server
	// workdir and canon are the path mapping's two sides as JSON string content; empty
	// when the workdir cannot be mapped byte for byte.
	workdir, canon []byte

	mu      sync.Mutex
	out     agent.Outcome
	prev    []model.Message // the last request's conversation, for what is new
	tools   []string        // the last request's tool names
	pending map[string]pendingCall
	refused chan struct{} // closed at the first request past max_steps, or that could not be read
	refusal string
	closed  bool

	// bodies bounds the request bytes held at once, from reading through the answer
	// (inFlightBodies): an agent sending many bodies together waits for its own.
	bodies *semaphore.Weighted
}

// pendingCall is a tool call the model made whose result the agent has not sent yet.
type pendingCall struct {
	name string
	args json.RawMessage
	step int
	at   time.Time
}

// New returns the endpoint for one scenario; it serves once Serve is called.
func New(cfg Config) (*Server, error) {
	if cfg.Model == nil {
		return nil, errors.New("endpoint: no model")
	}
	if cfg.Token == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("endpoint: token: %w", err)
		}
		cfg.Token = "runner-" + hex.EncodeToString(b)
	}
	s := &Server{cfg: cfg, token: []byte(cfg.Token), now: cfg.Now, pending: map[string]pendingCall{}, refused: make(chan struct{}),
		bodies: semaphore.NewWeighted(inFlightBodies)}
	if s.now == nil {
		s.now = time.Now
	}
	if cfg.Workdir != "" {
		if b, _ := json.Marshal(cfg.Workdir); string(b) == `"`+cfg.Workdir+`"` && cfg.Workdir != Canonical {
			s.workdir, s.canon = []byte(cfg.Workdir), []byte(Canonical)
		}
	}
	s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second}
	return s, nil
}

// Token is the per-run token the agent must send (as its API key).
func (s *Server) Token() string { return s.cfg.Token }

// Serve answers requests on l until Close. Call it in a goroutine.
func (s *Server) Serve(l net.Listener) error {
	err := s.http.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving; requests in flight are cut off.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.http.Close()
}

// Refused is closed once a request past max_steps, or one the endpoint could not read,
// was refused: the agent cannot, or should not, go on.
func (s *Server) Refused() <-chan struct{} { return s.refused }

// stopAgent closes Refused once. Called with s.mu held.
func (s *Server) stopAgent() {
	select {
	case <-s.refused:
	default:
		close(s.refused)
	}
}

// fault records a request the endpoint could not read (a *badRequest): the first one is
// the outcome's Fault, which fails the scenario whatever the agent did after it, and
// each is a refused request in the transcript. The agent is stopped as at max_steps.
func (s *Server) fault(msg string) {
	s.mu.Lock()
	if s.out.Fault == "" {
		s.out.Fault = "the agent sent a request runner's endpoint could not read: " + msg
	}
	step := s.out.Steps
	s.stopAgent()
	s.mu.Unlock()
	_ = s.cfg.Record.Write(step, transcript.Request{Refused: msg})
}

// Outcome is what the agent's model calls came to: steps, usage, times, the calls its
// model made (executed once the agent sent their result back). Stop is left to the
// caller, except max_steps once a request was refused and error once the model failed.
func (s *Server) Outcome() agent.Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.out
	out.Calls = append([]result.Call(nil), s.out.Calls...)
	for id, pc := range s.pending { // made, never answered: the agent did not run them (as far as runner saw)
		out.Calls = append(out.Calls, result.Call{ID: id, Name: pc.name, Tool: pc.name, Args: policy.CanonicalRaw(pc.args)})
	}
	return out
}

// Handler serves every front and auxiliary route, each behind the token.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /v1/models/{id...}", s.modelInfo)
	// Health checks, as servers answer them (the root; Claude Code's /api/hello when its
	// non-essential traffic is not turned off): no model is called.
	ok := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	mux.HandleFunc("/{$}", ok)
	mux.HandleFunc("/api/hello", ok)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "not_found_error", fmt.Sprintf("runner's endpoint does not serve %s %s", r.Method, r.URL.Path))
	})
	return s.auth(mux)
}

// maxBody bounds a request body: a long conversation with images stays far below.
var maxBody = bounded.EndpointRequest.Bytes

// inFlightBodies bounds the bytes of the request bodies one endpoint holds at once (each
// about three times over: read, decoded, its path mapped). Every body is bounded on its
// own, so a hostile agent sends many together instead: 24 of 60 MiB held 3.5 GB,
// enough to have runner killed for memory with every scenario of the run. Ordinary
// requests weigh a few MB and never wait; one of the largest waits for the others.
const inFlightBodies = 64 << 20

// bodyWeight is what a request counts against inFlightBodies: its announced length, or
// the most a body may have when it announces none; nothing for a body refused unread.
func bodyWeight(r *http.Request) int64 {
	switch {
	case r.ContentLength > maxBody, r.ContentLength == 0:
		return 0
	case r.ContentLength < 0:
		return maxBody
	}
	return r.ContentLength
}

// auth refuses a request without the per-run token (Authorization: Bearer, x-api-key or
// api-key), comparing in constant time.
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" && r.URL.Path != "/api/hello" && !s.authorized(r) {
			writeError(w, r, http.StatusUnauthorized, "authentication_error", "runner's endpoint: missing or wrong API key (use the per-run token runner put in OPENAI_API_KEY and ANTHROPIC_API_KEY)")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if weight := bodyWeight(r); weight > 0 {
			if err := s.bodies.Acquire(r.Context(), weight); err != nil {
				return // the agent gave up waiting: no one reads an answer
			}
			defer s.bodies.Release(weight)
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) authorized(r *http.Request) bool {
	for _, v := range []string{r.Header.Get("X-Api-Key"), r.Header.Get("Api-Key"), bearer(r.Header.Get("Authorization"))} {
		if v != "" && subtle.ConstantTimeCompare([]byte(v), s.token) == 1 {
			return true
		}
	}
	return false
}

func bearer(h string) string {
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// inbound is one model request as a front decoded it.
type inbound struct {
	req model.Request
	// failed are the tool calls whose result the agent marked as an error.
	failed map[string]bool
	// model is the model name the agent asked for, echoed in the answer.
	model  string
	stream bool
	// includeUsage asks for a usage chunk at the end of a chat completions stream.
	includeUsage bool
	// wire is how the agent named each tool it offered, by the name the model knows it
	// by (the Responses front: namespaces, custom tools, client tool search), so a call
	// is answered in kind; nil for the other fronts.
	wire map[string]wireTool
	// dropped are the tools offered that no model behind the endpoint can be given
	// (hosted tools such as web_search, which a provider, not the agent, runs).
	dropped []string
}

// refusal is a request the endpoint answers with an error instead of the model's.
type refusal struct {
	status int
	kind   string // the error type, in the protocol's words
	msg    string
}

func (r *refusal) Error() string { return r.msg }

// exchange is one step, whatever the front: count it (refuse past max_steps), record what
// is new in the conversation and the tool results that came back, ask the model, record
// its answer, and give it back with the workspace's real path.
func (s *Server) exchange(ctx context.Context, in *inbound) (*model.Response, int, error) {
	now := s.now()
	s.mu.Lock()
	// The results the request carries are of calls the agent ran, whether or not the
	// request itself is answered: a refused one's are still the agent's work.
	results := s.answered(in, now)
	if s.out.Steps >= s.cfg.MaxSteps {
		first := s.refusal == ""
		if first {
			s.refusal = fmt.Sprintf("max_steps: runner's endpoint answered %d model requests, the task's limit; this one is refused", s.cfg.MaxSteps)
			s.out.Stop = result.StopMaxSteps
			s.stopAgent()
		}
		msg, step := s.refusal, s.out.Steps
		s.mu.Unlock()
		_ = s.recordResults(results) // best effort, as the refusal's own event below: the refusal is the answer
		_ = s.cfg.Record.Write(step, transcript.Request{Messages: len(in.req.Messages), Refused: msg})
		return nil, 0, &refusal{status: http.StatusBadRequest, kind: "invalid_request_error", msg: msg}
	}
	s.out.Steps++
	step := s.out.Steps
	in.req.External = true
	sent := s.newMessages(in.req.Messages)
	s.prev = in.req.Messages
	offered, dropped := s.newTools(in.req.Tools, in.dropped)
	s.mu.Unlock()

	if err := s.recordResults(results); err != nil {
		return nil, step, s.fail(err)
	}
	last := ""
	if n := len(in.req.Messages); n > 0 {
		last = in.req.Messages[n-1].Role
	}
	if err := s.cfg.Record.Write(step, transcript.Request{Messages: len(in.req.Messages), Last: last, Sent: sent, Tools: offered, Dropped: dropped}); err != nil {
		return nil, step, s.fail(err)
	}
	start := s.now()
	resp, err := s.cfg.Model.Step(retry.WithNotify(ctx, func(ev retry.Event) {
		_ = s.cfg.Record.Write(step, transcript.Retry{Attempt: ev.Attempt, Error: ev.Err.Error(), Wait: result.Millis(ev.Delay)})
	}), &in.req)
	took := s.now().Sub(start)
	s.mu.Lock()
	s.out.ModelTime += took
	s.mu.Unlock()
	if err != nil {
		_ = s.cfg.Record.Write(step, transcript.ModelError{Error: err.Error(), Duration: result.Millis(took)})
		if errors.Is(err, model.ErrBudgetSpent) {
			return nil, step, s.budgetSpent(err)
		}
		if ctx.Err() != nil {
			return nil, step, err // the agent hung up, or the scenario ended
		}
		return nil, step, s.fail(fmt.Errorf("model %s: %w", s.cfg.Model.Name(), err))
	}
	resp.Usage = resp.Usage.Clamped() // as the loop counts it: a negative count lowers no total
	calls := withIDs(resp.ToolCalls, step)
	if err := s.cfg.Record.Write(step, transcript.Response{
		Content: resp.Content, ToolCalls: calls, Usage: resp.Usage,
		Duration: result.Millis(took), TokPerSec: resp.Usage.TokensPerSecond(), StopReason: resp.StopReason,
	}); err != nil {
		return nil, step, s.fail(err)
	}
	s.mu.Lock()
	s.out.Usage.Add(resp.Usage)
	s.out.MaxPrompt = max(s.out.MaxPrompt, resp.Usage.PromptTokens)
	done := s.now()
	for _, c := range calls {
		s.pending[c.ID] = pendingCall{name: c.Name, args: c.Arguments, step: step, at: done}
	}
	s.mu.Unlock()
	out := *resp
	out.ToolCalls = calls
	return s.toAgent(&out), step, nil
}

// budgetSpent turns a call the run's budget refused (nothing was sent) into the agent's
// refusal: not a step, answered with HTTP 400 in the agent's protocol (as at max_steps:
// neither Claude Code nor Codex retries one), and the agent stopped. The scenario stops
// with stop reason budget, the budget's error as its reason.
func (s *Server) budgetSpent(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Steps--
	if s.out.Stop == "" {
		s.out.Stop, s.out.Err = result.StopBudget, err
	}
	s.stopAgent()
	return &refusal{status: http.StatusBadRequest, kind: "invalid_request_error", msg: err.Error()}
}

// recordResults writes the tool_call events of the results a request brought.
func (s *Server) recordResults(results []toolResult) error {
	for _, tc := range results {
		if err := s.cfg.Record.Write(tc.step, tc.event); err != nil {
			return err
		}
	}
	return nil
}

// fail keeps the first infrastructure failure (the model's, the transcript's): the
// scenario errors with it, as the loop's would.
func (s *Server) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.Err == nil {
		s.out.Err = err
		s.out.Stop = result.StopError
	}
	return err
}

// newMessages describes what the conversation added since the previous request: every
// message after the longest common prefix, its content kept (no other event holds an
// external agent's system prompt or its user turns) except tool results, which their
// tool_call events hold, and the model's own answers, which its responses hold.
func (s *Server) newMessages(msgs []model.Message) []transcript.Sent {
	i := 0
	for i < len(msgs) && i < len(s.prev) && sameMessage(msgs[i], s.prev[i]) {
		i++
	}
	out := make([]transcript.Sent, 0, len(msgs)-i)
	for _, m := range msgs[i:] {
		sm := transcript.Sent{Role: m.Role, ToolCallID: m.ToolCallID, Bytes: len(m.Content)}
		if m.Role == model.RoleSystem || m.Role == model.RoleUser {
			sm.Content = m.Content
		}
		out = append(out, sm)
	}
	return out
}

// newTools is the names of the tools offered and of those dropped, when they differ from
// the previous request's (nil when they do not): what the agent offered its model,
// without repeating the list (Claude Code's is 25 tools) at every step. Called with s.mu
// held.
func (s *Server) newTools(specs []tools.Spec, dropped []string) (offered, notGiven []string) {
	names := make([]string, len(specs), len(specs)+len(dropped)+1)
	for i, t := range specs {
		names[i] = t.Name
	}
	key := append(append(names, "\x00"), dropped...)
	if slices.Equal(key, s.tools) {
		return nil, nil
	}
	s.tools = key
	return names, dropped
}

func sameMessage(a, b model.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i].ID != b.ToolCalls[i].ID {
			return false
		}
	}
	return true
}

// toolResult is a tool_call event to write for a result the agent sent back.
type toolResult struct {
	step  int
	event transcript.ToolCall
}

// answered turns the tool results in the request that answer pending calls into calls the
// agent executed: their events (in the step of the response that made the call, the time
// since that response as their duration) and their records. Called with s.mu held.
func (s *Server) answered(in *inbound, now time.Time) []toolResult {
	var out []toolResult
	for _, m := range in.req.Messages {
		if m.Role != model.RoleTool {
			continue
		}
		pc, ok := s.pending[m.ToolCallID]
		if !ok {
			continue
		}
		delete(s.pending, m.ToolCallID)
		took := now.Sub(pc.at)
		ok = !in.failed[m.ToolCallID]
		res := toolsResult(m.Content, ok)
		out = append(out, toolResult{step: pc.step, event: transcript.ToolCall{
			ID: m.ToolCallID, Name: pc.name, Tool: pc.name, Args: transcript.RawArgs(pc.args), Result: res, Duration: result.Millis(took),
		}})
		s.out.Calls = append(s.out.Calls, result.Call{ID: m.ToolCallID, Name: pc.name, Tool: pc.name, Args: policy.CanonicalRaw(pc.args),
			Executed: true, Success: ok, Duration: result.Millis(took)})
		s.out.ToolTime += took
	}
	return out
}

// withIDs gives every call an id (Ollama and Gemini send none), as the loop does: the
// agent matches its results to them.
func withIDs(calls []model.ToolCall, step int) []model.ToolCall {
	out := make([]model.ToolCall, len(calls))
	copy(out, calls)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("call_%d_%d", step, i+1)
		}
	}
	return out
}
