package scenario_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/agent"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
	confinement "github.com/agentrunner/runner/tools/exec/sandbox"
)

func TestRunPasses(t *testing.T) {
	tk := parseTask(t, `name: write-hello
prompt: Write hello to out.txt.
tools: [write_file]
assert:
  - completed: true
  - file_contains: {path: out.txt, text: hello}
  - tool_called: {name: write_file, min: 1, max: 1}
`)
	m := script(toolCall("write_file", `{"path":"out.txt","content":"hello\n"}`), complete)
	res := run(t, tk, runOptions(t, m))

	assert.Equal(t, res.Status, result.Passed, res.Reason)
	assert.Equal(t, res.Stop, result.StopCompleted)
	assert.Equal(t, res.Reason, "")
	assert.Equal(t, res.Name, "write-hello")
	assert.Equal(t, res.Model, "scripted:test")
	assert.Equal(t, res.Steps, 2)
	assert.Equal(t, res.ToolCalls, 2)
	assert.Equal(t, res.Summary, "done")
	assert.Equal(t, res.Usage.PromptTokens, 14)
	assert.Equal(t, len(res.Assertions), 3)
	for _, a := range res.Assertions {
		assert.Assert(t, a.Passed, "%s: %s", a.Kind, a.Message)
	}
	assert.Assert(t, res.Duration > 0)
}

func TestRunLimits(t *testing.T) {
	loop := toolCall("read_file", `{"path":"a.txt"}`)
	tests := []struct {
		name       string
		asserts    string
		calls      []model.ToolCall
		wantStatus result.Status
		wantStop   result.StopReason
		wantReason string
	}{
		{
			name:       "max_steps without a completed assertion fails",
			asserts:    "  - file_exists: a.txt\n",
			calls:      []model.ToolCall{loop},
			wantStatus: result.Failed, wantStop: result.StopMaxSteps,
			wantReason: "max_steps: reached 3 steps without task_complete",
		},
		{
			name:       "max_steps and a failed assertion",
			asserts:    "  - file_exists: missing.txt\n",
			calls:      []model.ToolCall{loop},
			wantStatus: result.Failed, wantStop: result.StopMaxSteps,
			wantReason: "max_steps: reached 3 steps without task_complete (+1 more)",
		},
		{
			name:       "completed false allows max_steps",
			asserts:    "  - completed: false\n",
			calls:      []model.ToolCall{loop},
			wantStatus: result.Passed, wantStop: result.StopMaxSteps,
		},
		{
			name:       "completed false fails a completed run",
			asserts:    "  - completed: false\n",
			calls:      []model.ToolCall{complete},
			wantStatus: result.Failed, wantStop: result.StopCompleted,
			wantReason: "completed: ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := parseTask(t, "prompt: p\nmax_steps: 3\nworkspace:\n  files: {a.txt: a}\nassert:\n"+tc.asserts)
			m := script(tc.calls...)
			res := run(t, tk, runOptions(t, m))
			assert.Equal(t, res.Status, tc.wantStatus, res.Reason)
			assert.Equal(t, res.Stop, tc.wantStop)
			assert.Assert(t, is.Contains(res.Reason, tc.wantReason))
			if tc.wantReason == "" {
				assert.Equal(t, res.Reason, "")
			}
			if tc.wantStop == result.StopMaxSteps {
				assert.Equal(t, res.Steps, 3, "the task's own max_steps applies")
				assert.Equal(t, m.stepCount(), 3)
			}
		})
	}
}

func TestRunFailingAssertionNamesKind(t *testing.T) {
	for _, tc := range []struct{ kind, assertion string }{
		{"file_exists", "file_exists: missing.txt"},
		{"file_absent", "file_absent: a.txt"},
		{"file_contains", "file_contains: {path: a.txt, text: zzz}"},
		{"file_equals", "file_equals: {path: a.txt, content: b}"},
		{"summary_matches", "summary_matches: '^never$'"},
		{"tool_called", "tool_called: read_file"},
		{"steps_at_most", "steps_at_most: 1"},
		{"command", "command: {run: 'exit 4', exit_code: 0}"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			tk := parseTask(t, "prompt: p\nworkspace:\n  files: {a.txt: a}\nassert:\n  - completed: true\n  - "+tc.assertion+"\n")
			res := run(t, tk, runOptions(t, script(toolCall("list_dir", `{}`), complete)))
			assert.Equal(t, res.Status, result.Failed)
			assert.Equal(t, res.Stop, result.StopCompleted)
			assert.Assert(t, strings.HasPrefix(res.Reason, tc.kind+": "), res.Reason)
			assert.Assert(t, res.Assertions[0].Passed)
			assert.Assert(t, !res.Assertions[1].Passed)
			assert.Equal(t, res.Assertions[1].Kind, tc.kind)
			assert.Equal(t, res.Assertions[1].Line, 6, "assertions keep their line in the task file")
		})
	}
}

func TestRunSetupFailureIsAnError(t *testing.T) {
	tk := parseTask(t, `prompt: p
workspace:
  setup: ["echo preparing", "echo broken >&2; exit 3", "touch never-runs"]
assert:
  - completed: true
`)
	m := script(complete)
	opts := runOptions(t, m)
	opts.KeepWorkspaces = true
	res := run(t, tk, opts)

	assert.Equal(t, res.Status, result.Errored)
	assert.Equal(t, res.Stop, result.StopError)
	assert.Assert(t, strings.HasPrefix(res.Reason, "workspace: "), res.Reason)
	assert.Assert(t, is.Contains(res.Reason, `"echo broken >&2; exit 3" exited 3`))
	assert.Assert(t, is.Contains(res.Reason, "broken"))
	assert.Equal(t, m.stepCount(), 0, "the agent never starts")
	assert.Equal(t, len(res.Assertions), 0)
	_, err := os.Stat(filepath.Join(res.Workspace, "never-runs"))
	assert.Assert(t, errors.Is(err, os.ErrNotExist), "setup stops at the first failure")

	setups := eventsOf(events(t, res), transcript.TypeSetup)
	assert.Equal(t, len(setups), 2)
	assert.Equal(t, setups[0]["exit_code"], 0.0)
	assert.Equal(t, setups[1]["exit_code"], 3.0)
}

func TestRunSetupUsesTaskEnv(t *testing.T) {
	tk := parseTask(t, `prompt: p
env: {GREETING: bonjour}
workspace:
  setup: ["echo $GREETING > greeting.txt"]
assert:
  - file_contains: {path: greeting.txt, text: bonjour}
`)
	res := run(t, tk, runOptions(t, script(complete)))
	assert.Equal(t, res.Status, result.Passed, res.Reason)
}

func TestRunModelErrors(t *testing.T) {
	tk := parseTask(t, "prompt: p\nassert:\n  - completed: true\n")

	res := run(t, tk, runOptions(t, &scriptModel{err: errors.New("connection refused by the model server")}))
	assert.Equal(t, res.Status, result.Errored)
	assert.Equal(t, res.Stop, result.StopError)
	assert.Assert(t, is.Contains(res.Reason, "connection refused by the model server"))
	assert.Assert(t, is.Contains(res.Reason, "scripted:test"), "the reason names the model")
	assert.Equal(t, len(res.Assertions), 0, "no assertions after an infrastructure error")
	assert.Equal(t, len(eventsOf(events(t, res), transcript.TypeModelErr)), 1)

	opts := runOptions(t, nil)
	opts.Model = func(*task.Task, int) (model.Model, error) { return nil, errors.New("ollama: model qwen not found") }
	res = run(t, tk, opts)
	assert.Equal(t, res.Status, result.Errored)
	assert.Assert(t, is.Contains(res.Reason, "model qwen not found"))
	_, err := os.Stat(filepath.Join(opts.OutDir, tk.Name, "result.json"))
	assert.NilError(t, err, "result.json is written even when the model cannot be opened")
}

// pendingModel is a model whose pre-flight check is still running, as session.Models
// hands out: Ready blocks until the check ends.
type pendingModel struct {
	*scriptModel
	waited chan struct{} // closed when Ready is first called
	result chan error
	once   sync.Once
	onWait func() // called when Ready is first called
}

func (p *pendingModel) Ready(ctx context.Context) error {
	p.once.Do(func() {
		p.onWait()
		close(p.waited)
	})
	select {
	case err := <-p.result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A model's check still running does not hold up the workspace: the setup has run when
// the scenario waits for it. A check that then fails errors the scenario with its
// message, before any request reaches the model.
func TestRunWaitsForModelCheckAfterSetup(t *testing.T) {
	tk := parseTask(t, "prompt: p\nworkspace:\n  setup: [\"echo ready > setup.txt\"]\nassert:\n  - completed: true\n")
	for _, checkErr := range []error{nil, errors.New("ollama: model qwen not found; run: ollama pull qwen")} {
		p := &pendingModel{scriptModel: script(complete), waited: make(chan struct{}), result: make(chan error, 1)}
		opts := runOptions(t, p)
		opts.KeepWorkspaces = true
		var setupDone []string
		p.onWait = func() { setupDone, _ = filepath.Glob(filepath.Join(opts.WorkspaceParent, "*", "setup.txt")) }
		go func() {
			<-p.waited
			p.result <- checkErr
		}()
		res := run(t, tk, opts)
		assert.Equal(t, len(setupDone), 1, "the setup ran before the scenario waited for the check")
		evs := events(t, res)
		if checkErr == nil {
			assert.Equal(t, res.Status, result.Passed, res.Reason)
			assert.Equal(t, p.stepCount(), 1)
			continue
		}
		assert.Equal(t, res.Status, result.Errored)
		assert.Equal(t, res.Reason, checkErr.Error())
		assert.Equal(t, p.stepCount(), 0, "no request after a failed check")
		assert.Equal(t, len(eventsOf(evs, transcript.TypeRequest)), 0)
		assert.Equal(t, len(eventsOf(evs, transcript.TypeSetup)), 1)
	}
}

func TestRunInterrupted(t *testing.T) {
	tk := parseTask(t, "prompt: p\nassert:\n  - completed: true\n")
	m := &scriptModel{delay: time.Minute, responses: []*model.Response{reply(complete)}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for m.stepCount() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	res := scenario.Run(ctx, tk, 0, runOptions(t, m))
	assert.Equal(t, res.Status, result.Errored)
	assert.Equal(t, res.Stop, result.StopInterrupt)
	assert.Equal(t, res.Reason, "interrupted")
}

func TestRunWritesResultAndTranscript(t *testing.T) {
	tk := parseTask(t, `name: files
prompt: p
tools: [list_dir]
assert:
  - completed: true
`)
	opts := runOptions(t, nil)
	opts.Repeats = 2
	for i, dir := range []string{"files.r1", "files.r2"} {
		repeat := i + 1 // runs are numbered from 1, as in their directory names
		m := script(toolCall("list_dir", `{}`), complete)
		opts.Model = func(*task.Task, int) (model.Model, error) { return m, nil }
		res := scenario.Run(context.Background(), tk, repeat, opts)
		assert.Equal(t, res.Status, result.Passed, res.Reason)

		out := filepath.Join(opts.OutDir, dir)
		assert.Equal(t, res.Transcript, filepath.Join(out, "transcript.jsonl"))
		b, err := os.ReadFile(filepath.Join(out, "result.json"))
		assert.NilError(t, err)
		var saved result.Scenario
		assert.NilError(t, json.Unmarshal(b, &saved))
		assert.Equal(t, saved.Name, "files")
		assert.Equal(t, saved.Repeat, repeat)
		assert.Equal(t, saved.Status, result.Passed)
		assert.Equal(t, saved.Steps, 2)
		assert.Equal(t, saved.Model, "scripted:test")

		evs := events(t, res)
		var types []string
		for _, e := range evs {
			types = append(types, e.Type)
		}
		assert.DeepEqual(t, types, []string{
			"start",
			"request", "response", "decision", "tool_call",
			"request", "response", "decision", "tool_call",
			"files_changed", "assertion", "end",
		})
		start := eventsOf(evs, transcript.TypeStart)[0]
		assert.Equal(t, start["task"], "files")
		assert.Equal(t, start["model"], "scripted:test")
		assert.Equal(t, start["repeat"], float64(repeat))
		assert.DeepEqual(t, start["tools"], []any{"list_dir", "task_complete"})
		// What the model was sent, read back through the transcript's own types.
		payload, err := evs[0].Payload()
		assert.NilError(t, err)
		st := payload.(*transcript.Start)
		assert.Equal(t, st.FormatVersion, transcript.FormatVersion)
		assert.Equal(t, st.System, agent.DefaultSystemPrompt, "the default system prompt is recorded")
		assert.Equal(t, st.Prompt, "p")
		for _, e := range evs {
			_, err := e.Payload()
			assert.NilError(t, err, "%s event", e.Type)
		}
		last, _ := evs[len(evs)-1].Payload()
		assert.Equal(t, last.(*transcript.End).Status, result.Passed)
		end := eventsOf(evs, transcript.TypeEnd)[0]
		assert.Equal(t, end["status"], "passed")
		assert.Equal(t, end["stop_reason"], "completed")
		assert.Equal(t, evs[len(evs)-1].Step, 2)
	}
}

func TestRunVerifyFilesHiddenFromAgent(t *testing.T) {
	tk := parseTask(t, `prompt: p
tools: [read_file]
verify:
  files: {hidden_test.txt: "the hidden check\n"}
assert:
  - completed: true
  - file_contains: {path: hidden_test.txt, text: hidden check}
`)
	m := script(toolCall("read_file", `{"path":"hidden_test.txt"}`), complete)
	res := run(t, tk, runOptions(t, m))
	assert.Equal(t, res.Status, result.Passed, "verify files are there for the assertions: %s", res.Reason)

	calls := eventsOf(events(t, res), transcript.TypeToolCall)
	assert.Assert(t, len(calls) == 2)
	r := calls[0]["result"].(map[string]any)
	assert.Equal(t, r["success"], false, "the agent could read the verify file")
	assert.Equal(t, r["error"].(map[string]any)["code"], string(tools.CodeFileNotFound))
}

func TestRunKeepWorkspaces(t *testing.T) {
	tk := parseTask(t, "prompt: p\ntools: [write_file]\nassert:\n  - file_exists: out.txt\n")
	calls := []model.ToolCall{toolCall("write_file", `{"path":"out.txt","content":"kept"}`), complete}

	opts := runOptions(t, script(calls...))
	opts.KeepWorkspaces = true
	res := run(t, tk, opts)
	assert.Equal(t, res.Status, result.Passed, res.Reason)
	assert.Assert(t, res.Workspace != "", "the kept workspace is recorded")
	assert.Equal(t, filepath.Dir(res.Workspace), opts.WorkspaceParent)
	b, err := os.ReadFile(filepath.Join(res.Workspace, "out.txt"))
	assert.NilError(t, err)
	assert.Equal(t, string(b), "kept")

	opts = runOptions(t, script(calls...))
	res = run(t, tk, opts)
	assert.Equal(t, res.Status, result.Passed, res.Reason)
	assert.Equal(t, res.Workspace, "")
	left, err := os.ReadDir(opts.WorkspaceParent)
	assert.NilError(t, err)
	assert.Equal(t, len(left), 0, "the workspace is removed")
}

func TestRunOptionsOverrideTaskLimits(t *testing.T) {
	loop := toolCall("list_dir", `{}`)
	t.Run("max_steps", func(t *testing.T) {
		tk := parseTask(t, "prompt: p\nmax_steps: 30\nassert:\n  - completed: false\n")
		m := script(loop)
		opts := runOptions(t, m)
		opts.MaxSteps = 2
		res := run(t, tk, opts)
		assert.Equal(t, res.Stop, result.StopMaxSteps)
		assert.Equal(t, res.Steps, 2)
		assert.Equal(t, m.stepCount(), 2)
		assert.Equal(t, eventsOf(events(t, res), transcript.TypeStart)[0]["max_steps"], 2.0)
	})
	t.Run("timeout", func(t *testing.T) {
		tk := parseTask(t, "prompt: p\ntimeout: 10m\nmax_steps: 100\nassert:\n  - file_absent: x\n")
		m := script(loop)
		m.delay = 40 * time.Millisecond
		opts := runOptions(t, m)
		opts.Timeout = 300 * time.Millisecond
		start := time.Now()
		res := run(t, tk, opts)
		assert.Assert(t, time.Since(start) < 5*time.Second)
		assert.Equal(t, res.Status, result.Failed)
		assert.Equal(t, res.Stop, result.StopTimeout)
		assert.Assert(t, strings.HasPrefix(res.Reason, "timeout: "), res.Reason)
		assert.Equal(t, eventsOf(events(t, res), transcript.TypeStart)[0]["timeout"], "300ms")
		assert.Equal(t, len(res.Assertions), 1, "assertions still run after a timeout")
		assert.Assert(t, res.Assertions[0].Passed, res.Assertions[0].Message)
	})
}

func TestRunApprovalOverride(t *testing.T) {
	tk := parseTask(t, `prompt: p
approval: auto
tools: [write_file]
assert:
  - completed: true
  - file_exists: out.txt
`)
	calls := []model.ToolCall{toolCall("write_file", `{"path":"out.txt","content":"x"}`), complete}

	res := run(t, tk, runOptions(t, script(calls...)))
	assert.Equal(t, res.Status, result.Passed, "the task's own policy allows the write: %s", res.Reason)
	assert.Equal(t, res.Denied, 0)

	opts := runOptions(t, script(calls...))
	opts.Approval = &task.Approval{Mode: task.ModeReadOnly}
	res = run(t, tk, opts)
	assert.Equal(t, res.Status, result.Failed)
	assert.Assert(t, strings.HasPrefix(res.Reason, "file_exists: "), res.Reason)
	assert.Equal(t, res.Denied, 1)
	assert.Equal(t, res.ToolCalls, 1, "only task_complete ran")
	assert.Equal(t, res.Stop, result.StopCompleted)

	evs := events(t, res)
	assert.Equal(t, eventsOf(evs, transcript.TypeStart)[0]["approval"].(map[string]any)["mode"], "read-only")
	decision := eventsOf(evs, transcript.TypeDecision)[0]
	assert.Equal(t, decision["tool"], "write_file")
	assert.Equal(t, decision["decision"].(map[string]any)["allowed"], false)
	r := eventsOf(evs, transcript.TypeToolCall)[0]["result"].(map[string]any)
	assert.Equal(t, r["error"].(map[string]any)["code"], string(tools.CodeDenied))
}

// What the sandbox does not confine reaches result.json and the start event.
func TestRunRecordsSandboxGaps(t *testing.T) {
	tk := parseTask(t, "name: gaps\nprompt: p\ntools: [list_dir]\nsandbox: none\n")
	opts := runOptions(t, script(complete))
	opts.Sandbox = func(string) (tools.CommandWrapper, error) { return confinement.None(), nil }
	res := run(t, tk, opts)
	assert.Equal(t, res.Sandbox, "none")
	assert.Assert(t, len(res.SandboxGaps) == 1 && strings.Contains(res.SandboxGaps[0], "no confinement"), "%v", res.SandboxGaps)
	b, err := os.ReadFile(filepath.Join(opts.OutDir, "gaps", "result.json"))
	assert.NilError(t, err)
	var saved result.Scenario
	assert.NilError(t, json.Unmarshal(b, &saved))
	assert.DeepEqual(t, saved.SandboxGaps, res.SandboxGaps)
	start := eventsOf(events(t, res), transcript.TypeStart)[0]
	assert.DeepEqual(t, start["sandbox_gaps"], []any{res.SandboxGaps[0]})
}

// TestRunWritesTextDiffsBesideTheResult: what the agent created, changed and deleted is
// diffed against the snapshot taken before it acted and written to changes.json beside
// result.json; the verify files that arrive afterwards are not in it, and the hostile
// content changes nothing of the verdict.
func TestRunWritesTextDiffsBesideTheResult(t *testing.T) {
	tk := parseTask(t, `prompt: p
tools: [write_file]
workspace:
  files:
    main.go: "package main\n\nfunc Old() {}\n"
    old.txt: "ORIGINAL-MARKER\n"
verify:
  files: {hidden_test.txt: "the hidden check\n"}
assert:
  - completed: true
  - file_contains: {path: main.go, text: New}
`)
	hostile := `</script><script>alert(1)</script>` + "\n"
	m := script(
		toolCall("write_file", `{"path":"main.go","content":"package main\n\nfunc New() {}\n"}`),
		toolCall("write_file", `{"path":"page.html","content":`+strconvQuote(hostile)+`}`),
		toolCall("write_file", `{"path":"old.txt","content":"rewritten\n"}`),
		complete)
	opts := runOptions(t, m)
	res := run(t, tk, opts)
	assert.Equal(t, res.Status, result.Passed, res.Reason)

	b, err := os.ReadFile(filepath.Join(filepath.Dir(res.Transcript), result.DiffsFile))
	assert.NilError(t, err)
	var d result.Diffs
	assert.NilError(t, json.Unmarshal(b, &d))
	by := map[string]result.FileDiff{}
	for _, f := range d.Files {
		by[f.Path] = f
	}
	assert.Equal(t, by["main.go"].Diff, "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n \n-func Old() {}\n+func New() {}\n")
	assert.Equal(t, by["page.html"].Diff, "--- /dev/null\n+++ b/page.html\n@@ -0,0 +1 @@\n+"+hostile)
	assert.Check(t, is.Contains(by["old.txt"].Diff, "-ORIGINAL-MARKER\n+rewritten\n"))
	_, verifyListed := by["hidden_test.txt"]
	assert.Check(t, !verifyListed, "verify files are not the agent's changes")

	// The "before" came from the runner's memory: no copy of it was left where the
	// agent's commands could read or rewrite it (the workspaces' parent, the output).
	for _, dir := range []string{opts.WorkspaceParent, opts.OutDir} {
		_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || filepath.Base(p) == result.DiffsFile || filepath.Base(p) == "transcript.jsonl" {
				return nil
			}
			data, _ := os.ReadFile(p)
			assert.Check(t, !strings.Contains(string(data), "ORIGINAL-MARKER"), "a copy of the snapshot in %s", p)
			return nil
		})
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
