package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

func loadTasks(t *testing.T, n int) []*task.Task {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		name := string(rune('a' + i))
		body := "name: " + name + "\nprompt: Finish " + name + ".\ntools: [read_file]\nassert:\n  - completed: true\n"
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
	}
	tasks, err := session.LoadTasks([]string{dir}, catalog.Default(), "", &bytes.Buffer{})
	assert.NilError(t, err)
	return tasks
}

func benchOptions(t *testing.T, srv *fakellm.Server, tasks []*task.Task, models ...string) Options {
	open := providers.OpenOptions{Retries: 1, Getenv: func(k string) string {
		if k == "OLLAMA_HOST" {
			return srv.URL()
		}
		return ""
	}}
	dir := t.TempDir()
	return Options{
		Models: models, Tasks: tasks, Repeat: 2, Parallel: 1, OutDir: t.TempDir(),
		Scenario: func(ctx context.Context, name string) scenario.Options {
			models := session.NewModels(name, open)
			_ = models.Preflight(ctx, tasks)
			return scenario.Options{
				Catalog: catalog.Default(), WorkspaceParent: dir, NoSync: true,
				Model: models.ForTask, ModelName: models.Name, Judge: models.Judge,
				Sandbox: func(string) (tools.CommandWrapper, error) { return nil, nil },
			}
		},
		Open: open,
	}
}

func finish() fakellm.Reply {
	return fakellm.ToolCall("task_complete", map[string]any{"summary": "done"})
}

// A spent token budget leaves the remaining cells, and the models after it, not run,
// still counted in every denominator.
func TestRunStopsAtTheTokenBudget(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Repeat: true, Replies: []fakellm.Reply{finish()}})
	defer srv.Close()
	opts := benchOptions(t, srv, loadTasks(t, 2), "ollama:a", "ollama:b")
	opts.BudgetTokens = 1 // every cell uses more: the first one spends it
	var checkpoints []int
	opts.Checkpoint = func(r *Report) { checkpoints = append(checkpoints, len(r.Models)) }
	rep := Run(context.Background(), opts)
	assert.DeepEqual(t, checkpoints, []int{1}) // after each model but the last
	assert.Equal(t, len(rep.Models), 2)
	a, b := rep.Models[0], rep.Models[1]
	assert.Equal(t, [3]int{a.Summary.Planned, a.Summary.Passed, a.Summary.NotRun}, [3]int{4, 1, 3})
	assert.Equal(t, b.Status, ModelNotRun)
	assert.Equal(t, b.Summary.NotRun, 4)
	assert.Assert(t, rep.Budget.Spent)
	assert.DeepEqual(t, a.Scenarios[1].Runs, []string{RunNotRun, RunNotRun})
}

func TestRunStopsAtTheTimeBudget(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Repeat: true, Replies: []fakellm.Reply{finish()}})
	defer srv.Close()
	opts := benchOptions(t, srv, loadTasks(t, 1), "ollama:a")
	opts.BudgetTime = time.Hour
	clock := time.Now()
	opts.Now = func() time.Time { clock = clock.Add(25 * time.Minute); return clock }
	rep := Run(context.Background(), opts)
	s := rep.Models[0].Summary
	// Each look at the clock moves it 25 min: the first cell starts at 50 min, the second
	// would start at 75, past the hour.
	assert.Equal(t, [2]int{s.Passed, s.NotRun}, [2]int{1, 1}, "%+v", s)
	assert.Equal(t, s.Planned, 2)
}

// When a request's prompt reaches the context the loaded model runs with, the bench warns:
// Ollama would have truncated it silently.
func TestRunWarnsWhenThePromptFillsTheContext(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{ContextLength: 40, Repeat: true, Replies: []fakellm.Reply{finish()}})
	defer srv.Close()
	var warn bytes.Buffer
	opts := benchOptions(t, srv, loadTasks(t, 1), "ollama:a")
	opts.Warn = &warn
	rep := Run(context.Background(), opts)
	assert.Equal(t, rep.Models[0].Probe.LoadedContext, 40)
	assert.Equal(t, len(rep.Warnings), 2, "%v", rep.Warnings) // the fake's prompt: 20 tokens a message, 2 messages
	assert.Assert(t, is.Contains(rep.Warnings[0], "ollama:a / a #1: a prompt of 40 tokens reached the context length 40"))
	assert.Assert(t, is.Contains(warn.String(), "raise model_options.num_ctx"))

	big := fakellm.Start(fakellm.Script{ContextLength: 8192, Repeat: true, Replies: []fakellm.Reply{finish()}})
	defer big.Close()
	rep = Run(context.Background(), benchOptions(t, big, loadTasks(t, 1), "ollama:a"))
	assert.Equal(t, len(rep.Warnings), 0)
}

// A model without tools is skipped with its capabilities named; its cells are not run.
func TestRunSkipsAModelWithoutTools(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Models: map[string][]string{"chat": {"completion"}}, Replies: []fakellm.Reply{finish()}})
	defer srv.Close()
	rep := Run(context.Background(), benchOptions(t, srv, loadTasks(t, 1), "ollama:chat"))
	m := rep.Models[0]
	assert.Equal(t, m.Status, ModelSkipped)
	assert.Assert(t, is.Contains(m.Reason, "no tools capability (capabilities: completion)"))
	assert.Equal(t, m.Summary.NotRun, 2)
	assert.Equal(t, srv.Served(), 0, "no chat request, not even the warm-up")
	assert.Assert(t, strings.HasSuffix(m.OutDir, "ollama-chat"))
}

// Agents compared: every model runs the suite once per agent, each a line of its own
// labelled "AGENT @ MODEL" with its own cells' directory; the model is prepared once, and
// a model that cannot be used skips all its agents' lines. An agent whose program is not
// installed errors its own line's cells only.
func TestRunComparesAgentsOnEachModel(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Repeat: true, Replies: []fakellm.Reply{finish()},
		Models: map[string][]string{"a": {"completion", "tools"}}})
	defer srv.Close()
	opts := benchOptions(t, srv, loadTasks(t, 1), "ollama:a", "ollama:gone")
	opts.Agents = []string{"runner", "codex"}
	t.Setenv("PATH", "/nonexistent")
	t.Setenv("RUNNER_AGENTS_DIR", "")
	var checkpoints []int
	opts.Checkpoint = func(r *Report) { checkpoints = append(checkpoints, len(r.Models)) }
	rep := Run(context.Background(), opts)

	assert.Equal(t, len(rep.Models), 4)
	var labels []string
	for _, m := range rep.Models {
		labels = append(labels, m.Label())
	}
	assert.DeepEqual(t, labels, []string{"runner @ ollama:a", "codex @ ollama:a", "runner @ ollama:gone", "codex @ ollama:gone"})
	assert.DeepEqual(t, checkpoints, []int{1, 2, 3})
	runner, codex := rep.Models[0], rep.Models[1]
	assert.Equal(t, runner.OutDir, filepath.Join(opts.OutDir, "ollama-a", "runner"))
	assert.Equal(t, codex.OutDir, filepath.Join(opts.OutDir, "ollama-a", "codex"))
	assert.Equal(t, runner.Summary.Passed, 2, "%+v", runner.Summary)
	assert.Equal(t, codex.Summary.Errored, 2, "%+v", codex.Summary)
	assert.Check(t, is.DeepEqual(runner.Probe, codex.Probe), "one probe, shared")
	for _, m := range rep.Models[2:] {
		assert.Equal(t, m.Status, ModelSkipped)
	}

	var md bytes.Buffer
	assert.NilError(t, WriteMarkdown(&md, rep, nil))
	assert.Check(t, is.Contains(md.String(), `| runner \@ ollama:a |`)) // @ escaped: no mention on GitHub
	assert.Check(t, is.Contains(md.String(), `| codex \@ ollama:a |`))

	// A baseline is matched line by line: agent and model.
	cmp := Compare(rep, rep, Alpha)
	_, ok := cmp.Model("runner @ ollama:a")
	assert.Check(t, ok)
}
