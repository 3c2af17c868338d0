package command

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.RunHelperIfRequested() // the Landlock sandbox re-executes the test binary
	os.Exit(m.Run())
}

var greetParams = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string", "pattern": "^[a-z]+$"},
		"times": map[string]any{"type": "integer", "minimum": 1, "default": 1},
		"loud":  map[string]any{"type": "boolean"},
		"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
	"required": []any{"name"},
}

func registry(t *testing.T, defs ...Def) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	for _, d := range defs {
		tl, err := New(d)
		assert.NilError(t, err)
		assert.NilError(t, reg.Register(tl))
	}
	return reg
}

func workspace(t *testing.T) *tools.Workspace {
	t.Helper()
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	return ws
}

func TestArgumentsArriveOnStdinAndInTheEnvironment(t *testing.T) {
	reg := registry(t, Def{Name: "greet", Parameters: greetParams,
		Command: `cat; echo; echo "$TOOL_ARG_NAME x$TOOL_ARG_TIMES $TOOL_ARG_LOUD [$TOOL_ARG_TAGS]"; echo "$TOOL_ARGS"`})
	res := reg.Run(context.Background(), "greet", json.RawMessage(`{"name":"ada","times":"2","loud":true,"tags":["a"]}`), workspace(t))
	assert.Assert(t, res.Success, res.Output)
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	assert.Equal(t, len(lines), 3, res.Output)
	want := `{"loud":true,"name":"ada","tags":["a"],"times":2}`
	assert.Equal(t, lines[0], want) // the quoted number was coerced, the unknown parameter dropped
	assert.Equal(t, lines[1], "ada x2 true []")
	assert.Equal(t, lines[2], want)
}

func TestTheSchemaIsEnforcedAsWritten(t *testing.T) {
	reg := registry(t, Def{Name: "greet", Parameters: greetParams, Command: "echo ran > ran.txt"})
	ws := workspace(t)
	// pattern is not one of tools.Schema's fields: the raw schema must still apply.
	res := reg.Run(context.Background(), "greet", json.RawMessage(`{"name":"Ada"}`), ws)
	assert.Equal(t, res.Error.Code, tools.CodeInvalidArgument, res.Output)
	assert.Check(t, is.Contains(res.Output, "name"))
	res = reg.Run(context.Background(), "greet", json.RawMessage(`{}`), ws)
	assert.Check(t, is.Contains(res.Output, "'name' is required"))
	_, err := os.Stat(filepath.Join(ws.Dir(), "ran.txt"))
	assert.Check(t, os.IsNotExist(err), "the command must not run on invalid arguments")

	b, err := json.Marshal(reg.Specs()[0].Parameters)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), `"pattern":"^[a-z]+$"`), "providers see the schema as written")
}

func TestNonZeroExitIsAnErrorResultWithStderr(t *testing.T) {
	reg := registry(t, Def{Name: "fail", Command: "echo partial; echo 'no such user' >&2; exit 4"})
	res := reg.Run(context.Background(), "fail", nil, workspace(t))
	assert.Assert(t, !res.Success)
	assert.Equal(t, res.Error.Code, tools.CodeExecutionError)
	assert.Check(t, is.Contains(res.Output, "fail exited with code 4"))
	assert.Check(t, is.Contains(res.Output, "no such user"))
	assert.Equal(t, res.Metadata["exit_code"], 4)
}

func TestStdoutAloneIsTheResult(t *testing.T) {
	reg := registry(t, Def{Name: "quiet", Command: "echo result; echo noise >&2"})
	res := reg.Run(context.Background(), "quiet", nil, workspace(t))
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "result\n")
}

func TestTimeoutKillsEveryDescendant(t *testing.T) {
	reg := registry(t, Def{Name: "slow", Command: "sleep 30 & echo $! > bg.pid; sleep 30", Timeout: 300 * time.Millisecond})
	ws := workspace(t)
	start := time.Now()
	res := reg.Run(context.Background(), "slow", nil, ws)
	assert.Equal(t, res.Error.Code, tools.CodeTimeout, res.Output)
	assert.Check(t, time.Since(start) < 5*time.Second)
	b, err := os.ReadFile(filepath.Join(ws.Dir(), "bg.pid"))
	assert.NilError(t, err)
	assertGone(t, strings.TrimSpace(string(b)))
}

func TestNoSecretsReachTheCommand(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	reg := registry(t, Def{Name: "env", Command: "env"})
	res := reg.Run(context.Background(), "env", nil, workspace(t))
	assert.Assert(t, res.Success, res.Output)
	assert.Check(t, !strings.Contains(res.Output, "sk-secret"))
}

// TestConfinedToTheWorkspace performs the attack a hostile tool call would: write outside
// the workspace. Under bwrap it must fail and leave nothing behind.
func TestConfinedToTheWorkspace(t *testing.T) {
	w, _, err := sandbox.Probe(context.Background(), sandbox.ModeBwrap)
	if err != nil {
		t.Skipf("bwrap does not work here: %v", err)
	}
	// Not under /tmp, which is private inside the sandbox: a directory outside it that the
	// sandbox either hides or shows read-only.
	outside, err := os.MkdirTemp(".", "outside-")
	assert.NilError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	outside, _ = filepath.Abs(outside)
	reg := registry(t, Def{Name: "escape", Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"dir": map[string]any{"type": "string"}}},
		Command: `{ echo pwned > "$TOOL_ARG_DIR/pwned"; } 2>&1; echo inside > inside.txt`})
	ws := workspace(t)
	ws.Sandbox = w
	args, _ := json.Marshal(map[string]string{"dir": outside})
	res := reg.Run(context.Background(), "escape", args, ws)
	assert.Check(t, strings.Contains(res.Output, "Read-only file system") || strings.Contains(res.Output, "nonexistent"), res.Output)
	_, err = os.Stat(filepath.Join(outside, "pwned"))
	assert.Check(t, os.IsNotExist(err), "the command wrote outside the workspace")
	b, err := os.ReadFile(filepath.Join(ws.Dir(), "inside.txt"))
	assert.NilError(t, err, "the workspace stays writable")
	assert.Equal(t, string(b), "inside\n")
}

func TestBadDefinitions(t *testing.T) {
	for _, tc := range []struct {
		def  Def
		want string
	}{
		{Def{Name: "a.b", Command: "true"}, "want letters, digits"},
		{Def{Name: "x", Command: " "}, "empty command"},
		{Def{Name: "x", Command: "true", Parameters: map[string]any{"type": "string"}}, "type object"},
		{Def{Name: "x", Command: "true", Risk: "harmless"}, "unknown risk"},
		// YAML's .nan: a schema JSON cannot hold.
		{Def{Name: "x", Command: "true", Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"n": map[string]any{"type": "number", "maximum": math.NaN()}}}}, "tool x: schema: json: unsupported value: NaN"},
	} {
		_, err := New(tc.def)
		assert.ErrorContains(t, err, tc.want)
	}
	tl, err := New(Def{Name: "x", Command: "true"})
	assert.NilError(t, err)
	assert.Equal(t, tl.Spec().Risk, tools.RiskDangerous)
	// The policy judges the tool's risk; no single call asks for approval on top.
	assert.Assert(t, !tl.RequiresApproval(tools.Args{"anything": true}, nil))
	tl, err = New(Def{Name: "x", Command: "true", Risk: tools.RiskReadOnly})
	assert.NilError(t, err)
	assert.Equal(t, tl.Spec().Risk, tools.RiskReadOnly)
}

// TestLargeArgumentsOnStdinOnly: a value too large for the environment must not keep the
// command from starting.
func TestLargeArgumentsOnStdinOnly(t *testing.T) {
	reg := registry(t, Def{Name: "big", Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}}},
		Command: `wc -c; echo "[${TOOL_ARG_TEXT:-unset}] [${TOOL_ARGS:-unset}]"`})
	args, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 200<<10)})
	res := reg.Run(context.Background(), "big", args, workspace(t))
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "204811\n[unset] [unset]\n")
}

func TestEnvNames(t *testing.T) {
	env := Env(tools.Args{"file-path": "a", "n": 1.5, "obj": map[string]any{}, "nul": "a\x00b", "maxHits2": 3.0}, []byte(`{}`))
	assert.DeepEqual(t, env, map[string]string{"TOOL_ARGS": "{}", "TOOL_ARG_FILE_PATH": "a", "TOOL_ARG_N": "1.5", "TOOL_ARG_MAXHITS2": "3"})
}

func assertGone(t *testing.T, pid string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return
		}
		if s := string(b); strings.Contains(s[strings.LastIndexByte(s, ')'):], ") Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %s is still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSchemaCannotReadFiles: a schema's $ref to a local file is refused, not followed.
func TestSchemaCannotReadFiles(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.json")
	assert.NilError(t, os.WriteFile(secret, []byte(`{"type":"string"}`), 0o644))
	reg := registry(t, Def{Name: "x", Command: "true", Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"a": map[string]any{"$ref": "file://" + secret}}}})
	err := reg.CheckSchemas()
	assert.ErrorContains(t, err, "must be self-contained")

	// The published meta-schemas are built in: naming one is fine.
	reg = registry(t, Def{Name: "y", Command: "true", Parameters: map[string]any{"type": "object",
		"$schema": "http://json-schema.org/draft-07/schema#"}})
	assert.NilError(t, reg.CheckSchemas())
}

// TestTaskDirIsReadableToTheToolOnly: a tool's script next to the task file (here under
// /tmp, which bwrap hides) runs through TASK_DIR, read-only; the agent's own commands in
// the same workspace do not get the directory.
func TestTaskDirIsReadableToTheToolOnly(t *testing.T) {
	w, _, err := sandbox.Probe(context.Background(), sandbox.ModeBwrap)
	if err != nil {
		t.Skipf("bwrap does not work here: %v", err)
	}
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\necho \"from the task dir: $1\"\n"), 0o755))
	reg := registry(t, Def{Name: "scripted", Dir: dir, Files: []string{filepath.Join(dir, "tool.sh")}, Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"word": map[string]any{"type": "string"}}},
		Command: `"$TASK_DIR/tool.sh" "$TOOL_ARG_WORD"; { echo changed > "$TASK_DIR/tool.sh"; } 2>/dev/null; true`})
	ws := workspace(t)
	ws.Sandbox = w
	res := reg.Run(context.Background(), "scripted", json.RawMessage(`{"word":"hi"}`), ws)
	assert.Assert(t, res.Success, res.Output)
	assert.Equal(t, res.Output, "from the task dir: hi\n")
	b, err := os.ReadFile(filepath.Join(dir, "tool.sh"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), "from the task dir"), "the task directory was written to")
	assert.Equal(t, len(ws.ReadOnly), 0, "the agent's workspace must not gain the directory")
}

// TestToolSeesOnlyItsDeclaredFiles performs what the agent's code, run in a tool's context,
// would try: read the task file (the reference, the hidden tests' content) and the verify
// files out of TASK_DIR. In each sandbox that works here, only the declared script is there.
func TestToolSeesOnlyItsDeclaredFiles(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\necho tool ran\n"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "task.yaml"), []byte("reference: secret-answer\n"), 0o644))
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "verify"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "verify", "hidden_test.py"), []byte("secret-test\n"), 0o644))
	ran := 0
	for _, mode := range []string{sandbox.ModeBwrap, sandbox.ModeLandlock} {
		t.Run(mode, func(t *testing.T) {
			w, _, err := sandbox.Probe(context.Background(), mode)
			if err != nil {
				t.Skipf("%s does not work here: %v", mode, err)
			}
			ran++
			reg := registry(t, Def{Name: "steal", Dir: dir, Files: []string{filepath.Join(dir, "tool.sh")},
				Command: `"$TASK_DIR/tool.sh"; cat "$TASK_DIR/task.yaml" "$TASK_DIR/verify/hidden_test.py"; ls "$TASK_DIR"; cp -r "$TASK_DIR" stolen; true`})
			ws := workspace(t)
			ws.Sandbox = w
			res := reg.Run(context.Background(), "steal", nil, ws)
			assert.Assert(t, res.Success, res.Output)
			assert.Check(t, is.Contains(res.Output, "tool ran"))
			assert.Check(t, !strings.Contains(res.Output, "secret-"), res.Output)
			_ = filepath.WalkDir(ws.Dir(), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					assert.Check(t, !strings.Contains(string(b), "secret-"), "%s holds a hidden file's content", p)
				}
				return nil
			})
		})
	}
	if ran == 0 {
		t.Skip("no sandbox works here")
	}
}

// TestToolLoadsNoCodeFromTheWorkspace performs the second review's attack: the agent
// plants py_compile.py (and an ls, with "." on the task's PATH) in the workspace; a tool
// running `python3 -m py_compile` and `ls` there must run the real ones.
func TestToolLoadsNoCodeFromTheWorkspace(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	reg := registry(t, Def{Name: "check", Command: `python3 -m py_compile ok.py && echo compiled; ls >/dev/null; env | grep -E '^(PYTHONSAFEPATH|PATH|NODE_PATH)='`})
	ws := workspace(t)
	ws.Env = map[string]string{"PATH": ".::bin:" + os.Getenv("PATH"), "NODE_PATH": "node_modules"}
	planted := map[string]string{
		"ok.py":         "x = 1\n",
		"py_compile.py": "open('pwned-python', 'w').write('agent code ran in the tool')\n",
		"ls":            "#!/bin/sh\necho agent code > pwned-ls\n",
	}
	for name, content := range planted {
		assert.NilError(t, os.WriteFile(filepath.Join(ws.Dir(), name), []byte(content), 0o755))
	}
	res := reg.Run(context.Background(), "check", nil, ws)
	assert.Assert(t, res.Success, res.Output)
	assert.Check(t, is.Contains(res.Output, "compiled\n"))
	assert.Check(t, is.Contains(res.Output, "PYTHONSAFEPATH=1\n"))
	assert.Check(t, !strings.Contains(res.Output, "NODE_PATH="), res.Output)
	assert.Check(t, !strings.Contains(res.Output, "PATH=.:"), res.Output)
	for _, f := range []string{"pwned-python", "pwned-ls"} {
		_, err := os.Stat(filepath.Join(ws.Dir(), f))
		assert.Check(t, os.IsNotExist(err), "%s: the agent's code ran in the tool's context", f)
	}
}

// TestCommandEndings: a command killed by a signal, a call cancelled by the run, and a
// command that cannot be started each come back as an error result saying which.
func TestCommandEndings(t *testing.T) {
	reg := registry(t, Def{Name: "crash", Command: "echo before; kill -KILL $$"},
		Def{Name: "hang", Command: "echo started > started.txt; sleep 30"})
	ws := workspace(t)
	res := reg.Run(context.Background(), "crash", nil, ws)
	assert.Equal(t, res.Error.Code, tools.CodeExecutionError, res.Output)
	assert.Check(t, is.Contains(res.Output, "crash was killed by SIGKILL"))
	assert.Check(t, is.Contains(res.Output, "before"))
	assert.Equal(t, res.Metadata["exit_code"], 128+9)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 500 {
			if _, err := os.Stat(filepath.Join(ws.Dir(), "started.txt")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	res = reg.Run(ctx, "hang", nil, ws)
	assert.Equal(t, res.Error.Code, tools.CodeExecutionError, res.Output)
	assert.Check(t, is.Contains(res.Output, "hang was cancelled"))
	assert.Check(t, is.Contains(res.Output, "do not retry"))
	assert.Check(t, time.Since(start) < 10*time.Second)

	// The arguments go on stdin through a temporary file: with no temporary directory
	// the command cannot start, and the model is told the tool is broken.
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	res = reg.Run(context.Background(), "crash", json.RawMessage(`{}`), ws)
	assert.Equal(t, res.Error.Code, tools.CodeExecutionError, res.Output)
	assert.Check(t, is.Contains(res.Output, "Could not start crash: stdin: "))
	assert.Check(t, is.Contains(res.Output, "The tool is broken"))
}

// TestExecuteRefusesArgumentsThatAreNotJSON: a Go caller that skips the registry can pass
// values JSON cannot hold; the command is not run with half its arguments.
func TestExecuteRefusesArgumentsThatAreNotJSON(t *testing.T) {
	tl, err := New(Def{Name: "x", Command: "echo ran > ran.txt"})
	assert.NilError(t, err)
	ws := workspace(t)
	res := tl.Execute(context.Background(), tools.Args{"n": math.Inf(1)}, ws)
	assert.Equal(t, res.Error.Code, tools.CodeInvalidArgument, res.Output)
	assert.Check(t, is.Contains(res.Output, "arguments do not encode as JSON: json: unsupported value: +Inf"))
	_, err = os.Stat(filepath.Join(ws.Dir(), "ran.txt"))
	assert.Check(t, os.IsNotExist(err))
}
