// Package agent runs the non-interactive agent loop: model -> tool calls -> results ->
// model, until the model calls task_complete, the step limit is reached, the scenario
// times out, or the model stops calling tools. Every event goes to the transcript as it
// happens.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/retry"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/complete"
)

// DefaultSystemPrompt is used when a task gives no system prompt.
const DefaultSystemPrompt = `You are an autonomous agent working in a project workspace. Nobody will answer questions: ` +
	`decide for yourself and act through the tools you are given. All paths are relative to the workspace root. ` +
	`Work step by step, check your work (run the tests or commands that prove it), and when the task is done ` +
	`call the task_complete tool with a short summary of what you did. Do not stop without calling task_complete.`

// reminder is sent once when the model answers without calling a tool.
const reminder = `You did not call a tool. Continue working on the task using the tools, ` +
	`or call task_complete with a summary if the task is done.`

// Decider decides whether a prepared call may run (the approval policy).
type Decider interface {
	Decide(ctx context.Context, call *tools.Call, ws *tools.Workspace) policy.Decision
}

// Recorder receives the loop's events; the transcript writer implements it.
type Recorder interface {
	Write(step int, data transcript.Payload) error
}

// Config is everything one run of the loop needs.
type Config struct {
	System   string
	Prompt   string
	Model    model.Model
	Options  model.Options
	Tools    *tools.Registry
	Policy   Decider
	Work     *tools.Workspace
	Record   Recorder
	MaxSteps int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Outcome is how the loop ended.
type Outcome struct {
	Stop      result.StopReason
	Steps     int
	Summary   string
	Calls     []result.Call
	Usage     model.Usage
	ModelTime time.Duration
	ToolTime  time.Duration
	// MaxPrompt is the largest prompt of one request, in tokens: compared with the
	// model's context length, it shows a conversation truncated by the server.
	MaxPrompt int
	// Notes explain answers without a tool call that the server, not the model, most
	// likely emptied: cut off by the token limit, or empty after generated tokens.
	Notes []string
	// Err is the infrastructure failure behind StopError, or the recorder's failure.
	Err error
	// Fault is what the agent did that fails the scenario whatever the assertions say:
	// an external agent's request runner's endpoint could not read ("" for none).
	Fault string
}

// Run drives the conversation until a stop condition. The context's deadline is the
// scenario timeout; its cancellation (Ctrl-C) ends the run as interrupted.
func Run(ctx context.Context, cfg Config) Outcome {
	l := newLoop(cfg)
	for l.out.Steps < cfg.MaxSteps {
		if !l.step(ctx) {
			return l.out
		}
	}
	l.out.Stop = result.StopMaxSteps
	return l.out
}

// loop is the state one run carries from step to step.
type loop struct {
	cfg      Config
	now      func() time.Time
	specs    []tools.Spec
	msgs     []model.Message
	idle     int // answers in a row without a tool call
	recorded int // messages an earlier request event already described
	out      Outcome
}

func newLoop(cfg Config) loop {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	system := cfg.System
	if system == "" {
		system = DefaultSystemPrompt
	}
	return loop{
		cfg: cfg, now: now, specs: cfg.Tools.Specs(),
		msgs: []model.Message{
			{Role: model.RoleSystem, Content: system},
			{Role: model.RoleUser, Content: cfg.Prompt},
		},
	}
}

// step is one round: a request, the model's answer and the tool calls it asks for.
// false ends the run, with l.out saying why.
func (l *loop) step(ctx context.Context) bool {
	if stop, ok := contextStop(ctx); ok {
		return l.end(stop)
	}
	step := l.out.Steps + 1
	resp, took, ok := l.ask(ctx, step)
	if !ok {
		return false
	}
	calls, ok := l.answer(step, resp, took)
	if !ok {
		return false
	}
	if len(calls) == 0 {
		return l.noCall(step, resp)
	}
	l.idle = 0
	return l.runCalls(ctx, step, calls)
}

// ask records the request and sends the conversation to the model.
func (l *loop) ask(ctx context.Context, step int) (*model.Response, time.Duration, bool) {
	if err := l.cfg.Record.Write(step, transcript.Request{Messages: len(l.msgs), Last: l.msgs[len(l.msgs)-1].Role, Sent: sent(l.msgs, l.recorded)}); err != nil {
		return nil, 0, l.fail(err)
	}
	l.recorded = len(l.msgs)
	start := l.now()
	resp, err := l.cfg.Model.Step(withRetryEvents(ctx, l.cfg.Record, step), &model.Request{Messages: l.msgs, Tools: l.specs, Options: l.cfg.Options})
	took := l.now().Sub(start)
	l.out.ModelTime += took
	if err != nil {
		return nil, took, l.modelFailed(ctx, step, err, took)
	}
	return resp, took, true
}

// modelFailed records a failed request and ends the run with the stop reason it stands
// for: the scenario's timeout or an interrupt, a spent budget, or the model's error.
func (l *loop) modelFailed(ctx context.Context, step int, err error, took time.Duration) bool {
	_ = l.cfg.Record.Write(step, transcript.ModelError{Error: err.Error(), Duration: result.Millis(took)})
	if stop, ok := contextStop(ctx); ok {
		return l.end(stop)
	}
	if errors.Is(err, model.ErrBudgetSpent) {
		l.out.Err = err // not the model's failure: runner sent nothing
		return l.end(result.StopBudget)
	}
	return l.fail(modelError(l.cfg.Model.Name(), err))
}

// answer counts the step, records the model's answer and adds it to the conversation;
// it returns the tool calls, each with an id.
func (l *loop) answer(step int, resp *model.Response, took time.Duration) ([]model.ToolCall, bool) {
	l.out.Steps = step
	resp.Usage = resp.Usage.Clamped() // what the transcript, the totals and the checks see
	l.out.Usage.Add(resp.Usage)
	l.out.MaxPrompt = max(l.out.MaxPrompt, resp.Usage.PromptTokens)
	// Ids first: the response event, the decision and the tool call show the same one.
	calls := withIDs(resp.ToolCalls, step)
	if err := l.cfg.Record.Write(step, transcript.Response{
		Content: resp.Content, ToolCalls: calls, Usage: resp.Usage,
		Duration: result.Millis(took), TokPerSec: resp.Usage.TokensPerSecond(), StopReason: resp.StopReason,
	}); err != nil {
		return nil, l.fail(err)
	}
	l.msgs = append(l.msgs, model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: calls})
	return calls, true
}

// noCall handles an answer without a tool call: the first one in a row gets a reminder,
// the second ends the run as stopped.
func (l *loop) noCall(step int, resp *model.Response) bool {
	if note := noCallNote(step, resp, l.cfg.Options, l.specs); note != "" {
		l.out.Notes = append(l.out.Notes, note)
	}
	l.idle++
	if l.idle >= 2 {
		return l.end(result.StopStopped)
	}
	l.msgs = append(l.msgs, model.Message{Role: model.RoleUser, Content: reminder})
	if err := l.cfg.Record.Write(step, transcript.Reminder{Content: reminder}); err != nil {
		return l.fail(err)
	}
	return true
}

// runCalls runs the step's calls in order and answers each in the conversation.
func (l *loop) runCalls(ctx context.Context, step int, calls []model.ToolCall) bool {
	for _, tc := range calls {
		if stop, ok := contextStop(ctx); ok {
			// Every call must be answered for the conversation to stay valid, but the
			// run is over: the transcript already holds what finished.
			return l.end(stop)
		}
		rec, res, done, err := runCall(ctx, l.cfg, step, tc, l.now)
		l.out.Calls = append(l.out.Calls, rec)
		l.out.ToolTime += rec.Duration.Duration()
		if err != nil {
			return l.fail(err)
		}
		// The model's server is outside the process too: a secret a command printed (a
		// task's secrets: variable) is sent as [REDACTED]; the command itself had it.
		l.msgs = append(l.msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Content: scrub.String(res.Output)})
		if done {
			l.out.Summary, _ = res.Metadata["summary"].(string)
			// Calls after task_complete in the same response are not executed.
			return l.end(result.StopCompleted)
		}
	}
	return true
}

// end stops the run for reason; it returns false, for step's callers to return.
func (l *loop) end(reason result.StopReason) bool {
	l.out.Stop = reason
	return false
}

// fail stops the run on err (an infrastructure failure or the recorder's).
func (l *loop) fail(err error) bool {
	l.out = l.out.fail(err)
	return false
}

// sent describes the messages added since the previous request (msgs[from:]). Only text
// that no other event holds is copied: the system prompt and prompt are in the start
// event, tool results in tool_call events, the model's text in responses; what is left
// (the loop's reminders) is short. So the request events cost a few bytes per message,
// not the conversation again at every step.
func sent(msgs []model.Message, from int) []transcript.Sent {
	if from >= len(msgs) {
		return nil
	}
	out := make([]transcript.Sent, 0, len(msgs)-from)
	for i := from; i < len(msgs); i++ {
		m := msgs[i]
		s := transcript.Sent{Role: m.Role, ToolCallID: m.ToolCallID, Bytes: len(m.Content)}
		if m.Role == model.RoleUser && i > 1 {
			s.Content = m.Content
		}
		out = append(out, s)
	}
	return out
}

// runCall prepares, decides and executes one call, recording both the decision and the
// call. done reports a successful task_complete.
func runCall(ctx context.Context, cfg Config, step int, tc model.ToolCall, now func() time.Time) (result.Call, tools.Result, bool, error) {
	rec := result.Call{ID: tc.ID, Name: tc.Name}
	start := now()
	var res tools.Result
	prepared, perr := cfg.Tools.Prepare(tc.Name, tc.Arguments)
	if perr != nil {
		res = tools.Fail(perr)
		rec.Args = policy.CanonicalRaw(tc.Arguments)
	} else {
		rec.Tool = prepared.Tool
		rec.Args = policy.CanonicalArgs(prepared.Args)
		decision := cfg.Policy.Decide(ctx, prepared, cfg.Work)
		if err := cfg.Record.Write(step, transcript.Decision{ID: tc.ID, Tool: prepared.Tool, Decision: decision}); err != nil {
			return rec, res, false, err
		}
		if !decision.Allowed {
			rec.Denied = true
			res = policy.DeniedResult(decision, prepared)
		} else {
			rec.Executed = true
			res = cfg.Tools.Execute(ctx, prepared, cfg.Work)
		}
	}
	took := now().Sub(start)
	rec.Duration = result.Millis(took)
	if res.ExecutionTimeMS == 0 {
		res.ExecutionTimeMS = took.Milliseconds()
	}
	rec.Success = res.Success
	if err := cfg.Record.Write(step, transcript.ToolCall{
		ID: tc.ID, Name: tc.Name, Tool: rec.Tool, Args: transcript.RawArgs(tc.Arguments), Result: toolResultRecord(res), Duration: result.Millis(took),
	}); err != nil {
		return rec, res, false, err
	}
	done := rec.Executed && rec.Tool == complete.Name && res.Success
	return rec, res, done, nil
}

// toolResultRecord is a tool's result as the transcript records it (tools/ is below
// the records, so they cannot hold its type).
func toolResultRecord(r tools.Result) result.ToolResult {
	rec := result.ToolResult{Success: r.Success, Output: r.Output, FilesAffected: r.FilesAffected,
		ExecutionTimeMS: r.ExecutionTimeMS, Metadata: r.Metadata}
	if r.Error != nil {
		rec.Error = &result.ToolError{Code: string(r.Error.Code), Message: r.Error.Message, Suggestion: r.Error.Suggestion}
	}
	return rec
}

// withRetryEvents has the retry wrapper (retry.Wrap, which providers.Open puts around
// every model) record each retry of the step in the transcript: a step that succeeded on
// its third attempt took a minute for a reason the run should show.
func withRetryEvents(ctx context.Context, rec Recorder, step int) context.Context {
	return retry.WithNotify(ctx, func(ev retry.Event) {
		// A failed write fails the next event the loop writes, which ends the run.
		_ = rec.Write(step, transcript.Retry{Attempt: ev.Attempt, Error: ev.Err.Error(), Wait: result.Millis(ev.Delay)})
	})
}

// modelError names the model in a step's failure, unless the error already does (the
// retry wrapper's errors start "model NAME: ").
func modelError(name string, err error) error {
	if retry.Names(err, name) {
		return err
	}
	return fmt.Errorf("model %s: %w", name, err)
}

func (o Outcome) fail(err error) Outcome {
	o.Stop = result.StopError
	o.Err = err
	return o
}

// contextStop maps a finished context to a stop reason: its deadline is the scenario
// timeout, any other cancellation an interrupt.
func contextStop(ctx context.Context) (result.StopReason, bool) {
	switch err := ctx.Err(); {
	case err == nil:
		return "", false
	case errors.Is(err, context.DeadlineExceeded):
		return result.StopTimeout, true
	default:
		return result.StopInterrupt, true
	}
}

// noCallNote explains an answer without a tool call that the server most likely shaped:
// the token limit cut it off (Ollama then drops a half-written call and answers ""), or
// it came back empty although the model generated tokens (Ollama drops a call to a tool
// the request does not offer). "" when neither applies.
func noCallNote(step int, resp *model.Response, opts model.Options, specs []tools.Spec) string {
	if resp.StopReason == model.StopLength {
		limit := "the server's default token limit (no model_options.max_tokens; Ollama's num_predict)"
		if opts.MaxTokens > 0 {
			limit = fmt.Sprintf("the token limit model_options.max_tokens (sent to Ollama as num_predict = %d)", opts.MaxTokens)
		}
		return fmt.Sprintf("step %d: the answer hit %s after %d tokens and was cut off; a tool call cut in half is dropped; raise max_tokens",
			step, limit, resp.Usage.CompletionTokens)
	}
	if strings.TrimSpace(resp.Content) == "" && resp.Usage.CompletionTokens > 0 {
		names := make([]string, 0, len(specs))
		for _, s := range specs {
			names = append(names, s.Name)
		}
		return fmt.Sprintf("step %d: an empty answer after %d generated tokens: the server most likely dropped a call to a tool the request does not offer (Ollama does; offered: %s), or a call it could not parse",
			step, resp.Usage.CompletionTokens, strings.Join(names, ", "))
	}
	return ""
}

// withIDs gives every call an id: Ollama and Gemini send none, and tool results must be
// matched to their call.
func withIDs(calls []model.ToolCall, step int) []model.ToolCall {
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d_%d", step, i+1)
		}
	}
	return calls
}

// Call prepares, decides and executes one call outside a loop, as the loop does for a
// model's call (`runner tool`): one path for both, so a call a person tries is decided
// and run as an agent's would be. decider nil allows every call.
func Call(ctx context.Context, reg *tools.Registry, decider Decider, ws *tools.Workspace, name string, args json.RawMessage) tools.Result {
	if decider == nil {
		decider = allowAll{}
	}
	cfg := Config{Tools: reg, Policy: decider, Work: ws, Record: discard{}}
	_, res, _, _ := runCall(ctx, cfg, 0, model.ToolCall{Name: name, Arguments: args}, time.Now)
	return res
}

// allowAll is the decider of a call the person running it approves.
type allowAll struct{}

func (allowAll) Decide(context.Context, *tools.Call, *tools.Workspace) policy.Decision {
	return policy.Decision{Allowed: true}
}

// discard records nothing.
type discard struct{}

func (discard) Write(int, transcript.Payload) error { return nil }
