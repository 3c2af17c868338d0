package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/complete"
)

// A verification stuck where its context cannot reach is abandoned soon after the
// context ends, so the scenario still ends and writes its reports.
func TestGuardAbandonsStuckVerification(t *testing.T) {
	defer func(d time.Duration) { abandonAfter = d }(abandonAfter)
	abandonAfter = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	stuck := make(chan struct{})
	defer close(stuck)
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	v := guard(ctx, func() verification { <-stuck; return verification{} })
	assert.ErrorContains(t, v.err, "verification did not stop 200ms after context canceled; abandoned")
	assert.Assert(t, time.Since(start) < abandonAfter+2*time.Second)

	// One that finishes in its grace period is used.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	v = guard(ctx, func() verification { time.Sleep(20 * time.Millisecond); return verification{broken: "x"} })
	assert.Equal(t, v.broken, "x")
}

func TestFileChangesCapped(t *testing.T) {
	var c workspace.Changes
	for i := range result.MaxListedFiles + 5 {
		c.Created = append(c.Created, fmt.Sprintf("c%03d", i))
		c.Protected = append(c.Protected, fmt.Sprintf("c%03d", i))
	}
	c.Deleted = []string{"gone/"}
	fc := fileChanges(c)
	assert.Equal(t, fc.Total, result.MaxListedFiles+6)
	assert.Equal(t, len(fc.Created), result.MaxListedFiles)
	assert.Equal(t, len(fc.Protected), result.MaxListedFiles)
	assert.Equal(t, fc.Omitted, 5)
	assert.DeepEqual(t, fc.Deleted, []string{"gone/"})
	assert.Equal(t, protectedFault(c), fmt.Sprintf("agent changed a protected file: c000 (and %d more protected)", result.MaxListedFiles+4))
	assert.Equal(t, protectedFault(workspace.Changes{Protected: []string{"tests/"}}), "agent changed a protected file: tests")
	assert.Assert(t, !strings.Contains(protectedFault(workspace.Changes{}), "protected"))
}

func TestVerifyContextGivesGraceAfterTimeout(t *testing.T) {
	now := time.Now()
	ctx, cancel := verifyContext(context.Background(), now.Add(-time.Minute), now)
	defer cancel()
	d, ok := ctx.Deadline()
	assert.Assert(t, ok)
	assert.Equal(t, d, now.Add(verifyGrace))

	parent, interrupt := context.WithCancel(context.Background())
	ctx, cancel = verifyContext(parent, now.Add(time.Hour), now)
	defer cancel()
	d, _ = ctx.Deadline()
	assert.Equal(t, d, now.Add(time.Hour))
	interrupt()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("an interrupt did not cancel verification")
	}
}

// stuckTool blocks in Execute without looking at its context, as a tool stuck in a
// blocking system call would.
type stuckTool struct{ release chan struct{} }

func (s stuckTool) Spec() tools.Spec {
	return tools.Spec{Name: "stuck", Description: "blocks", Parameters: tools.Object(nil), Risk: tools.RiskReadOnly}
}
func (stuckTool) Validate(tools.Args, *tools.Workspace) *tools.Error { return nil }
func (s stuckTool) Execute(context.Context, tools.Args, *tools.Workspace) tools.Result {
	<-s.release
	return tools.OK("released")
}
func (stuckTool) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

type oneCall struct{}

func (oneCall) Name() string { return "one-call" }
func (oneCall) Step(context.Context, *model.Request) (*model.Response, error) {
	return &model.Response{ToolCalls: []model.ToolCall{{Name: "stuck", Arguments: json.RawMessage(`{}`)}}}, nil
}

// A tool call stuck past the scenario's end is abandoned: the scenario ends soon after an
// interrupt or its timeout, and writes result.json.
func TestRunAbandonsStuckToolCall(t *testing.T) {
	defer func(d time.Duration) { abandonAfter = d }(abandonAfter)
	abandonAfter = 200 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	reg := tools.NewRegistry()
	assert.NilError(t, reg.Register(stuckTool{release}))
	assert.NilError(t, reg.Register(complete.New()))
	for _, tc := range []struct {
		name      string
		interrupt bool
		stop      result.StopReason
		reason    string
	}{
		{"timeout", false, result.StopTimeout, "a tool call did not stop at the scenario's timeout and was abandoned"},
		{"interrupt", true, result.StopInterrupt, "interrupted; a tool call did not stop and was abandoned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk, err := task.Parse(filepath.Join(t.TempDir(), "t.yaml"), []byte("prompt: p\ntools: [stuck]\ntimeout: 300ms\n"),
				task.LoadOptions{KnownTool: reg.Canonical, ToolNames: reg.Names()})
			assert.NilError(t, err)
			if tc.interrupt {
				tk.Timeout = time.Hour
			}
			opts := Options{
				OutDir: t.TempDir(), Catalog: reg, WorkspaceParent: t.TempDir(),
				Model:   func(*task.Task, int) (model.Model, error) { return oneCall{}, nil },
				Sandbox: func(string) (tools.CommandWrapper, error) { return nil, nil },
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.interrupt {
				time.AfterFunc(300*time.Millisecond, cancel)
			}
			start := time.Now()
			res := Run(ctx, tk, 0, opts)
			assert.Assert(t, time.Since(start) < 5*time.Second, "took %s", time.Since(start))
			assert.Equal(t, res.Status, result.Errored)
			assert.Equal(t, res.Stop, tc.stop)
			assert.Equal(t, res.Reason, tc.reason)
			assert.Equal(t, res.Steps, 1)
			b, err := os.ReadFile(filepath.Join(opts.OutDir, tk.Name, "result.json"))
			assert.NilError(t, err)
			assert.Assert(t, strings.Contains(string(b), tc.reason))
		})
	}
}
