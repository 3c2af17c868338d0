package scenario_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// testCatalog is the real catalog without web configuration; a Registry is safe for
// concurrent use, so every test shares it.
var testCatalog = catalog.New(catalog.Options{})

// scriptModel plays queued responses, one per step, repeating the last one when the
// queue runs out. It can wait before answering and fail every step.
type scriptModel struct {
	responses []*model.Response
	err       error
	delay     time.Duration
	name      string // "" is scripted:test

	mu    sync.Mutex
	steps int
}

func (m *scriptModel) Name() string {
	if m.name != "" {
		return m.name
	}
	return "scripted:test"
}

func (m *scriptModel) Step(ctx context.Context, _ *model.Request) (*model.Response, error) {
	m.mu.Lock()
	i := m.steps
	m.steps++
	m.mu.Unlock()
	if m.delay > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(m.delay):
		}
	}
	if m.err != nil {
		return nil, m.err
	}
	if i >= len(m.responses) {
		i = len(m.responses) - 1
	}
	return m.responses[i], nil
}

func (m *scriptModel) stepCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.steps
}

func toolCall(name, args string) model.ToolCall {
	return model.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

func reply(calls ...model.ToolCall) *model.Response {
	return &model.Response{ToolCalls: calls, Usage: model.Usage{PromptTokens: 7, CompletionTokens: 3}}
}

func script(calls ...model.ToolCall) *scriptModel {
	m := &scriptModel{}
	for _, c := range calls {
		m.responses = append(m.responses, reply(c))
	}
	return m
}

var complete = toolCall("task_complete", `{"summary":"done"}`)

// parseTask decodes a task file held in a string, as the runner would load it.
func parseTask(t *testing.T, yaml string) *task.Task {
	t.Helper()
	path := filepath.Join(t.TempDir(), "task.yaml")
	tk, err := task.Parse(path, []byte(yaml), task.LoadOptions{KnownTool: testCatalog.Canonical, ToolNames: testCatalog.Names()})
	assert.NilError(t, err)
	return tk
}

// runOptions runs commands unsandboxed, in workspaces under a test directory.
func runOptions(t *testing.T, m model.Model) scenario.Options {
	return scenario.Options{
		OutDir:          t.TempDir(),
		Catalog:         testCatalog,
		Model:           func(*task.Task, int) (model.Model, error) { return m, nil },
		Sandbox:         func(string) (tools.CommandWrapper, error) { return nil, nil },
		WorkspaceParent: t.TempDir(),
	}
}

func run(t *testing.T, tk *task.Task, opts scenario.Options) result.Scenario {
	t.Helper()
	return scenario.Run(context.Background(), tk, 0, opts)
}

func events(t *testing.T, res result.Scenario) []transcript.Event {
	t.Helper()
	evs, err := transcript.ReadFile(res.Transcript)
	assert.NilError(t, err)
	return evs
}

func eventsOf(evs []transcript.Event, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e.Type == typ {
			var m map[string]any
			_ = json.Unmarshal(e.Data, &m)
			out = append(out, m)
		}
	}
	return out
}
