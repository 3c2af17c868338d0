package scenario

import (
	"context"
	"time"

	"github.com/agentrunner/runner/runner/agent"
	"github.com/agentrunner/runner/runner/result"
)

// acted is what the agent stage leaves: the loop's outcome, or a loop abandoned because a
// tool call did not stop (stuck; the outcome then holds only the steps recorded), or why
// the agent never started (err: its model failed the pre-flight check).
type acted struct {
	out   agent.Outcome
	stuck bool
	err   error
	// truncated warns that a prompt reached the model's effective context ("" if not).
	truncated string
}

// readier is a model whose pre-flight check may still be running: session.Models starts
// the checks in the background, so that their round trip overlaps the scenario's setup.
type readier interface {
	Ready(ctx context.Context) error
}

// act is the agent stage: it waits for the model's pre-flight check, runs the loop under
// the scenario's deadline and stops the MCP servers, before any verify file arrives.
func (r *runState) act(p *prepared) acted {
	// The model's pre-flight check ran while the workspace was prepared; an interrupt or
	// timeout meanwhile is the agent loop's to report.
	if rd, ok := p.model.(readier); ok {
		if err := rd.Ready(p.ctx); err != nil && p.ctx.Err() == nil {
			return acted{err: err}
		}
	}
	if k := p.agent; !k.Builtin {
		a := r.runExternal(p, k)
		r.sweepContainer(p)
		if a.err == nil {
			a.truncated = contextWarning(p.ctx, p.model, r.t.ModelOptions.NumCtx, a.out.MaxPrompt)
		}
		return a
	}
	a := r.runAgent(p.ctx, agent.Config{
		System: p.system, Prompt: r.t.Prompt, Model: p.model, Options: r.t.ModelOptions,
		Tools: p.toolset, Policy: p.decider, Work: p.ws, Record: r, MaxSteps: p.maxSteps, Now: r.now,
	})
	p.stopMCP() // before the verify files arrive: servers never see them
	r.sweepContainer(p)
	if !a.stuck {
		a.truncated = contextWarning(p.ctx, p.model, r.t.ModelOptions.NumCtx, a.out.MaxPrompt)
	}
	return a
}

// sweepContainer ends every process left in the task's container once the agent stage is
// over: each command ends only its own leftovers, so that the task's MCP servers live
// through the commands beside them; nothing the agent started may run on into
// verification.
func (r *runState) sweepContainer(p *prepared) {
	if p.env == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
	defer cancel()
	_ = p.env.KillAll(ctx) // a container that cannot be reached is stopped or removed next
}

// runAgent runs the agent loop and gives up on it abandonAfter past the scenario's end
// (deadline or interrupt): a tool stuck where its context cannot reach (a blocking
// system call) must not keep the run from ending and writing its reports.
func (r *runState) runAgent(ctx context.Context, cfg agent.Config) acted {
	done := make(chan agent.Outcome, 1)
	go func() { done <- agent.Run(ctx, cfg) }()
	select {
	case out := <-done:
		return acted{out: out}
	case <-ctx.Done():
	}
	select {
	case out := <-done:
		return acted{out: out}
	case <-time.After(abandonAfter):
		return acted{out: agent.Outcome{Steps: int(r.steps.Load())}, stuck: true}
	}
}

// record puts the agent's outcome into the result: stop, steps, times, tokens and the
// counts of its calls.
func (a acted) record(r *runState) {
	out := a.out
	r.res.Stop, r.res.Steps, r.res.Summary = out.Stop, out.Steps, out.Summary
	r.res.ModelTime, r.res.ToolTime, r.res.MaxPromptTokens = result.Millis(out.ModelTime), result.Millis(out.ToolTime), out.MaxPrompt
	r.res.Usage = result.Usage{PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens,
		CachedPromptTokens: out.Usage.CachedPromptTokens, TokensPerSecond: out.Usage.TokensPerSecond(), EvalTime: out.Usage.EvalDuration,
		PromptEvalTime: out.Usage.PromptEvalDuration, ScheduleTime: out.Usage.LoadDuration, ServerTime: out.Usage.TotalDuration}
	r.res.Warnings = append(r.res.Warnings, out.Notes...)
	if a.truncated != "" {
		r.res.Warnings = append(r.res.Warnings, a.truncated)
	}
	r.notes = out.Notes
	for _, c := range out.Calls {
		if c.Executed {
			r.res.ToolCalls++
		}
		if c.Denied {
			if r.res.Denied == 0 {
				r.firstDenied = c.Name + " " + c.Args
			}
			r.res.Denied++
		}
		if c.Executed && !c.Success {
			r.res.ToolErrors++
		}
	}
}
