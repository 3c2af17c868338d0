// Package command turns tools that a task file defines (tools_defined) into tools.Tool
// values: each call runs the tool's shell command through tools/exec.RunShellInput, so
// it gets run_in_terminal's sandbox, limits, timeout and output caps.
//
// The command receives the call's arguments as a JSON object on stdin and in TOOL_ARGS,
// and each top-level scalar argument as TOOL_ARG_<NAME> (upper-cased, other characters
// than letters and digits turned into _), and the task file's directory as TASK_DIR, of
// which it sees only the files it declares. It starts with an environment that loads no
// code from the workspace (tools/exec.NoWorkspaceCode). Its stdout is the result; a
// non-zero exit is an error result carrying its output (stdout and stderr).
package command

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec"
)

// Def is a tool as a task file defines it.
type Def struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments; its root must be an object.
	Parameters map[string]any
	// Command is a shell command line, run with sh -c at the workspace root.
	Command string
	// Risk is what the approval policy sees; "" means dangerous, as for run_in_terminal.
	Risk tools.Risk
	// Timeout bounds each call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Dir, when set, is the task file's directory, which the command finds in TASK_DIR,
	// so its scripts can live next to the task file, out of the agent's reach.
	Dir string
	// Files are the absolute paths (files or directories, under Dir) the command may
	// read: the sandbox shows it these, read-only, and nothing else of Dir (never the
	// task file, its verify files or its reference).
	Files []string
}

// DefaultTimeout bounds a call when the definition sets none (run_in_terminal's default).
const DefaultTimeout = 30 * time.Second

// New checks a definition and returns its tool.
func New(d Def) (tools.Tool, error) {
	if !tools.ValidName(d.Name) {
		return nil, fmt.Errorf("tool name %q: want letters, digits, _ and -, at most 64", d.Name)
	}
	if strings.TrimSpace(d.Command) == "" {
		return nil, fmt.Errorf("tool %s: empty command", d.Name)
	}
	spec, err := tools.DefinedSpec(d.Name, d.Description, d.Parameters, d.Risk)
	if err != nil {
		return nil, err
	}
	if d.Timeout <= 0 {
		d.Timeout = DefaultTimeout
	}
	d.Risk = spec.Risk
	return &tool{def: d, spec: spec}, nil
}

type tool struct {
	def  Def
	spec tools.Spec
}

func (t *tool) Spec() tools.Spec { return t.spec }

// Validate has nothing to add: the registry has checked the arguments against the schema.
func (t *tool) Validate(tools.Args, *tools.Workspace) *tools.Error { return nil }

// RequiresApproval is false: the tool's risk (dangerous by default) is what the policy
// judges, as for run_in_terminal.
func (t *tool) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// Execute runs the command with the arguments on stdin and in the environment.
func (t *tool) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	payload, err := json.Marshal(map[string]any(args))
	if err != nil {
		return tools.Failf(tools.CodeInvalidArgument, "", "arguments do not encode as JSON: %v", err)
	}
	env := Env(args, payload)
	// The tool's view: its declared files read-only, and an environment that loads no
	// code from the workspace, where the agent could plant some (a py_compile.py that
	// python -m would import in place of the real one).
	ws = ws.View(t.def.Files...)
	ws.NoWorkspaceCode = true
	if t.def.Dir != "" {
		env["TASK_DIR"] = t.def.Dir
	}
	res, err := exec.RunShellInput(ctx, ws, t.def.Command, t.def.Timeout, payload, env)
	if err != nil {
		return tools.Failf(tools.CodeExecutionError, "The tool is broken; try another way.", "Could not start %s: %v", t.def.Name, err)
	}
	meta := func(r tools.Result) tools.Result {
		return r.WithMeta("exit_code", res.ExitCode).WithMeta("duration_ms", res.Duration.Milliseconds())
	}
	switch {
	case res.Canceled:
		return meta(tools.Failf(tools.CodeExecutionError, "The run is stopping; do not retry.", "%s was cancelled", t.def.Name))
	case res.TimedOut:
		r := tools.Failf(tools.CodeTimeout, "Call it with less to do, or try another way.", "%s timed out after %s", t.def.Name, t.def.Timeout)
		r.Output += "\n" + res.Output
		return meta(r)
	case res.ExitCode != 0:
		why := "exited with code " + strconv.Itoa(res.ExitCode)
		if res.Signal != "" {
			why = "was killed by " + res.Signal
		}
		r := tools.Failf(tools.CodeExecutionError, "Read the output, fix the arguments and try again.", "%s %s", t.def.Name, why)
		if out := strings.TrimRight(res.Output, "\n"); out != "" {
			r.Output += "\n" + out
		}
		return meta(r)
	}
	return meta(tools.OK(res.Stdout))
}

// MaxEnvValue is the largest value put in the environment: the kernel refuses to start a
// program with a single variable over 128 KiB, so larger values are on stdin only.
const MaxEnvValue = 64 << 10

// Env returns the call's variables: TOOL_ARGS (the arguments as JSON) and TOOL_ARG_<NAME>
// for each string, number or boolean argument. Objects and lists are only in TOOL_ARGS;
// values over MaxEnvValue, or holding NUL, are only on stdin.
func Env(args tools.Args, payload []byte) map[string]string {
	env := map[string]string{}
	if len(payload) <= MaxEnvValue {
		env["TOOL_ARGS"] = string(payload)
	}
	for k, v := range args {
		name := "TOOL_ARG_" + envName(k)
		switch x := v.(type) {
		case string:
			if len(x) <= MaxEnvValue && !strings.ContainsRune(x, 0) { // exec refuses NUL in the environment
				env[name] = x
			}
		case bool:
			env[name] = strconv.FormatBool(x)
		case float64:
			env[name] = strconv.FormatFloat(x, 'f', -1, 64)
		}
	}
	return env
}

// envName upper-cases a parameter name and replaces what a shell variable cannot hold.
func envName(param string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, param)
}
