package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// serverBin is the test server (testdata/server), built once by TestMain.
var serverBin string

func TestMain(m *testing.M) {
	sandbox.RunHelperIfRequested()
	dir, err := os.MkdirTemp("", "runner-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "server")
	build := osexec.Command("go", "build", "-o", serverBin, "./testdata/server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test MCP server:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir) // test cleanup: its error does not change what the test checked
	os.Exit(code)
}

func workspace(t *testing.T, w tools.CommandWrapper) *tools.Workspace {
	t.Helper()
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	ws.Sandbox = w
	ws.ReadOnly = []string{filepath.Dir(serverBin)}
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

func start(t *testing.T, ws *tools.Workspace, args ...string) (*Server, *tools.Registry) {
	t.Helper()
	s, err := Start(context.Background(), ws, Options{Name: "test", Argv: append([]string{serverBin}, args...), Env: map[string]string{"GREETING": "hello"}})
	assert.NilError(t, err)
	t.Cleanup(s.Close)
	reg := tools.NewRegistry()
	reg.MustRegister(s.Tools()...)
	return s, reg
}

func call(reg *tools.Registry, ws *tools.Workspace, name string, args any) tools.Result {
	raw, _ := json.Marshal(args)
	return reg.Run(context.Background(), name, raw, ws)
}

func TestToolsAreListedAndCalled(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	data := filepath.Join(t.TempDir(), "data.txt")
	assert.NilError(t, os.WriteFile(data, []byte("the data"), 0o644))
	ws := workspace(t, sandbox.None())
	_, reg := start(t, ws, "--data", data)

	assert.DeepEqual(t, reg.Names(), []string{"test__echo", "test__env", "test__fail", "test__read_data", "test__spawn", "test__write_note"})
	echo, _, _ := reg.Lookup("test__echo")
	assert.Equal(t, echo.Spec().Risk, tools.RiskReadOnly) // the server's readOnlyHint
	assert.Equal(t, echo.Spec().Description, "Echo the text.")
	note, _, _ := reg.Lookup("test__write_note")
	assert.Equal(t, note.Spec().Risk, tools.RiskDangerous)

	res := call(reg, ws, "test__echo", map[string]any{"text": "hi"})
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "echo: hi")

	// The working directory is the workspace.
	res = call(reg, ws, "test__write_note", map[string]any{"path": "note.txt", "text": "noted"})
	assert.Assert(t, res.Success, res.Output)
	b, err := os.ReadFile(filepath.Join(ws.Dir(), "note.txt"))
	assert.NilError(t, err)
	assert.Equal(t, string(b), "noted")

	res = call(reg, ws, "test__fail", map[string]any{})
	assert.Equal(t, res.Error.Code, tools.CodeExecutionError)
	assert.Check(t, is.Contains(res.Output, "the backend said no"))

	// The schema the server declared is enforced before the call.
	res = call(reg, ws, "test__echo", map[string]any{"text": 5})
	assert.Equal(t, res.Error.Code, tools.CodeInvalidArgument, res.Output)

	res = call(reg, ws, "test__env", map[string]any{"name": "GREETING"})
	assert.Equal(t, res.Output, "GREETING=hello")
	res = call(reg, ws, "test__env", map[string]any{"name": "OPENAI_API_KEY"})
	assert.Equal(t, res.Output, "OPENAI_API_KEY=", "a secret reached the server")

	res = call(reg, ws, "test__read_data", map[string]any{})
	assert.Equal(t, res.Output, "the data")
}

func TestAServerThatFailsToStartIsNamedWithItsStderr(t *testing.T) {
	ws := workspace(t, sandbox.None())
	start := time.Now()
	_, err := Start(context.Background(), ws, Options{Name: "db", Argv: []string{serverBin, "--fail-start"}})
	assert.ErrorContains(t, err, "mcp server db: ")
	assert.ErrorContains(t, err, "cannot open the database: no such file")
	assert.ErrorContains(t, err, "exit code 2")
	assert.Check(t, time.Since(start) < 10*time.Second, "a dead server must not wait for the start timeout")

	_, err = Start(context.Background(), ws, Options{Name: "ghost", Argv: []string{"no-such-mcp-server"}})
	assert.ErrorContains(t, err, "mcp server ghost: ")
	assert.ErrorContains(t, err, "no-such-mcp-server")

	_, err = Start(context.Background(), ws, Options{Name: "mute", Argv: []string{"sleep", "30"}, StartTimeout: 300 * time.Millisecond})
	assert.ErrorContains(t, err, "mcp server mute: handshake: no answer in time")
}

// TestNoSurvivors performs what a hostile server would: leave a process behind, even in
// a session of its own. Close must leave nothing running.
func TestNoSurvivors(t *testing.T) {
	cases := []struct {
		name   string
		w      tools.CommandWrapper
		detach bool
	}{{"none", sandbox.None(), false}}
	if w, _, err := sandbox.Probe(context.Background(), sandbox.ModeBwrap); err == nil {
		cases = append(cases, struct {
			name   string
			w      tools.CommandWrapper
			detach bool
		}{"bwrap", w, true})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace(t, tc.w)
			s, reg := start(t, ws)
			token := fmt.Sprintf("runner-mcp-survivor-%d-%s", os.Getpid(), tc.name)
			res := call(reg, ws, "test__spawn", map[string]any{"token": token, "detach": tc.detach})
			assert.Assert(t, res.Success, res.Output)
			assert.Assert(t, len(processesWith(token)) > 0, "the spawned process is not running")
			s.Close()
			deadline := time.Now().Add(3 * time.Second)
			for len(processesWith(token)) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("processes survived the server: %v", processesWith(token))
				}
				time.Sleep(20 * time.Millisecond)
			}
			res = call(reg, ws, "test__echo", map[string]any{"text": "hi"})
			assert.Check(t, !res.Success, "a call after Close must fail, not hang")
		})
	}
}

func TestCancelStopsTheServer(t *testing.T) {
	ws := workspace(t, sandbox.None())
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, ws, Options{Name: "test", Argv: []string{serverBin}})
	assert.NilError(t, err)
	defer s.Close()
	cancel()
	select {
	case <-s.proc.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the server outlived its context")
	}
}

// TestConfinedServer: under bwrap the server reads its own directory (bound read-only),
// writes in the workspace and nowhere else.
func TestConfinedServer(t *testing.T) {
	w, _, err := sandbox.Probe(context.Background(), sandbox.ModeBwrap)
	if err != nil {
		t.Skipf("bwrap does not work here: %v", err)
	}
	ws := workspace(t, w)
	_, reg := start(t, ws)
	res := call(reg, ws, "test__write_note", map[string]any{"path": "in.txt", "text": "ok"})
	assert.Assert(t, res.Success, res.Output)
	outside, err := os.MkdirTemp(".", "outside-") // not under /tmp, which is private in the sandbox
	assert.NilError(t, err)
	defer func() { _ = os.RemoveAll(outside) }()
	abs, _ := filepath.Abs(outside)
	res = call(reg, ws, "test__write_note", map[string]any{"path": filepath.Join(abs, "x"), "text": "escaped"})
	assert.Check(t, !res.Success, res.Output)
	_, err = os.Stat(filepath.Join(abs, "x"))
	assert.Check(t, os.IsNotExist(err))
	res = call(reg, ws, "test__write_note", map[string]any{"path": serverBin, "text": "replaced"})
	assert.Check(t, !res.Success, "the server's own directory must be read-only: %s", res.Output)
}

// processesWith lists the pids whose command line contains token.
func processesWith(token string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), token) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if s := string(stat); strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
			continue // dead, waiting to be reaped
		}
		out = append(out, e.Name())
	}
	return out
}

func TestOutputIsCapped(t *testing.T) {
	ws := workspace(t, sandbox.None())
	_, reg := start(t, ws)
	res := call(reg, ws, "test__echo", map[string]any{"text": strings.Repeat("x", 3<<20)})
	assert.Assert(t, res.Success)
	assert.Check(t, len(res.Output) < 1<<20+100, "kept %d bytes", len(res.Output))
	assert.Check(t, is.Contains(res.Output, "bytes left out"))
}
