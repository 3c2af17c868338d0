package policy

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/complete"
)

// fakeTool stands in for the real catalog: a name, a risk, and a RequiresApproval rule.
type fakeTool struct {
	name string
	risk tools.Risk
	// dynamic decides RequiresApproval; nil means never.
	dynamic func(args tools.Args, ws *tools.Workspace) bool
}

func (f fakeTool) Spec() tools.Spec {
	s := tools.String("")
	return tools.Spec{Name: f.name, Description: "test tool", Risk: f.risk,
		Parameters: tools.Object(map[string]*tools.Schema{
			"path": s, "content": s, "command": s, "cwd": s, "language": s, "code": s, "from": s, "to": s,
		})}
}
func (fakeTool) Validate(tools.Args, *tools.Workspace) *tools.Error { return nil }
func (fakeTool) Execute(context.Context, tools.Args, *tools.Workspace) tools.Result {
	return tools.OK("done")
}
func (f fakeTool) RequiresApproval(args tools.Args, ws *tools.Workspace) bool {
	return f.dynamic != nil && f.dynamic(args, ws)
}

// exists is write_file's rule: writing over an existing file needs approval.
func exists(args tools.Args, ws *tools.Workspace) bool {
	_, err := ws.Root().Stat(args.String("path"))
	return !errors.Is(err, fs.ErrNotExist)
}

func always(tools.Args, *tools.Workspace) bool { return true }

func testRegistry(t *testing.T) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	reg.MustRegister(
		fakeTool{name: "read_file", risk: tools.RiskReadOnly},
		fakeTool{name: "list_dir", risk: tools.RiskReadOnly},
		fakeTool{name: "write_file", risk: tools.RiskSafeWrite, dynamic: exists},
		fakeTool{name: "create_file", risk: tools.RiskSafeWrite},
		fakeTool{name: "delete_file", risk: tools.RiskDangerous, dynamic: always},
		fakeTool{name: "run_in_terminal", risk: tools.RiskDangerous},
		fakeTool{name: "run_code", risk: tools.RiskDangerous},
		complete.New(),
	)
	for _, a := range []tools.Alias{
		{Name: "run_command", Target: "run_in_terminal"},
		{Name: "shell", Target: "run_in_terminal"},
		{Name: "list_files", Target: "list_dir"},
	} {
		assert.NilError(t, reg.AddAlias(a))
	}
	return reg
}

// testWorkspace holds one existing file, existing.txt.
func testWorkspace(t *testing.T) *tools.Workspace {
	t.Helper()
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	assert.NilError(t, ws.Root().WriteFile("existing.txt", []byte("x"), 0o644))
	return ws
}

func prepare(t *testing.T, reg *tools.Registry, name, args string) *tools.Call {
	t.Helper()
	call, err := reg.Prepare(name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("prepare %s %s: %v", name, args, err)
	}
	return call
}

func newPolicy(t *testing.T, a task.Approval, opts Options) *Policy {
	t.Helper()
	if opts.Now.IsZero() {
		opts.Now = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	}
	if opts.Home == "" {
		opts.Home = "/home/agent"
	}
	p, err := New(a, nil, opts)
	assert.NilError(t, err)
	return p
}

func date(s string) *time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return &d
}

// fakeAsker answers from a script and records the questions.
type fakeAsker struct {
	mu        sync.Mutex
	answers   []Answer
	err       error
	questions []Question
}

func (f *fakeAsker) Ask(_ context.Context, q Question) (Answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.questions = append(f.questions, q)
	if f.err != nil {
		return AnswerNo, f.err
	}
	if len(f.answers) == 0 {
		return AnswerNo, errors.New("fakeAsker: no answer left")
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

func (f *fakeAsker) asked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.questions)
}
