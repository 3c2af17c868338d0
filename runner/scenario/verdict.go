package scenario

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
)

// verdict is the last stage's result: the scenario's status and the one reason a person
// reads first, with the task-file line it points at.
type verdict struct {
	status result.Status
	// stop, when set, replaces the agent's stop reason (an interrupt seen after the loop).
	stop   result.StopReason
	reason string
	line   int
}

// errored is the verdict of a failure that is not the agent's (infrastructure, setup, a
// judge that could not answer, an interrupt).
func errored(reason string) verdict { return verdict{status: result.Errored, reason: reason} }

// apply writes the verdict into res. An errored scenario whose agent completed (or never
// ran) stops with error.
func (v verdict) apply(res *result.Scenario) {
	if v.stop != "" {
		res.Stop = v.stop
	}
	res.Status, res.Reason = v.status, v.reason
	if v.status == result.Errored {
		if res.Stop == "" || res.Stop == result.StopCompleted {
			res.Stop = result.StopError
		}
		return
	}
	res.Line = v.line
}

// abandoned is the verdict on an agent loop given up on because a tool call did not stop.
func abandoned(parent context.Context) verdict {
	if parent.Err() != nil {
		return verdict{status: result.Errored, stop: result.StopInterrupt, reason: "interrupted; a tool call did not stop and was abandoned"}
	}
	return verdict{status: result.Errored, stop: result.StopTimeout, reason: "a tool call did not stop at the scenario's timeout and was abandoned"}
}

// conclude is the verdict stage: it records what verification found in the result and
// decides. An agent that errored or was interrupted, an interrupt during verification,
// or a verification that failed errors the scenario; then a protected file the agent
// changed or a workspace it broke fails it; then a judge that could not answer errors
// it; then the assertions and the limits decide.
func (r *runState) conclude(p *prepared, a acted, v verification) verdict {
	r.setChanges(v.changes)
	switch a.out.Stop {
	case result.StopError, result.StopInterrupt, result.StopBudget:
		return errored(fmt.Sprint(v.err))
	}
	r.res.Assertions = v.assertions
	r.res.Score, r.res.ScoreNote = v.score, v.scoreNote
	switch {
	case p.parent.Err() != nil:
		return verdict{status: result.Errored, stop: result.StopInterrupt, reason: "interrupted"}
	case v.err != nil:
		return errored(v.err.Error())
	}
	var protected string
	if v.changes != nil {
		protected = protectedFault(*v.changes)
	}
	// A judge that could not answer errors the scenario, unless the agent already failed it
	// by breaking the workspace or a protected file.
	r.totalJudgeUsage()
	if msg := r.judgeError(); msg != "" && protected == "" && v.broken == "" {
		return errored(msg)
	}
	return r.assertionVerdict(a.out.Fault, protected, v.broken)
}

// assertionVerdict is passed or failed. A limit (max_steps, timeout, stopped) fails the
// scenario unless the task asserts on completion itself, i.e. allows not completing.
// agentFaults are failures the agent caused outside the assertions (a broken workspace);
// they come first in the reason.
func (r *runState) assertionVerdict(agentFaults ...string) verdict {
	var v verdict
	var failed []string
	assertsCompletion := false
	for _, a := range r.res.Assertions {
		if a.Kind == task.KindCompleted {
			assertsCompletion = true
		}
		if !a.Passed {
			if len(failed) == 0 {
				v.line = a.Line
			}
			failed = append(failed, fmt.Sprintf("%s: %s", a.Kind, a.Message))
		}
	}
	if r.res.Stop != result.StopCompleted && !assertsCompletion {
		failed = append([]string{limitReason(r.res)}, failed...)
		v.line = r.limitLine()
	}
	for i := len(agentFaults) - 1; i >= 0; i-- {
		if agentFaults[i] != "" {
			failed = append([]string{agentFaults[i]}, failed...)
		}
	}
	if len(failed) == 0 {
		v.status = result.Passed
		return v
	}
	v.status = result.Failed
	v.reason = failed[0]
	if len(failed) > 1 {
		v.reason += fmt.Sprintf(" (+%d more)", len(failed)-1)
	}
	if len(r.notes) > 0 && r.res.Stop != result.StopCompleted {
		// Why the model stopped calling tools, when the server's answer shows it.
		v.reason += "; " + r.notes[len(r.notes)-1]
	}
	if r.firstDenied != "" {
		// A refused call usually explains what followed; the last assertion rarely does.
		v.reason += fmt.Sprintf("; %d call(s) denied, first: %s", r.res.Denied, oneLine(r.firstDenied, 200))
	}
	return v
}

// limitLine is the task-file line of the limit the agent hit (0 when the task left it
// at its default).
func (r *runState) limitLine() int {
	switch r.res.Stop {
	case result.StopMaxSteps:
		return r.t.KeyLines["max_steps"]
	case result.StopTimeout:
		return r.t.KeyLines["timeout"]
	}
	return 0
}

// oneLine keeps the first n runes of s on one line, for reasons.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func limitReason(s result.Scenario) string {
	switch s.Stop {
	case result.StopMaxSteps:
		return fmt.Sprintf("max_steps: reached %d steps without task_complete", s.Steps)
	case result.StopTimeout:
		return "timeout: the scenario timed out before task_complete"
	case result.StopStopped:
		return "stopped: the model answered twice without calling a tool"
	case result.StopGaveUp:
		return "gave_up: the agent ended without finishing"
	}
	return string(s.Stop)
}
