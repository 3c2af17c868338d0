package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/assert"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/runner/workspace/door"
	"github.com/agentrunner/runner/tools/exec/container"
)

const (
	// verifyGrace is the least time verification gets after the agent: an agent that ran
	// into the scenario's timeout still gets its assertions checked, briefly.
	verifyGrace = 30 * time.Second
)

// abandonAfter is how long a verification that ignores its context is waited for before
// the scenario ends without it, so that an interrupt or the deadline always ends the
// scenario and every report is written. Nothing is known to block (every read of an
// agent-controlled path is non-blocking); this is the last line. A variable for tests.
var abandonAfter = 3 * time.Second

// verifyContext bounds verification by the scenario's deadline (at least verifyGrace
// from now) and cancels it on an interrupt of the run (parent).
func verifyContext(parent context.Context, deadline time.Time, now time.Time) (context.Context, context.CancelFunc) {
	if d := now.Add(verifyGrace); deadline.Before(d) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(parent), deadline)
	stop := context.AfterFunc(parent, cancel)
	return ctx, func() { stop(); cancel() }
}

// verification is what the verify stage found; the verdict stage applies it to the result
// on the scenario's own goroutine, so an abandoned verification cannot touch the result.
type verification struct {
	// changes is the comparison of the workspace before and after the agent.
	changes *workspace.Changes
	// diffs are the text diffs of the changes, for the pages only (nil: none made).
	diffs *result.Diffs
	// broken is set when the agent left the workspace so that verify files cannot go in.
	broken     string
	assertions []result.Assertion
	// score is the task's score: (nil when the task defines none), scoreNote why it is 0.
	score     *float64
	scoreNote string
	err       error
}

// errInterrupted is the verification of an agent loop ended by an interrupt: nothing is
// checked.
var errInterrupted = errors.New("interrupted")

// verify is the third stage: once the agent is done, find what it changed, add the hidden
// verify files and check the end state, under the scenario's deadline (with a little
// grace after a timeout) and the run's interrupt. After an agent error only the changes
// are found (still worth knowing what the agent did before the infrastructure failed);
// after an interrupt nothing is done. Either way err is the agent's.
func (r *runState) verify(p *prepared, a acted) verification {
	deadline, _ := p.ctx.Deadline()
	vctx, vcancel := verifyContext(p.parent, deadline, r.now())
	defer vcancel()
	switch a.out.Stop {
	case result.StopError, result.StopBudget:
		v := guard(vctx, func() verification {
			c, err := r.compare(vctx, p.env, p.dir, p.manifest)
			return verification{changes: c, diffs: diffs(vctx, p, c), err: err}
		})
		v.err = a.out.Err
		return v
	case result.StopInterrupt:
		return verification{err: errInterrupted}
	}
	out, t := a.out, r.t
	check := &assert.Run{
		Workspace: p.dir, Completed: out.Stop == result.StopCompleted, Summary: out.Summary, Steps: out.Steps,
		Calls: out.Calls, Env: t.Env, Wrap: p.sandbox, Network: t.Network, Limits: t.Limits,
		CacheDir: r.opts.CacheDir, CacheSkip: r.cacheSkip(), Judge: r.judgeEnv(t),
	}
	if p.env != nil && t.Verify.FreshContainer {
		return guard(vctx, func() verification { return r.verifyFresh(vctx, p, check) })
	}
	return guard(vctx, func() verification { return r.verifyNow(vctx, p, check) })
}

// guard runs fn under ctx and gives up waiting abandonAfter past ctx's end, reporting
// an error: fn's checks of ctx should have ended it, but whatever it is stuck in, the
// scenario ends and its reports are written.
func guard(ctx context.Context, fn func() verification) verification {
	done := make(chan verification, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-ctx.Done():
	}
	select {
	case v := <-done:
		return v
	case <-time.After(abandonAfter):
		return verification{err: fmt.Errorf("verification did not stop %s after %v; abandoned", abandonAfter, context.Cause(ctx))}
	}
}

// compare finds what the agent changed and records it in the transcript: in the
// workspace, and with an environment in its container outside the workspace (the agent
// is often root there: it could replace the image's test runner), where absolute
// verify.protect globs apply.
func (r *runState) compare(ctx context.Context, env *container.Container, dir string, m *workspace.Manifest) (*workspace.Changes, error) {
	c, err := m.Compare(ctx, dir)
	if err != nil {
		return nil, err
	}
	if env != nil {
		diff, err := env.Diff(ctx)
		if err != nil {
			return nil, err
		}
		var changed []string
		for _, d := range diff {
			if w := env.Workdir(); d.Path == w || strings.HasPrefix(d.Path, w+"/") {
				continue // the workspace, compared above
			}
			c.Outside = append(c.Outside, d.Kind+" "+d.Path)
			changed = append(changed, d.Path) // a deleted test runner counts too
		}
		if p, _, ok := workspace.ProtectedOutside(r.t.Verify.Protect, changed); ok {
			c.Protected = append(c.Protected, p)
		}
	}
	_ = r.record(0, transcript.FilesChanged(*fileChanges(c)))
	return &c, nil
}

// diffBudget bounds the time the diffs take out of verification: at most this, and at
// most a quarter of what is left, so however many files the agent wrote, the diffs
// cannot make verification miss its deadline (what is not diffed in time is counted).
const diffBudget = 2 * time.Second

// diffs are the text diffs of what the agent changed (nil without a snapshot or changes).
func diffs(ctx context.Context, p *prepared, c *workspace.Changes) *result.Diffs {
	if p.texts == nil || c == nil || c.Total() == 0 {
		return nil
	}
	budget := diffBudget
	if deadline, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(deadline)/4)
	}
	dctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	d := p.texts.Diffs(dctx, p.dir, *c)
	return &d
}

// writeDiffs writes the diffs beside result.json, scrubbed like every output. A failure
// costs the pages their diffs, nothing else.
func (r *runState) writeDiffs(d *result.Diffs) {
	if d == nil || r.out == "" {
		return
	}
	b, err := json.Marshal(d)
	if err != nil {
		return
	}
	_ = scrub.WriteJSON(filepath.Join(r.out, result.DiffsFile), append(b, '\n'), 0o644)
}

// verifyNow compares the workspace with the snapshot (before the verify files go in, so
// they are not counted), adds the verify files and checks the assertions.
func (r *runState) verifyNow(ctx context.Context, p *prepared, check *assert.Run) verification {
	var v verification
	env, dir := p.env, p.dir
	var err error
	if v.changes, err = r.compare(ctx, env, dir, p.manifest); err != nil {
		v.blame(err)
		return v
	}
	// Before the verify files go in; nothing of the verdict reads them.
	v.diffs = diffs(ctx, p, v.changes)
	r.checkNow(ctx, env, dir, check, &v)
	return v
}

// verifyFresh is verifyNow for verify.fresh_container. The agent's container is stopped
// first: no process the agent left there (or that a program it replaced would start)
// runs while the workspace is compared and checked. The checks then run in a new
// container of the image the agent's started from, by id, on a copy of the final
// workspace: what the agent changed outside the workspace (a test tool replaced by
// `exit 0`, /bin/sh) takes no part, and the agent's workspace stays as it left it.
func (r *runState) verifyFresh(ctx context.Context, p *prepared, check *assert.Run) (v verification) {
	if v.err = p.env.Stop(ctx); v.err != nil {
		return v
	}
	var err error
	if v.changes, err = r.compare(ctx, p.env, p.dir, p.manifest); err != nil {
		v.blame(err)
		return v
	}
	v.diffs = diffs(ctx, p, v.changes)
	dir, err := workspace.Create(r.opts.WorkspaceParent, r.t.Name+"-verify")
	if err != nil {
		v.err = fmt.Errorf("verification's workspace: %w", err)
		return v
	}
	defer func() { _ = workspace.Remove(dir) }()
	if err := workspace.Clone(ctx, p.dir, dir); err != nil {
		// What the agent left that the copy cannot take (a file it made unreadable, which
		// a rootless engine with a task user can do honestly: SECURITY.md; a tree too
		// deep or too large) fails the scenario; never a pass.
		v.blame(fmt.Errorf("verification's workspace: %w", err))
		return v
	}
	env, err := r.startVerifyEnvironment(ctx, p.imageID, dir)
	if err != nil {
		v.err = err
		return v
	}
	defer func() {
		// Removed here, not by the scenario: a verification abandoned at the deadline still
		// cleans up after itself. A container left behind is the infrastructure's failure.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		if err := env.Remove(rctx); err != nil && v.err == nil {
			v.err = err
		}
	}()
	check.Workspace, check.Wrap = dir, env
	r.checkNow(ctx, env, dir, check, &v)
	return v
}

// unseenCalls fails the assertions over tool calls that cannot apply to agent k: an
// external agent whose tool use does not reach runner's endpoint as tool calls shows
// runner no call to count, and a tool_not_called that passed for that reason would be a
// verdict on nothing.
func unseenCalls(k kinds.Kind, as []result.Assertion) []result.Assertion {
	if k.Builtin || k.ToolsVisible {
		return as
	}
	for i, a := range as {
		if a.Kind == task.KindToolCalled || a.Kind == task.KindToolNotCalled {
			as[i].Passed = false
			as[i].Message = fmt.Sprintf("cannot apply to agent %s: its tool use does not reach runner's endpoint as tool calls, so there are none to count", k.Name)
		}
	}
	return as
}

// checkNow adds the verify files (to dir, or env's verify_dir) and checks the assertions
// and the score into v.
func (r *runState) checkNow(ctx context.Context, env *container.Container, dir string, check *assert.Run, v *verification) {
	if err := r.addVerify(ctx, env, dir); err != nil {
		v.blame(err)
		return
	}
	if r.t.Score != nil {
		// A reward file the agent wrote must not count: the tests write it afresh.
		if err := assert.ClearScore(ctx, r.t.Score, check); err != nil {
			v.err = fmt.Errorf("score: %w", err)
			return
		}
	}
	v.assertions = unseenCalls(r.agent, assert.CheckAll(ctx, r.t.Assert, check))
	for _, a := range v.assertions {
		_ = r.record(0, transcript.Assertion(a))
	}
	if r.t.Score != nil {
		score, note, broken := assert.Score(ctx, r.t.Score, check, v.assertions)
		v.score, v.scoreNote = &score, note
		if msg, ok := door.Blame(broken); ok && v.broken == "" {
			v.broken = "score file " + r.t.Score.File + ": " + msg
		}
	}
}

// blame records an error of verification: what the agent left in its workspace (a
// *workspace.BrokenError where a verify file must go, a *door.Error where runner reads:
// a FIFO, a device, a symlink loop, a tree too deep or too large) fails the scenario,
// saying what it was; anything else (the engine, the disk, an interrupt) is runner's and
// errors it.
func (v *verification) blame(err error) {
	var broken *workspace.BrokenError
	if errors.As(err, &broken) {
		v.broken = door.Broke + broken.Error()
		return
	}
	if msg, ok := door.Blame(err); ok {
		v.broken = msg
		return
	}
	v.err = err
}
