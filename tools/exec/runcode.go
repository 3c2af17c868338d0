package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrunner/runner/tools"
)

// interpreters maps run_code's languages to a program and a script file name.
var interpreters = map[string]struct{ program, file string }{
	"python": {"python3", "main.py"},
	"bash":   {"bash", "main.sh"},
}

// scriptFD is where the script reaches the interpreter: /dev/fd/3. The file itself lives
// in a temp directory outside the workspace, which a sandbox's private /tmp would hide;
// an inherited descriptor crosses any sandbox.
const scriptFD = "/dev/fd/3"

type runCode struct{}

func (runCode) Spec() tools.Spec {
	return tools.Spec{
		Name: "run_code",
		Description: "Run a Python or Bash snippet in the workspace directory and return its output (stdout and stderr interleaved) and exit code. " +
			"The code is written to a temporary file outside the workspace, so it leaves nothing behind; use it for quick computations, " +
			"checks and one-off scripts. Python can import modules from the workspace root. Same limits as run_in_terminal.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"language":        tools.String("The language of the code.").WithEnum("python", "bash"),
			"code":            tools.String("The program text.").WithMinLength(1),
			"args":            tools.Array("Command-line arguments passed to the program (sys.argv[1:] or $1...).", tools.String("")),
			"env":             tools.StringMap("Extra environment variables for the program."),
			"timeout_seconds": timeoutSchema(runCodeTimeoutDefault),
		}, "language", "code"),
		Risk: tools.RiskDangerous,
	}
}

func (runCode) Validate(args tools.Args, _ *tools.Workspace) *tools.Error {
	if _, ok := interpreters[args.String("language")]; !ok {
		return tools.Errorf(tools.CodeInvalidArgument, "Use \"python\" or \"bash\".", "Unsupported language '%s'", args.String("language"))
	}
	if strings.TrimSpace(args.String("code")) == "" {
		return tools.Errorf(tools.CodeInvalidArgument, "Pass the program text in code.", "code is empty")
	}
	for k, v := range args.StringMap("env") {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return tools.Errorf(tools.CodeInvalidArgument, "Environment names must be non-empty without '=' or NUL; values must not contain NUL.", "Invalid environment entry %q", k)
		}
	}
	if err := CheckEnv(args.StringMap("env")); err != nil {
		return tools.Errorf(tools.CodeInvalidArgument, "Remove the variable from env; set library paths inside the code if you must.", "env: %v", err)
	}
	for _, a := range args.Strings("args") {
		if strings.ContainsRune(a, 0) {
			return tools.Errorf(tools.CodeInvalidArgument, "Remove the NUL byte from the argument.", "An argument contains a NUL byte")
		}
	}
	return nil
}

func (runCode) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	lang := args.String("language")
	interp := interpreters[lang]
	env := WorkspaceEnv(ws, codeEnv(lang, ws, args.StringMap("env")))
	program, err := lookPath(interp.program, env)
	if r, ok := ws.Sandbox.(Remote); ok && r.Remote() {
		program, err = interp.program, nil // found on the container's PATH, not the host's
	}
	if err != nil {
		return tools.Failf(tools.CodeExecutionError, "Install it, or set PATH in the task's env.", "%s is not installed: %v", interp.program, err)
	}

	dir, err := os.MkdirTemp("", "runner-code-")
	if err != nil {
		return tools.Failf(tools.CodeExecutionError, "", "Could not create a temporary directory for the code: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }() // best effort: a leftover temp file harms nothing
	path := filepath.Join(dir, interp.file)
	if err := os.WriteFile(path, []byte(args.String("code")), 0o600); err != nil {
		return tools.Failf(tools.CodeExecutionError, "", "Could not write the code to a temporary file: %v", err)
	}
	script, err := os.Open(path)
	if err != nil {
		return tools.Failf(tools.CodeExecutionError, "", "Could not open the code's temporary file: %v", err)
	}
	defer func() { _ = script.Close() }() // read only: Close loses no data

	timeout := timeoutArg(args, runCodeTimeoutDefault)
	argv := append([]string{interp.program, scriptFD}, args.Strings("args")...)
	o, err := run(ctx, ws, spec{
		path:    program,
		args:    argv,
		dir:     ws.Dir(),
		env:     env,
		timeout: timeout,
		extra:   []*os.File{script},
	})
	if err != nil {
		return startFailure(err)
	}
	return toResult(o, timeout).WithMeta("language", lang)
}

// codeEnv is the call's environment for run_code: for Python, unbuffered output (so that
// stdout and stderr interleave as produced), no .pyc files, and the workspace on the import
// path, unless the task's env says otherwise; then the model's env, which may override them.
func codeEnv(lang string, ws *tools.Workspace, callEnv map[string]string) map[string]string {
	env := map[string]string{}
	if lang == "python" {
		for _, k := range []string{"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"} {
			if _, set := ws.Env[k]; !set {
				env[k] = "1"
			}
		}
		pythonPath := ws.Dir()
		if extra := ws.Env["PYTHONPATH"]; extra != "" {
			pythonPath += string(os.PathListSeparator) + extra
		}
		env["PYTHONPATH"] = pythonPath
	}
	for k, v := range callEnv {
		env[k] = v
	}
	return env
}

// RequiresApproval is false: the tool is dangerous as a whole (its Risk).
func (runCode) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }
