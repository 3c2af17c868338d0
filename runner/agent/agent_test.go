package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/retry"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/complete"
	"github.com/agentrunner/runner/tools/files"
)

// scripted is a model that plays fixed responses and records every request.
type scripted struct {
	mu        sync.Mutex
	responses []*model.Response
	errs      map[int]error // step index -> error
	block     bool          // block until the context ends
	requests  []model.Request
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	s.mu.Lock()
	i := len(s.requests)
	cp := *req
	cp.Messages = append([]model.Message(nil), req.Messages...)
	s.requests = append(s.requests, cp)
	s.mu.Unlock()
	if s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err := s.errs[i]; err != nil {
		return nil, err
	}
	if i >= len(s.responses) {
		return s.responses[len(s.responses)-1], nil // repeat the last one forever
	}
	return s.responses[i], nil
}

func call(name, args string) model.ToolCall {
	return model.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

func calls(cs ...model.ToolCall) *model.Response {
	return &model.Response{ToolCalls: cs, Usage: model.Usage{PromptTokens: 10, CompletionTokens: 5}}
}

type events struct {
	mu    sync.Mutex
	typs  []string
	steps []int
	data  []any
}

func (e *events) Write(step int, data transcript.Payload) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.typs = append(e.typs, data.Type())
	e.steps = append(e.steps, step)
	e.data = append(e.data, data)
	return nil
}

func setup(t testing.TB, m model.Model, approval task.Approval) (Config, *events, string) {
	t.Helper()
	dir := t.TempDir()
	ws, err := tools.OpenWorkspace(dir)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	reg := tools.NewRegistry()
	reg.MustRegister(files.Tools()...)
	reg.MustRegister(complete.New())
	pol, err := policy.New(approval, nil, policy.Options{Resolve: reg.Canonical})
	assert.NilError(t, err)
	ev := &events{}
	return Config{Prompt: "do it", Model: m, Tools: reg, Policy: pol, Work: ws, Record: ev, MaxSteps: 5}, ev, dir
}

func TestCompletes(t *testing.T) {
	m := &scripted{responses: []*model.Response{
		calls(call("write_file", `{"path":"out.txt","content":"hello"}`)),
		calls(call("task_complete", `{"summary":"wrote it"}`), call("write_file", `{"path":"late.txt","content":"x"}`)),
	}}
	cfg, ev, dir := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopCompleted)
	assert.Equal(t, out.Steps, 2)
	assert.Equal(t, out.Summary, "wrote it")
	assert.Equal(t, out.Usage.PromptTokens, 20)
	// Sub-millisecond calls still add up: tool time is measured, not rounded to ms.
	assert.Assert(t, out.ToolTime > 0 && out.Calls[0].Duration > 0)
	b, err := os.ReadFile(filepath.Join(dir, "out.txt"))
	assert.NilError(t, err)
	assert.Equal(t, string(b), "hello")
	// A call after task_complete in the same response is not executed.
	_, err = os.Stat(filepath.Join(dir, "late.txt"))
	assert.Assert(t, os.IsNotExist(err))
	assert.Equal(t, len(out.Calls), 2)
	assert.Equal(t, out.Calls[0].Args, `{"content":"hello","create_directories":true,"encoding":"utf-8","path":"out.txt"}`)

	// The second request carries the first call's result under its id.
	second := m.requests[1].Messages
	last := second[len(second)-1]
	assert.Equal(t, last.Role, model.RoleTool)
	assert.Equal(t, last.ToolCallID, "call_1_1")
	assert.Equal(t, last.ToolName, "write_file")
	assert.Equal(t, second[0].Role, model.RoleSystem)
	assert.Equal(t, second[0].Content, DefaultSystemPrompt)
	assert.Equal(t, second[1].Content, "do it")
	assert.DeepEqual(t, ev.typs, []string{"request", "response", "decision", "tool_call", "request", "response", "decision", "tool_call"})
}

func TestMaxSteps(t *testing.T) {
	m := &scripted{responses: []*model.Response{calls(call("list_dir", `{}`))}}
	cfg, _, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	cfg.MaxSteps = 3
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopMaxSteps)
	assert.Equal(t, out.Steps, 3)
	assert.Equal(t, len(m.requests), 3)
}

func TestStoppedAfterOneReminder(t *testing.T) {
	m := &scripted{responses: []*model.Response{{Content: "I think I am done."}}}
	cfg, ev, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopStopped)
	assert.Equal(t, out.Steps, 2)
	second := m.requests[1].Messages
	assert.Equal(t, second[len(second)-1].Content, reminder)
	assert.Check(t, is.Contains(ev.typs, "reminder"))
}

func TestReminderResetsAfterToolCall(t *testing.T) {
	m := &scripted{responses: []*model.Response{
		{Content: "thinking"},
		calls(call("list_dir", `{}`)),
		{Content: "thinking again"},
		calls(call("task_complete", `{"summary":"ok"}`)),
	}}
	cfg, _, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopCompleted)
	assert.Equal(t, out.Steps, 4)
}

func TestBadCallsBecomeResults(t *testing.T) {
	m := &scripted{responses: []*model.Response{
		calls(call("no_such_tool", `{}`), call("read_file", `{"path":`), call("read_file", `{"path": 5}`)),
		calls(call("task_complete", `{"summary":"recovered"}`)),
	}}
	cfg, _, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopCompleted)
	msgs := m.requests[1].Messages
	results := msgs[len(msgs)-3:]
	assert.Check(t, is.Contains(results[0].Content, "Unknown tool 'no_such_tool'"))
	assert.Check(t, is.Contains(results[1].Content, "not a valid JSON object"))
	assert.Check(t, is.Contains(results[2].Content, "'path'"))
	for _, c := range out.Calls[:3] {
		assert.Check(t, !c.Executed && !c.Success)
	}
}

func TestDeniedCall(t *testing.T) {
	m := &scripted{responses: []*model.Response{
		calls(call("delete_file", `{"path":"keep.txt"}`)),
		calls(call("task_complete", `{"summary":"could not delete"}`)),
	}}
	cfg, ev, dir := setup(t, m, task.Approval{Mode: task.ModeRules, Default: "allow", Rules: []task.Rule{
		{Tool: "delete_file", Action: "deny", Reason: "nothing is deleted"},
	}})
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("x"), 0o644))
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopCompleted)
	assert.Check(t, out.Calls[0].Denied && !out.Calls[0].Executed)
	_, err := os.Stat(filepath.Join(dir, "keep.txt"))
	assert.NilError(t, err)
	msgs := m.requests[1].Messages
	assert.Check(t, is.Contains(msgs[len(msgs)-1].Content, "nothing is deleted"))
	var decided bool
	for i, typ := range ev.typs {
		if typ == "decision" {
			d := ev.data[i].(transcript.Decision)
			decided = !d.Decision.Allowed
			break
		}
	}
	assert.Check(t, decided, "the transcript records the denial")
}

func TestTimeoutAndInterrupt(t *testing.T) {
	cfg, _, _ := setup(t, &scripted{block: true}, task.Approval{Mode: task.ModeAuto})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	out := Run(ctx, cfg)
	assert.Equal(t, out.Stop, result.StopTimeout)

	cfg, _, _ = setup(t, &scripted{block: true}, task.Approval{Mode: task.ModeAuto})
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	out = Run(ctx, cfg)
	assert.Equal(t, out.Stop, result.StopInterrupt)
}

func TestModelError(t *testing.T) {
	m := &scripted{responses: []*model.Response{calls(call("list_dir", `{}`))}, errs: map[int]error{1: errors.New("connection refused")}}
	cfg, ev, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopError)
	assert.Error(t, out.Err, "model scripted: connection refused")
	assert.Equal(t, out.Steps, 1, "the failed request is not a step")
	assert.Equal(t, ev.typs[len(ev.typs)-1], "model_error")
}

func TestCustomSystemPromptAndIDsKept(t *testing.T) {
	m := &scripted{responses: []*model.Response{calls(model.ToolCall{ID: "abc", Name: "task_complete", Arguments: json.RawMessage(`"{\"summary\":\"s\"}"`)})}}
	cfg, _, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	cfg.System = "be brief"
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopCompleted, "string-encoded arguments are accepted")
	assert.Equal(t, out.Calls[0].ID, "abc")
	assert.Equal(t, m.requests[0].Messages[0].Content, "be brief")
	assert.Check(t, strings.Contains(DefaultSystemPrompt, "task_complete"))
}

// flaky fails with fails[i] on its i-th request (nil: answers with the next response).
type flaky struct {
	scripted
	fails []error
	n     int
}

func (f *flaky) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	f.n++
	if f.n <= len(f.fails) && f.fails[f.n-1] != nil {
		return nil, f.fails[f.n-1]
	}
	return f.scripted.Step(ctx, req)
}

func overloaded() error {
	return &model.ProviderError{Provider: "fake", Host: "127.0.0.1:1", StatusCode: 503, Message: "overloaded", Temporary: true}
}

// noWait is a retry wrapper with fixed backoffs and no sleeping.
func noWait(m model.Model, attempts int) model.Model {
	return retry.Wrap(m, retry.Options{
		Attempts: attempts, BaseDelay: 100 * time.Millisecond,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
		Rand:  func() float64 { return 0 },
	})
}

func TestRetriesAreRecorded(t *testing.T) {
	m := &flaky{
		scripted: scripted{responses: []*model.Response{calls(call("list_dir", `{}`)), calls(call("task_complete", `{"summary":"s"}`))}},
		// Step 1 succeeds at once; step 2 on its third attempt.
		fails: []error{nil, overloaded(), overloaded()},
	}
	cfg, ev, _ := setup(t, noWait(m, 3), task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopCompleted, "err: %v", out.Err)
	assert.Equal(t, out.Steps, 2)

	var retries []transcript.Retry
	for i, typ := range ev.typs {
		if typ == "retry" {
			assert.Equal(t, ev.steps[i], 2)
			retries = append(retries, ev.data[i].(transcript.Retry))
		}
	}
	want := "fake at 127.0.0.1:1: HTTP 503 Service Unavailable: overloaded"
	assert.DeepEqual(t, retries, []transcript.Retry{
		{Attempt: 1, Error: want, Wait: result.Millis(50 * time.Millisecond)}, // equal jitter with Rand 0: half the base delay
		{Attempt: 2, Error: want, Wait: result.Millis(100 * time.Millisecond)},
	})
	assert.DeepEqual(t, ev.typs[4:8], []string{"request", "retry", "retry", "response"})
	assert.Check(t, !slices.Contains(ev.typs, "model_error"), "a step that succeeded in the end is no model error")
}

func TestModelErrorNamesTheModelOnce(t *testing.T) {
	tests := []struct {
		name string
		fail error
		want string
	}{
		{"gave up", overloaded(),
			"model scripted: gave up after 2 attempts: fake at 127.0.0.1:1: HTTP 503 Service Unavailable: overloaded"},
		{"not retried", &model.ProviderError{Provider: "fake", StatusCode: 400, Message: "bad schema"},
			"model scripted: fake: HTTP 400 Bad Request: bad schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &flaky{fails: []error{tc.fail, tc.fail}}
			cfg, ev, _ := setup(t, noWait(m, 2), task.Approval{Mode: task.ModeAuto})
			out := Run(context.Background(), cfg)
			assert.Equal(t, out.Stop, result.StopError)
			assert.Error(t, out.Err, tc.want)
			var re *retry.Error
			assert.Assert(t, errors.As(out.Err, &re), "the retry error stays in the chain")
			assert.Equal(t, ev.typs[len(ev.typs)-1], "model_error")
		})
	}
}

// TestRequestsRecordWhatWasSent: each request event describes the messages added since
// the previous one, so the transcript rebuilds the conversation the model saw without
// storing it again at every step.
func TestRequestsRecordWhatWasSent(t *testing.T) {
	m := &scripted{responses: []*model.Response{
		calls(call("list_dir", `{}`)),
		{Content: "thinking"},
		calls(call("task_complete", `{"summary":"ok"}`)),
	}}
	cfg, ev, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopCompleted)
	var reqs []transcript.Request
	var resp []transcript.Response
	for i, typ := range ev.typs {
		switch typ {
		case transcript.TypeRequest:
			reqs = append(reqs, ev.data[i].(transcript.Request))
		case transcript.TypeResponse:
			resp = append(resp, ev.data[i].(transcript.Response))
		}
	}
	assert.Equal(t, len(reqs), 3)
	assert.DeepEqual(t, reqs[0].Sent, []transcript.Sent{
		{Role: model.RoleSystem, Bytes: len(DefaultSystemPrompt)}, {Role: model.RoleUser, Bytes: len("do it")},
	})
	assert.Equal(t, len(reqs[1].Sent), 2)
	assert.Equal(t, reqs[1].Sent[0].Role, model.RoleAssistant)
	assert.Equal(t, reqs[1].Sent[1].Role, model.RoleTool)
	assert.Equal(t, reqs[1].Sent[1].ToolCallID, "call_1_1")
	assert.Equal(t, reqs[1].Sent[1].Content, "", "a tool's result is in its tool_call event, not again here")
	assert.DeepEqual(t, reqs[2].Sent[1], transcript.Sent{Role: model.RoleUser, Bytes: len(reminder), Content: reminder})
	// Summed over the requests, every message the model saw is described once.
	n := 0
	for _, r := range reqs {
		n += len(r.Sent)
	}
	assert.Equal(t, n, len(m.requests[2].Messages))
	// The response event carries the ids the conversation gave the calls.
	assert.Equal(t, resp[0].ToolCalls[0].ID, "call_1_1")
}

// responses returns the response events' payloads.
func (e *events) responses() []transcript.Response {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []transcript.Response
	for i, typ := range e.typs {
		if typ == transcript.TypeResponse {
			out = append(out, e.data[i].(transcript.Response))
		}
	}
	return out
}

// TestTokenLimitIsNamed: Ollama answers "" with done_reason "length" when num_predict
// ends the answer inside a call (issue 17, 2.1); the outcome names the limit.
func TestTokenLimitIsNamed(t *testing.T) {
	m := &scripted{responses: []*model.Response{{StopReason: model.StopLength, Usage: model.Usage{PromptTokens: 90, CompletionTokens: 1}}}}
	cfg, ev, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	cfg.Options.MaxTokens = 1
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopStopped)
	assert.Equal(t, len(out.Notes), 2)
	assert.Check(t, is.Contains(out.Notes[0], "step 1: the answer hit the token limit model_options.max_tokens (sent to Ollama as num_predict = 1)"))
	assert.Equal(t, ev.responses()[0].StopReason, model.StopLength)
}

// TestEmptyAnswerAfterTokens: Ollama drops a call to a tool the request does not offer
// and answers "" after generating tokens (2.2); the outcome says so and lists the tools.
func TestEmptyAnswerAfterTokens(t *testing.T) {
	m := &scripted{responses: []*model.Response{{StopReason: "stop", Usage: model.Usage{PromptTokens: 90, CompletionTokens: 5}}}}
	cfg, _, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, len(out.Notes), 2)
	assert.Check(t, is.Contains(out.Notes[0], "step 1: an empty answer after 5 generated tokens"))
	assert.Check(t, is.Contains(out.Notes[0], "a tool the request does not offer"))
	assert.Check(t, is.Contains(out.Notes[0], "write_file"))

	// A plain text answer, or one the model never generated, is no such case.
	m = &scripted{responses: []*model.Response{{Content: "done", Usage: model.Usage{CompletionTokens: 5}}}}
	cfg, _, _ = setup(t, m, task.Approval{Mode: task.ModeAuto})
	assert.Equal(t, len(Run(context.Background(), cfg).Notes), 0)
}

// TestOneCallIDEverywhere: a call without an id (read from text, or Ollama's) gets its
// id before the response event, so response, decision and tool_call show the same one.
func TestOneCallIDEverywhere(t *testing.T) {
	m := &scripted{responses: []*model.Response{calls(model.ToolCall{Name: "task_complete", Arguments: json.RawMessage(`{"summary":"s"}`), FromText: true})}}
	cfg, ev, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Stop, result.StopCompleted)
	var ids []string
	for i, typ := range ev.typs {
		switch d := ev.data[i].(type) {
		case transcript.Response:
			ids = append(ids, d.ToolCalls[0].ID)
		case transcript.Decision:
			ids = append(ids, d.ID)
		case transcript.ToolCall:
			ids = append(ids, d.ID)
		default:
			_ = typ
		}
	}
	assert.DeepEqual(t, ids, []string{"call_1_1", "call_1_1", "call_1_1"})
}

// TestLoadDurationIsNoReload: the server's load_duration is summed as it says it, and
// counts no reload: on a big model every request spends tens of milliseconds there
// (issue 26: 30 "reloads" in 15 cells where the server loaded 3 times). Loads are
// counted by runner bench from /api/ps.
func TestLoadDurationIsNoReload(t *testing.T) {
	first := calls(call("list_dir", `{}`))
	first.Usage.LoadDuration = result.Millis(1500 * time.Millisecond)
	done := calls(call("task_complete", `{"summary":"ok"}`))
	done.Usage.LoadDuration = result.Millis(200 * time.Microsecond)
	m := &scripted{responses: []*model.Response{first, done}}
	cfg, _, _ := setup(t, m, task.Approval{Mode: task.ModeAuto})
	out := Run(context.Background(), cfg)
	assert.Equal(t, out.Usage.LoadDuration.Duration(), 1500*time.Millisecond+200*time.Microsecond)
}
