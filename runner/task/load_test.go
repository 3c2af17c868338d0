package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func ptr[T any](v T) *T { return &v }

func pos(file string, line, col int) Position { return Position{File: file, Line: line, Column: col} }

func TestLoadFullTask(t *testing.T) {
	const f = "testdata/valid/full.yaml"
	got, err := Load(f, testOptions())
	assert.NilError(t, err)
	want := &Task{
		Path:         f,
		Dir:          "testdata/valid",
		Name:         "rename-function",
		Description:  "Rename OldName to NewName everywhere",
		Tags:         []string{"refactor", "go"},
		Model:        "ollama:qwen3:4b",
		ModelOptions: model.Options{Temperature: ptr(0.0), Seed: ptr(1), NumCtx: 8192, MaxTokens: 2048, TopP: ptr(0.9)},
		System:       "You are a careful Go programmer.",
		Prompt:       "Rename the function OldName to NewName across the project and make sure `go build ./...` passes.\n",
		// Aliases become canonical names, the duplicate goes, task_complete is added.
		Tools: []string{"read_file", "grep_search", "replace_string_in_file", "run_in_terminal", "task_complete"},
		Approval: Approval{Mode: ModeRules, Default: "allow", Rules: []Rule{
			{Tool: "run_in_terminal", Match: `"command":"go (build|test|vet)\b`, Action: "allow", Pos: pos(f, 15, 7)},
			{Tool: "*_file", Match: `"path":"docs/`, Action: "allow", Reason: "docs are free to edit", Pos: pos(f, 16, 7)},
			{Tool: "delete_file", Action: "deny", Reason: "nothing is deleted in this task",
				Expires: ptr(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)), Pos: pos(f, 17, 7)},
			{Tool: "write_file", Action: "deny", Expires: ptr(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)), Pos: pos(f, 18, 7)},
			{Tool: "grep_search", Action: "allow", Disabled: true, Pos: pos(f, 21, 7)},
		}},
		CommandRules: []CommandRule{
			{Match: `^go (build|test|vet)\b`, Action: "allow", Pos: pos(f, 23, 5)},
			{Match: `^git push`, Action: "deny", Reason: "no pushing from scenarios", Pos: pos(f, 24, 5)},
		},
		MaxSteps: 20,
		Timeout:  5 * time.Minute,
		Env:      map[string]string{"GOFLAGS": "-mod=mod", "CGO_ENABLED": "0", "DEBUG": "true"},
		Network:  true,
		Sandbox:  "bwrap",
		Limits:   tools.Limits{CPUSeconds: 60, MemoryMB: 512, FileSizeMB: 10, Processes: 64},
		Workspace: WorkspaceSpec{
			Files: map[string]string{"main.go": "package main\n", "docs/notes.md": "hello"},
			Copy:  "../fixtures/rename",
			Setup: []string{"go mod init example.com/x"},
		},
		Verify: VerifySpec{Files: map[string]string{"extra_test.go": "package main\n"}, Copy: "../fixtures/rename-tests",
			Protect: []string{"**/*_test.go", "Makefile", "tests/**"}},
		Assert: []Assertion{
			{Kind: KindCompleted, Spec: true, Pos: pos(f, 42, 5)},
			{Kind: KindFileExists, Spec: "out.txt", Pos: pos(f, 43, 5)},
			{Kind: KindFileAbsent, Spec: "tmp.txt", Pos: pos(f, 44, 5)},
			{Kind: KindFileContains, Spec: FileContains{Path: "out.txt", Text: "hello"}, Pos: pos(f, 45, 5)},
			{Kind: KindFileMatches, Spec: FileMatches{Path: "main.go", Regex: `func NewName\(`}, Pos: pos(f, 46, 5)},
			{Kind: KindFileEquals, Spec: FileEquals{Path: "config.json", Content: "{}\n"}, Pos: pos(f, 47, 5)},
			{Kind: KindCommand, Spec: CommandCheck{Run: "go test ./...", StdoutContains: "ok", Timeout: 90 * time.Second}, Pos: pos(f, 48, 5)},
			{Kind: KindToolCalled, Spec: ToolCalled{Name: "run_in_terminal", ArgsMatch: "go (build|test)", Min: 1, Max: 5}, Pos: pos(f, 49, 5)},
			{Kind: KindToolCalled, Spec: ToolCalled{Name: "grep_search", Min: 1}, Pos: pos(f, 50, 5)},
			{Kind: KindToolNotCalled, Spec: "delete_file", Pos: pos(f, 51, 5)},
			{Kind: KindStepsAtMost, Spec: 10, Pos: pos(f, 52, 5)},
			{Kind: KindSummaryMatches, Spec: "(?i)renamed", Pos: pos(f, 53, 5)},
			{Kind: KindDeniedAtMost, Spec: 0, Pos: pos(f, 54, 5)},
		},
		Reference: []Call{
			{Tool: "replace_string_in_file", Args: map[string]any{"path": "main.go", "old_string": "OldName", "new_string": "NewName"}, Pos: pos(f, 56, 5)},
			{Tool: "bash", Args: map[string]any{"command": "go build ./...", "timeout": 30, "verbose": false, "ratio": 0.5,
				"list": []any{"a", 1}, "none": nil}, Pos: pos(f, 57, 5)},
			{Tool: "task_complete", Args: map[string]any{"summary": "Renamed OldName to NewName"}, Pos: pos(f, 58, 5)},
		},
		Warnings: []string{
			"testdata/valid/full.yaml:18:7: approval.rules[3]: rule expired on 2025-06-01T12:00:00Z, skipped",
			"testdata/valid/full.yaml:21:7: approval.rules[4]: rule disabled, skipped",
		},
	}
	got.KeyLines = nil // checked in keylines_test.go
	assert.DeepEqual(t, got, want)
}

func TestLoadDefaults(t *testing.T) {
	got, err := Load("testdata/valid/minimal.yml", LoadOptions{})
	assert.NilError(t, err)
	got.KeyLines = nil // checked in keylines_test.go
	assert.DeepEqual(t, got, &Task{
		Path:     "testdata/valid/minimal.yml",
		Dir:      "testdata/valid",
		Name:     "minimal", // the file name without .yml
		Prompt:   "Say hello.",
		Tools:    nil, // no tools: key means every tool
		Approval: Approval{Mode: ModeAuto},
		MaxSteps: DefaultMaxSteps,
		Timeout:  DefaultTimeout,
		Sandbox:  DefaultSandbox,
	})
	assert.Equal(t, got.MaxSteps, 30)
	assert.Equal(t, got.Timeout, 10*time.Minute)
}

func TestLoadShorthands(t *testing.T) {
	const f = "testdata/valid/shorthand.yaml"
	got, err := Load(f, testOptions())
	assert.NilError(t, err)
	got.KeyLines = nil // checked in keylines_test.go
	assert.DeepEqual(t, got, &Task{
		Path:        f,
		Dir:         "testdata/valid",
		Name:        "shorthand",
		Description: "Create out.txt.", // an alias of the prompt's anchor
		Prompt:      "Create out.txt.",
		Tools:       []string{"list_dir", "create_file", "task_complete"},
		Approval:    Approval{Mode: ModeReadOnly},
		MaxSteps:    DefaultMaxSteps,
		Timeout:     DefaultTimeout,
		Sandbox:     DefaultSandbox,
		Assert: []Assertion{
			{Kind: KindCommand, Spec: CommandCheck{Run: "test -f out.txt", Timeout: DefaultCommandTimeout}, Pos: pos(f, 7, 5)},
			// A merge key supplies timeout and exit_code.
			{Kind: KindCommand, Spec: CommandCheck{Run: "false", ExitCode: 1, Timeout: 2 * time.Minute}, Pos: pos(f, 8, 5)},
			{Kind: KindToolCalled, Spec: ToolCalled{Name: "create_file", Min: 0}, Pos: pos(f, 11, 5)},
		},
		Reference: []Call{
			{Tool: "list_dir", Args: map[string]any{}, Pos: pos(f, 13, 5)},
			{Tool: "create_file", Args: map[string]any{"path": "out.txt", "content": ""}, Pos: pos(f, 14, 5)},
		},
	})
}

// parseOK parses an inline task and fails the test on any error.
func parseOK(t *testing.T, src string, opts LoadOptions) *Task {
	t.Helper()
	got, err := Parse("t.yaml", []byte(src), opts)
	assert.NilError(t, err)
	return got
}

func TestParseSnippets(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		opts  LoadOptions
		check func(t *testing.T, got *Task)
	}{
		{
			name: "approval shorthand rules defaults to deny",
			src:  "prompt: x\napproval: rules\n",
			check: func(t *testing.T, got *Task) {
				assert.DeepEqual(t, got.Approval, Approval{Mode: ModeRules, Default: "deny"})
			},
		},
		{
			name: "approval block ask without default",
			src:  "prompt: x\napproval: {mode: ask, rules: [{action: allow, tool: read_file}]}\n",
			opts: testOptions(),
			check: func(t *testing.T, got *Task) {
				assert.Equal(t, got.Approval.Mode, ModeAsk)
				assert.Equal(t, got.Approval.Default, "deny")
				assert.Equal(t, len(got.Approval.Rules), 1)
				assert.Assert(t, is.Len(got.Warnings, 0))
			},
		},
		{
			name: "rules in auto mode warn",
			src:  "prompt: x\napproval:\n  rules:\n    - {action: deny}\n",
			check: func(t *testing.T, got *Task) {
				assert.Equal(t, got.Approval.Mode, ModeAuto)
				assert.Equal(t, got.Approval.Default, "")
				assert.DeepEqual(t, got.Warnings, []string{
					"t.yaml:3:3: approval.rules: rules apply only when the mode is rules or ask (in the file or by an override); mode is auto"})
			},
		},
		{
			name: "a glob that matches no tool warns",
			src:  "prompt: x\napproval: {mode: rules, rules: [{tool: '*_dirs', action: allow}]}\n",
			opts: testOptions(),
			check: func(t *testing.T, got *Task) {
				assert.DeepEqual(t, got.Warnings, []string{
					`t.yaml:2:40: approval.rules[0].tool: pattern "*_dirs" matches no known tool`})
			},
		},
		{
			name: "rule expiring exactly now is expired, a second later is not",
			src: "prompt: x\napproval:\n  mode: rules\n  rules:\n" +
				"    - {action: deny, expires: '2026-03-01'}\n" +
				"    - {action: deny, expires: '2026-03-01T00:00:01Z'}\n",
			opts: testOptions(),
			check: func(t *testing.T, got *Task) {
				assert.DeepEqual(t, got.Warnings, []string{
					"t.yaml:5:7: approval.rules[0]: rule expired on 2026-03-01, skipped"})
				assert.Equal(t, len(got.Approval.Rules), 2, "expired rules stay in the task")
			},
		},
		{
			name: "null blocks are empty and tools: with nothing allows only task_complete",
			src:  "prompt: x\nworkspace:\nverify:\nassert:\nenv:\ntools:\n",
			check: func(t *testing.T, got *Task) {
				assert.DeepEqual(t, got.Workspace, WorkspaceSpec{})
				assert.Assert(t, got.Env == nil)
				assert.Assert(t, got.Assert == nil)
				assert.DeepEqual(t, got.Tools, []string{TaskComplete})
			},
		},
		{
			name: "without KnownTool, tool names are not checked",
			src:  "prompt: x\ntools: [anything]\nassert: [{tool_called: anything}]\n",
			check: func(t *testing.T, got *Task) {
				assert.DeepEqual(t, got.Tools, []string{"anything", TaskComplete})
				assert.DeepEqual(t, got.Assert[0].Spec, ToolCalled{Name: "anything", Min: 1})
			},
		},
		{
			name: "task_complete is allowed even when the registry does not know it",
			src:  "prompt: x\ntools: [task_complete, read_file]\n",
			opts: LoadOptions{ToolNames: []string{"read_file"}},
			check: func(t *testing.T, got *Task) {
				assert.DeepEqual(t, got.Tools, []string{TaskComplete, "read_file"})
			},
		},
		{
			name: "numbers as text, tagged strings, quoted booleans",
			src:  "prompt: 42\nname: !!str 7\nworkspace: {files: {n.txt: 3.14, b.txt: !!str true}}\nassert: [{file_contains: {path: a, text: 1e3}}]\n",
			check: func(t *testing.T, got *Task) {
				assert.Equal(t, got.Prompt, "42")
				assert.Equal(t, got.Name, "7")
				assert.DeepEqual(t, got.Workspace.Files, map[string]string{"n.txt": "3.14", "b.txt": "true"})
				assert.DeepEqual(t, got.Assert[0].Spec, FileContains{Path: "a", Text: "1e3"})
			},
		},
		{
			name: "durations",
			src:  "prompt: x\ntimeout: 1h30m\nassert: [{command: {run: ls, timeout: 1.5s}}]\n",
			check: func(t *testing.T, got *Task) {
				assert.Equal(t, got.Timeout, 90*time.Minute)
				assert.Equal(t, got.Assert[0].Spec.(CommandCheck).Timeout, 1500*time.Millisecond)
			},
		},
		{
			name: "a name given explicitly wins over the file name",
			src:  "name: my.task-1\nprompt: x\n",
			check: func(t *testing.T, got *Task) {
				assert.Equal(t, got.Name, "my.task-1")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts.Now.IsZero() {
				opts.Now = testNow
			}
			tc.check(t, parseOK(t, tc.src, opts))
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"reference tool must be allowed", "prompt: x\ntools: [read_file]\nreference:\n  - view: {path: a}\n  - bash: {command: ls}\n",
			`t.yaml:5:5: reference[1]: tool "bash" is not in tools:, so the reference solution cannot call it`},
		{"tool_called needs an allowed tool", "prompt: x\ntools: [read_file]\nassert:\n  - tool_called: bash\n  - tool_called: {name: delete_file, min: 0}\n",
			`t.yaml:4:5: assert[0].tool_called: tool "run_in_terminal" is not in tools:, so this assertion cannot pass`},
		{"root must be a mapping", "- prompt: x\n", `t.yaml:1:1: expected a mapping, got a list`},
		{"self-referencing alias", "prompt: x\nreference:\n  - read_file: &a {x: *a}\n", "aliases nest too deeply"},
		{"bad env name", "prompt: x\nenv: {1X: a}\n", `t.yaml:2:7: env.1X: invalid variable name "1X"`},
		{"loader variable in env", "prompt: x\nenv: {A: b, LD_PRELOAD: ./evil.so}\n", `t.yaml:2:13: env.LD_PRELOAD: LD_PRELOAD is refused`},
		{"empty prompt", "prompt: '  '\n", `t.yaml:1:9: prompt: must not be empty`},
		{"top_p range", "prompt: x\nmodel_options: {top_p: 2}\n", `t.yaml:2:24: model_options.top_p: must be between 0 and 1, got 2`},
		{"infinite number", "prompt: x\nmodel_options: {temperature: .inf}\n", `model_options.temperature: expected a finite number, got .inf`},
		{"copy is a file", "prompt: x\nworkspace: {copy: load.go}\n", `t.yaml:2:19: workspace.copy: "load.go" is not a directory`},
		{"tool_called list", "prompt: x\nassert: [{tool_called: [a]}]\n", `assert[0].tool_called: expected a tool name or a mapping`},
		{"approval list", "prompt: x\napproval: [auto]\n", `approval: expected a mode (auto, read-only, rules, ask) or a mapping`},
		{"command rule needs match and action", "prompt: x\ncommand_rules: [{reason: r}]\n",
			"t.yaml:2:17: command_rules[0].match: required field is missing\nt.yaml:2:17: command_rules[0].action: required field is missing"},
		{"a key must not be null", "prompt: x\nenv: {~: b}\n", `t.yaml:2:7: env: empty key`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			// Parse relative to this directory so that workspace.copy can name a real file.
			_, err := Parse("t.yaml", []byte(tc.src), opts)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/nope.yaml", LoadOptions{})
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Error(t, err, "testdata/nope.yaml: no such file")
}

func TestErrorFormatIsOneProblemPerLine(t *testing.T) {
	_, err := Parse("t.yaml", []byte("prompt: x\nmax_steps: 0\npromt: 1\n"), LoadOptions{})
	assert.Error(t, err, "t.yaml:2:12: max_steps: must be at least 1, got 0\n"+
		`t.yaml:3:1: promt: unknown field "promt"; did you mean "prompt"?`)
	problems := Problems(err)
	assert.Equal(t, len(problems), 2)
	var te *Error
	assert.Assert(t, errors.As(problems[1], &te))
	assert.DeepEqual(t, te, &Error{Pos: pos("t.yaml", 3, 1), Field: "promt", Msg: `unknown field "promt"; did you mean "prompt"?`})
	assert.Assert(t, !strings.Contains(err.Error(), "errors occurred"))
}

func TestPositionString(t *testing.T) {
	assert.Equal(t, pos("a.yaml", 3, 4).String(), "a.yaml:3:4")
	assert.Equal(t, Position{File: "a.yaml", Line: 3}.String(), "a.yaml:3")
	assert.Equal(t, Position{File: "a.yaml"}.String(), "a.yaml")
}

// TestAliasExpansionIsBounded feeds a "billion laughs": 2^40 values through 40 anchors.
// Without the budget it would never return.
func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("prompt: x\nreference:\n  - read_file:\n      a0: &a0 [lol, lol]\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "      a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	_, err := Parse("t.yaml", []byte(b.String()), LoadOptions{})
	assert.ErrorContains(t, err, "the file expands to more than 1048576 values")
	assert.Equal(t, len(Problems(err)), 1)
}

func TestReferenceArgsChecked(t *testing.T) {
	src := "prompt: p\ntools: [read_file]\nreference:\n  - read_file: {path: a}\n  - read_file: {paht: a}\n"
	checked := []string{}
	opts := LoadOptions{
		KnownTool: func(n string) (string, bool) { return n, n == "read_file" || n == TaskComplete },
		CheckArgs: func(tool string, args map[string]any) error {
			checked = append(checked, tool)
			if _, ok := args["paht"]; ok {
				return fmt.Errorf("read_file has no parameter paht")
			}
			return nil
		},
	}
	_, err := Parse("t.yaml", []byte(src), opts)
	assert.Error(t, err, "t.yaml:5:5: reference[1].read_file: read_file has no parameter paht")
	assert.DeepEqual(t, checked, []string{"read_file", "read_file"})
}

func TestCheckApprovalModeNamesTheModes(t *testing.T) {
	for _, m := range ApprovalModeNames() {
		assert.NilError(t, CheckApprovalMode(m))
	}
	err := CheckApprovalMode("yolo")
	assert.Assert(t, errors.Is(err, ErrUnknownApprovalMode))
	assert.Error(t, err, `unknown approval mode "yolo" (want auto, read-only, rules or ask)`)
}

func TestLoadFreshContainer(t *testing.T) {
	got, err := Load("testdata/valid/environment.yaml", testOptions())
	assert.NilError(t, err)
	assert.Assert(t, got.Verify.FreshContainer)
	assert.DeepEqual(t, got.Verify.Protect, []string{"/usr/local/bin/**"})

	// false is allowed without an environment: it asks for nothing.
	dir := t.TempDir()
	p := filepath.Join(dir, "t.yaml")
	assert.NilError(t, os.WriteFile(p, []byte("prompt: x\nverify: {fresh_container: false}\n"), 0o644))
	got, err = Load(p, testOptions())
	assert.NilError(t, err)
	assert.Assert(t, !got.Verify.FreshContainer)
}
