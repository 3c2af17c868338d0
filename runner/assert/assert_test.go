package assert

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/fs"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
)

// workspace builds the final workspace every case checks against.
func workspace(t *testing.T) string {
	t.Helper()
	dir := fs.NewDir(t, "ws",
		fs.WithFile("out.txt", "hello world\n"),
		fs.WithFile("main.go", "package main\n\nfunc NewName() {}\n"),
		fs.WithFile("config.json", "{\n  \"port\": 8080,\n  \"debug\": false\n}\n"),
		fs.WithFile("empty.txt", ""),
		fs.WithDir("src", fs.WithFile("a.go", "package src\n")),
	)
	// fs.WithSymlink makes targets absolute; these must stay exactly as written.
	assert.NilError(t, os.Symlink("/etc/passwd", dir.Join("escape")))
	assert.NilError(t, os.Symlink("nowhere", dir.Join("dangling")))
	return dir.Path()
}

func baseRun(dir string) *Run {
	return &Run{
		Workspace: dir,
		Completed: true,
		Summary:   "Renamed OldName to NewName in 2 files",
		Steps:     4,
		Calls: []result.Call{
			{Tool: "read_file", Args: `{"path":"main.go"}`, Executed: true},
			{Tool: "run_in_terminal", Args: `{"command":"go build ./..."}`, Executed: true},
			{Tool: "run_in_terminal", Args: `{"command":"go test ./..."}`, Executed: true},
			{Tool: "run_in_terminal", Args: `{"command":"rm -rf /"}`, Denied: true},
			{Tool: "delete_file", Args: `{"path":"tmp.txt"}`, Denied: true},
			{Tool: "task_complete", Args: `{"summary":"Renamed"}`, Executed: true},
		},
	}
}

func TestCheck(t *testing.T) {
	dir := workspace(t)
	type tc struct {
		name string
		kind string
		spec any
		run  func(*Run) // adjusts the base run
		pass bool
		msg  string // substring of the message
	}
	cases := []tc{
		{name: "completed", kind: task.KindCompleted, spec: true, pass: true, msg: "task_complete was called"},
		{name: "completed missing", kind: task.KindCompleted, spec: true, run: func(r *Run) { r.Completed = false },
			msg: "task_complete was not called (the agent stopped after 4 steps)"},
		{name: "completed false wanted", kind: task.KindCompleted, spec: false, run: func(r *Run) { r.Completed = false },
			pass: true, msg: "not called, as wanted"},
		{name: "completed false but called", kind: task.KindCompleted, spec: false, msg: "want it not called"},

		{name: "exists", kind: task.KindFileExists, spec: "out.txt", pass: true, msg: "out.txt exists"},
		{name: "exists dir", kind: task.KindFileExists, spec: "src", pass: true, msg: "src exists (a directory)"},
		{name: "exists nested", kind: task.KindFileExists, spec: "./src/../src/a.go", pass: true, msg: "exists"},
		{name: "exists missing", kind: task.KindFileExists, spec: "nope.txt", msg: "nope.txt does not exist"},
		{name: "exists escape", kind: task.KindFileExists, spec: "../etc/passwd", msg: "outside the workspace"},
		{name: "exists absolute", kind: task.KindFileExists, spec: "/etc/passwd", msg: "outside the workspace"},
		{name: "exists symlink out", kind: task.KindFileExists, spec: "escape", msg: "outside the workspace"},
		{name: "exists dangling", kind: task.KindFileExists, spec: "dangling", msg: "dangling does not exist"},
		{name: "exists NUL", kind: task.KindFileExists, spec: "a\x00b", msg: "NUL"},

		{name: "absent", kind: task.KindFileAbsent, spec: "tmp.txt", pass: true, msg: "tmp.txt is absent"},
		{name: "absent present", kind: task.KindFileAbsent, spec: "out.txt", msg: "out.txt exists, want it absent"},
		{name: "absent dir", kind: task.KindFileAbsent, spec: "src", msg: "a directory"},
		{name: "absent dangling link", kind: task.KindFileAbsent, spec: "dangling", msg: "dangling exists"},
		{name: "absent escape", kind: task.KindFileAbsent, spec: "../x", msg: "outside the workspace"},

		{name: "contains", kind: task.KindFileContains, spec: task.FileContains{Path: "out.txt", Text: "hello"},
			pass: true, msg: `out.txt contains "hello"`},
		{name: "contains pointer spec", kind: task.KindFileContains, spec: &task.FileContains{Path: "out.txt", Text: "world"},
			pass: true, msg: `contains "world"`},
		{name: "contains not", kind: task.KindFileContains, spec: task.FileContains{Path: "out.txt", Text: "bye"},
			msg: `out.txt does not contain "bye"; it holds 1 line: "hello world\n"`},
		{name: "contains empty file", kind: task.KindFileContains, spec: task.FileContains{Path: "empty.txt", Text: "x"},
			msg: "nothing (empty file)"},
		{name: "contains missing", kind: task.KindFileContains, spec: task.FileContains{Path: "gone.txt", Text: "x"},
			msg: "gone.txt does not exist"},
		{name: "contains dir", kind: task.KindFileContains, spec: task.FileContains{Path: "src", Text: "x"},
			msg: "src is a directory"},
		{name: "contains escape", kind: task.KindFileContains, spec: task.FileContains{Path: "escape", Text: "root"},
			msg: "outside the workspace"},

		{name: "matches", kind: task.KindFileMatches, spec: task.FileMatches{Path: "main.go", Regex: `func NewName\(`},
			pass: true, msg: `main.go matches /func NewName\(/: "func NewName("`},
		{name: "matches not", kind: task.KindFileMatches, spec: task.FileMatches{Path: "main.go", Regex: `func OldName\(`},
			msg: `main.go does not match /func OldName\(/; it holds 3 lines`},
		{name: "matches bad regex", kind: task.KindFileMatches, spec: task.FileMatches{Path: "main.go", Regex: `(`},
			msg: "invalid assertion: file_matches: regex: error parsing regexp"},
		{name: "matches missing", kind: task.KindFileMatches, spec: task.FileMatches{Path: "x.go", Regex: `.`},
			msg: "x.go does not exist"},

		{name: "equals", kind: task.KindFileEquals, spec: task.FileEquals{Path: "out.txt", Content: "hello world\n"},
			pass: true, msg: "out.txt equals the expected content (12 bytes)"},
		{name: "equals differs", kind: task.KindFileEquals,
			spec: task.FileEquals{Path: "config.json", Content: "{\n  \"port\": 9090,\n  \"debug\": false\n}\n"},
			msg:  "config.json differs from the expected content (want 37 bytes, got 37); first difference at line 2:\n    \"{\"\n  - \"  \\\"port\\\": 9090,\"\n  + \"  \\\"port\\\": 8080,\""},
		{name: "equals final newline", kind: task.KindFileEquals, spec: task.FileEquals{Path: "out.txt", Content: "hello world"},
			msg: "first difference at line 1:\n  - \"hello world\"\n  + \"hello world\\n\""},
		{name: "equals shorter file", kind: task.KindFileEquals, spec: task.FileEquals{Path: "out.txt", Content: "hello world\nbye\n"},
			msg: "line 2:\n    \"hello world\"\n  - \"bye\"\n  + (end of file)"},
		{name: "equals longer file", kind: task.KindFileEquals, spec: task.FileEquals{Path: "main.go", Content: "package main\n"},
			msg: "line 2:\n    \"package main\"\n  - (end of content)\n  + \"\""},
		{name: "equals missing", kind: task.KindFileEquals, spec: task.FileEquals{Path: "no.json", Content: ""},
			msg: "no.json does not exist"},

		{name: "command", kind: task.KindCommand, spec: task.CommandCheck{Run: "cat out.txt", StdoutContains: "hello"},
			pass: true, msg: "`cat out.txt` exited 0 and its stdout contains \"hello\""},
		{name: "command exit code wanted", kind: task.KindCommand, spec: task.CommandCheck{Run: "exit 3", ExitCode: 3},
			pass: true, msg: "`exit 3` exited 3"},
		{name: "command wrong exit", kind: task.KindCommand, spec: task.CommandCheck{Run: "echo first; echo last; exit 2"},
			msg: "`echo first; echo last; exit 2` ended with exit code 2, want 0; output tail:\nfirst\nlast"},
		{name: "command stderr in tail", kind: task.KindCommand, spec: task.CommandCheck{Run: "echo boom >&2; false"},
			msg: "ended with exit code 1, want 0; output tail:\nboom"},
		{name: "command stdout missing", kind: task.KindCommand, spec: task.CommandCheck{Run: "echo ok >&2", StdoutContains: "ok"},
			msg: "exited 0 but its stdout does not contain \"ok\"; no output"},
		{name: "command env", kind: task.KindCommand,
			spec: task.CommandCheck{Run: `test "$GREETING" = hi && test "$TERM" = dumb && test -z "$SECRET_KEY"`},
			run:  func(r *Run) { r.Env = map[string]string{"GREETING": "hi"} }, pass: true, msg: "exited 0"},
		{name: "command runs in workspace", kind: task.KindCommand, spec: task.CommandCheck{Run: "test -f main.go && pwd"},
			pass: true, msg: "exited 0"},
		{name: "command timeout", kind: task.KindCommand, spec: task.CommandCheck{Run: "echo started; sleep 30", Timeout: 200 * time.Millisecond},
			msg: "; output tail:\nstarted\nTo try: a longer `timeout:` on this command (200ms now)"},
		{name: "command timeout says what ran", kind: task.KindCommand, spec: task.CommandCheck{Run: "echo started; sleep 30", Timeout: 200 * time.Millisecond},
			msg: "`echo started; sleep 30` timed out after 200ms and was killed while running sleep 30 (load average "},
		{name: "command signal", kind: task.KindCommand, spec: task.CommandCheck{Run: "kill -9 $$"},
			msg: "ended with a signal: SIGKILL, want 0"},
		{name: "command empty", kind: task.KindCommand, spec: task.CommandCheck{}, msg: "invalid assertion: command: run is empty"},

		{name: "tool called", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "run_in_terminal", Min: 1},
			pass: true, msg: "run_in_terminal was executed 2 times (want at least 1); 1 more call denied and not counted"},
		{name: "tool called args", kind: task.KindToolCalled,
			spec: task.ToolCalled{Name: "run_in_terminal", ArgsMatch: `go (build|test)`, Min: 1, Max: 2}, pass: true,
			msg: "run_in_terminal with arguments matching /go (build|test)/ was executed 2 times (want 1 to 2)"},
		{name: "tool called exact max", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "read_file", Min: 1, Max: 1},
			pass: true, msg: "executed 1 time (want 1 to 1)"},
		{name: "tool called above max", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "run_in_terminal", Min: 1, Max: 1},
			msg: "run_in_terminal was executed 2 times (want 1 to 1)"},
		{name: "tool called at most (min 0)", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "delete_file", Min: 0, Max: 1},
			pass: true, msg: "delete_file was executed 0 times (want 0 to 1)"},
		{name: "tool called negative min", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "x", Min: -1}, msg: "min -1 is negative"},
		{name: "tool called below min", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "run_in_terminal", Min: 3},
			msg: "executed 2 times (want at least 3)"},
		{name: "tool called denied only", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "delete_file", Min: 1},
			msg: "delete_file was executed 0 times (want at least 1); 1 more call denied and not counted"},
		{name: "tool called args miss", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "run_in_terminal", ArgsMatch: `make`, Min: 1},
			msg: "executed 0 times"},
		{name: "tool called bad bounds", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "x", Min: 3, Max: 2},
			msg: "invalid assertion: tool_called: max 2 is below min 3"},
		{name: "tool called bad regex", kind: task.KindToolCalled, spec: task.ToolCalled{Name: "x", ArgsMatch: "["},
			msg: "args_match: error parsing regexp"},

		{name: "tool not called", kind: task.KindToolNotCalled, spec: "delete_file", pass: true, msg: "delete_file was not executed"},
		{name: "tool not called but was", kind: task.KindToolNotCalled, spec: "run_in_terminal",
			msg: "run_in_terminal was executed 2 times, want never; first call: \"{\\\"command\\\":\\\"go build ./...\\\"}\""},

		{name: "steps", kind: task.KindStepsAtMost, spec: 4, pass: true, msg: "the agent took 4 steps (at most 4 allowed)"},
		{name: "steps uint64", kind: task.KindStepsAtMost, spec: uint64(10), pass: true, msg: "at most 10"},
		{name: "steps over", kind: task.KindStepsAtMost, spec: 3, msg: "the agent took 4 steps (at most 3 allowed)"},
		{name: "steps bad spec", kind: task.KindStepsAtMost, spec: "3", msg: "invalid assertion: steps_at_most: spec 3 (string) is not an integer"},

		{name: "summary", kind: task.KindSummaryMatches, spec: "(?i)renamed", pass: true,
			msg: "the summary matches /(?i)renamed/: \"Renamed OldName to NewName in 2 files\""},
		{name: "summary not", kind: task.KindSummaryMatches, spec: "deleted", msg: "the summary does not match /deleted/"},
		{name: "summary not completed", kind: task.KindSummaryMatches, spec: ".*", run: func(r *Run) { r.Completed = false; r.Summary = "" },
			msg: "no summary to match /.*/: task_complete was not called"},

		{name: "denied", kind: task.KindDeniedAtMost, spec: 2, pass: true, msg: "2 calls denied (at most 2 allowed)"},
		{name: "denied over", kind: task.KindDeniedAtMost, spec: 0, msg: "2 calls denied (at most 0 allowed)"},

		{name: "unknown kind", kind: "file_smells", spec: "x", msg: `invalid assertion: unknown assertion kind "file_smells"`},
		{name: "wrong spec type", kind: task.KindFileContains, spec: "out.txt",
			msg: "invalid assertion: file_contains: spec has type string, want task.FileContains"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := baseRun(dir)
			if c.run != nil {
				c.run(run)
			}
			a := task.Assertion{Kind: c.kind, Spec: c.spec, Pos: task.Position{File: "t.yaml", Line: 7, Column: 5}}
			got := Check(context.Background(), a, run)
			assert.Equal(t, got.Kind, c.kind)
			assert.Equal(t, got.Line, 7)
			assert.Equal(t, got.Column, 5)
			assert.Check(t, is.Contains(got.Message, c.msg))
			assert.Equal(t, got.Passed, c.pass, "message: %s", got.Message)
		})
	}
}

func TestCheckAllKeepsOrderAndSharesWorkspace(t *testing.T) {
	dir := workspace(t)
	as := []task.Assertion{
		{Kind: task.KindFileExists, Spec: "out.txt", Pos: task.Position{Line: 1}},
		{Kind: task.KindCommand, Spec: task.CommandCheck{Run: "rm out.txt"}, Pos: task.Position{Line: 2}},
		{Kind: task.KindFileAbsent, Spec: "out.txt", Pos: task.Position{Line: 3}},
	}
	run := baseRun(dir)
	got := CheckAll(context.Background(), as, run)
	assert.Equal(t, len(got), 3)
	for i, r := range got {
		assert.Equal(t, r.Line, i+1)
		assert.Check(t, r.Passed, r.Message)
	}
	assert.Check(t, run.ws == nil, "CheckAll must close the workspace")
}

func TestMissingWorkspace(t *testing.T) {
	run := &Run{Workspace: filepath.Join(t.TempDir(), "gone")}
	got := Check(context.Background(), task.Assertion{Kind: task.KindFileExists, Spec: "a"}, run)
	assert.Check(t, !got.Passed)
	assert.Check(t, is.Contains(got.Message, "cannot check a: workspace"))
}

func TestCommandTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	// The background child would keep the pipe open for 30 s if only the shell were killed.
	spec := task.CommandCheck{Run: "sleep 30 & sleep 30; echo never", Timeout: 300 * time.Millisecond}
	start := time.Now()
	got := Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: spec}, &Run{Workspace: dir})
	assert.Check(t, !got.Passed)
	assert.Check(t, is.Contains(got.Message, "timed out after 300ms"))
	assert.Check(t, time.Since(start) < 5*time.Second, "took %s", time.Since(start))
}

func TestCommandBackgroundChildDoesNotHang(t *testing.T) {
	dir := t.TempDir()
	spec := task.CommandCheck{Run: "sleep 30 & echo done", StdoutContains: "done"}
	start := time.Now()
	got := Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: spec}, &Run{Workspace: dir})
	assert.Check(t, got.Passed, got.Message)
	assert.Check(t, time.Since(start) < 3*time.Second, "took %s", time.Since(start))
}

func TestCommandCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	got := Check(ctx, task.Assertion{Kind: task.KindCommand, Spec: task.CommandCheck{Run: "sleep 30"}}, &Run{Workspace: t.TempDir()})
	assert.Check(t, !got.Passed)
	assert.Check(t, is.Contains(got.Message, "was interrupted: context canceled"))
}

func TestCommandOutputCapped(t *testing.T) {
	dir := t.TempDir()
	// 1 MiB of output: the start and the end survive, the middle is dropped.
	spec := task.CommandCheck{Run: "echo FIRST; head -c 1048576 /dev/zero | tr '\\0' x; echo; echo LAST; exit 1"}
	got := Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: spec}, &Run{Workspace: dir})
	assert.Check(t, !got.Passed)
	assert.Check(t, strings.HasSuffix(got.Message, "\nLAST"), got.Message[len(got.Message)-40:])
	assert.Check(t, len(got.Message) < tailShown+200, "message is %d bytes", len(got.Message))
}

func TestCommandEnvIsMinimal(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("RUNNER_PRIVATE", "x")
	spec := task.CommandCheck{Run: `test -z "$OPENAI_API_KEY$RUNNER_PRIVATE" && test "$GOFLAGS" = -mod=mod && ` +
		`test "$LANG" = fr_FR.UTF-8 && test "$TERM" = dumb && test "$PATH" = "` + os.Getenv("PATH") + `"`}
	run := &Run{Workspace: t.TempDir(), Env: map[string]string{"GOFLAGS": "-mod=mod", "LANG": "fr_FR.UTF-8"}}
	got := Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: spec}, run)
	assert.Check(t, got.Passed, got.Message)
}

// TestKindsCoverTaskKinds: every row of task.Kinds has a checker here and no checker
// lacks a row, so a kind added on one side only fails.
func TestKindsCoverTaskKinds(t *testing.T) {
	want := append([]string(nil), task.AssertionKinds...)
	sort.Strings(want)
	assert.DeepEqual(t, Kinds(), want)
}

// fakeSandbox rewrites the command the way a launcher would: a new argv and session.
type fakeSandbox struct {
	err      error
	released *int
}

func (f fakeSandbox) Release(*exec.Cmd) { *f.released++ }

func (fakeSandbox) Name() string { return "fake" }

func (f fakeSandbox) Wrap(cmd *exec.Cmd, ws *tools.Workspace) error {
	if f.err != nil {
		return f.err
	}
	if !ws.Network || ws.Limits.MemoryMB != 64 {
		return errors.New("the task's network and limits did not reach the sandbox")
	}
	cmd.Args = append([]string{"env", "SANDBOXED=" + ws.Env["GREETING"]}, cmd.Args...)
	cmd.Path = "/usr/bin/env"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return nil
}

func TestCommandThroughSandbox(t *testing.T) {
	spec := task.CommandCheck{Run: `echo "in $SANDBOXED"`, StdoutContains: "in hi"}
	released := 0
	run := &Run{Workspace: t.TempDir(), Env: map[string]string{"GREETING": "hi"}, Wrap: fakeSandbox{released: &released},
		Network: true, Limits: tools.Limits{MemoryMB: 64}}
	got := Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: spec}, run)
	assert.Check(t, got.Passed, got.Message)

	timeout := task.CommandCheck{Run: "sleep 30 & sleep 30", Timeout: 200 * time.Millisecond}
	start := time.Now()
	got = Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: timeout}, run)
	assert.Check(t, is.Contains(got.Message, "timed out"))
	assert.Check(t, time.Since(start) < 5*time.Second, "a sandboxed group must be killed too; took %s", time.Since(start))

	assert.Equal(t, released, 2, "every wrapped command's resources are released")

	run.Wrap = fakeSandbox{err: errors.New("bwrap: not installed"), released: &released}
	got = Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: spec}, run)
	assert.Check(t, !got.Passed)
	assert.Equal(t, got.Message, "cannot run `echo \"in $SANDBOXED\"`: sandbox fake: bwrap: not installed")
}

// An agent that leaves a FIFO where a file check reads must not hang the runner: the
// open does not wait for a writer, and the check fails saying what is there.
func TestFileChecksOnFIFODoNotBlock(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, syscall.Mkfifo(filepath.Join(dir, "result.txt"), 0o644))
	assert.NilError(t, os.Symlink("result.txt", filepath.Join(dir, "link.txt")))
	for _, a := range []task.Assertion{
		{Kind: task.KindFileContains, Spec: task.FileContains{Path: "result.txt", Text: "ok"}},
		{Kind: task.KindFileMatches, Spec: task.FileMatches{Path: "result.txt", Regex: "ok"}},
		{Kind: task.KindFileEquals, Spec: task.FileEquals{Path: "link.txt", Content: "ok"}},
	} {
		done := make(chan struct{})
		var got string
		var passed bool
		go func() {
			defer close(done)
			r := Check(context.Background(), a, &Run{Workspace: dir})
			passed, got = r.Passed, r.Message
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s blocked on a FIFO", a.Kind)
		}
		assert.Assert(t, !passed, a.Kind)
		assert.Assert(t, is.Contains(got, "is a FIFO (named pipe), not a regular file"), a.Kind)
	}
	// Existence checks see the FIFO without opening it.
	r := Check(context.Background(), task.Assertion{Kind: task.KindFileExists, Spec: "result.txt"}, &Run{Workspace: dir})
	assert.Assert(t, r.Passed, r.Message)
}
