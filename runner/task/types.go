// Package task is the task file format: the types a YAML task file decodes into, strict
// decoding that reports every problem with file:line:column and field path, validation,
// and the published JSON Schema.
package task

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools"
)

// Position is where something was written in a task file.
type Position struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// Task is one scenario, decoded from a task file. The json keys of its fields (and of the
// types they hold) are the task file's keys, in the order of the documentation, and their
// jsonschema tags describe them: the loader's field tables and task.schema.json (generated
// by runner/schemas) are read from here. Fields tagged jsonschema:"-" are not in the file.
type Task struct {
	// Path is the task file's path as given; Dir is its directory (for workspace.copy).
	Path string `json:"path" jsonschema:"-"`
	Dir  string `json:"-"`

	Name         string              `json:"name" jsonschema:"minLength=1,pattern=^[^/\\\\\\x00-\\x1f\\x7f]+$" jsonschema_description:"The scenario's name, unique in a suite. Default: the file name without .yaml or .yml."`
	Description  string              `json:"description,omitempty" jsonschema_description:"What the scenario checks, for people."`
	Tags         []string            `json:"tags,omitempty" jsonschema_description:"Labels for filtering and reports." jsonschema_extras:"use=texts"`
	Model        string              `json:"model,omitempty" jsonschema:"minLength=1" jsonschema_description:"The task's default model, PROVIDER:MODEL (ollama:qwen3:4b, openai:gpt-4o-mini) or oracle; --model overrides it."`
	Agent        Agent               `json:"agent" jsonschema_description:"What acts in the scenario: a kind's name (runner, the built-in loop, is the default; runner agents lists the kinds) or {command: \"...\"}, any program run in the workspace and sandbox, talking to runner's model endpoint (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, a per-run token as their API keys). --agent overrides it."`
	ModelOptions result.ModelOptions `json:"model_options" jsonschema_description:"Sampling options passed to the model; each provider maps what it supports."`
	// ToolCallParser reads tool calls the model writes as text (one of
	// LoadOptions.Parsers, runner/model/textcall's modes); "" leaves it to the
	// provider's default.
	ToolCallParser string `json:"tool_call_parser,omitempty" jsonschema_description:"Read tool calls the model writes as text. Default: auto for ollama, native otherwise; --tool-call-parser overrides." jsonschema_extras:"use=parser"`
	System         string `json:"system,omitempty" jsonschema_description:"The system prompt. Default: one that tells the model to finish with task_complete."`
	Prompt         string `json:"prompt" jsonschema:"required,minLength=1" jsonschema_description:"The user prompt: the task. Required." jsonschema_extras:"use=text"`
	// Tools are canonical tool names, task_complete always among them; nil (no tools:
	// key) means every registered tool.
	Tools []string `json:"tools" jsonschema_description:"The tools the agent may call (names or aliases). task_complete is always added. Default: every tool." jsonschema_extras:"use=toolNames"`
	// ToolsDefined are the tools the task file brings (tools_defined).
	ToolsDefined []ToolDef `json:"tools_defined,omitempty" jsonschema_description:"Tools the task brings: each runs a shell command in the sandbox, with the call's arguments as JSON on stdin and in TOOL_ARGS (scalars also as TOOL_ARG_<NAME>); stdout is the result, a non-zero exit an error result. List them in tools: like any tool."`
	// MCP are the MCP servers started for the scenario (mcp:).
	MCP          []MCPServer       `json:"mcp,omitempty" jsonschema_description:"Stdio MCP servers started in the sandbox for the scenario, the workspace as working directory; their tools are offered as SERVER__TOOL (list them in tools: by name or as SERVER__*), and the servers are stopped, with everything they started, when the agent is done."`
	Approval     Approval          `json:"approval" jsonschema_description:"The approval policy: a mode, or a block with mode, default and rules. --approval overrides it. Default: auto."`
	CommandRules []CommandRule     `json:"command_rules,omitempty" jsonschema_description:"Allow or deny patterns for commands, checked after the built-in deny list."`
	MaxSteps     int               `json:"max_steps" jsonschema:"minimum=1" jsonschema_description:"The most model responses before the run stops with max_steps. Default: 30."`
	Timeout      time.Duration     `json:"timeout" jsonschema_description:"Time limit for the whole scenario. Default: 10m."`
	Env          map[string]string `json:"env,omitempty" jsonschema_description:"Environment variables given to commands (setup, tools and command assertions)." jsonschema_extras:"use=env"`
	// Secrets name variables whose values are secret: taken from env: or, when it does not
	// set them, from runner's environment, and given to commands like env:. Loading a task
	// touches nothing outside it: whoever runs it (runner/session) registers
	// SecretValues with the scrubber, so that no output shows them.
	Secrets []string `json:"secrets,omitempty" jsonschema:"uniqueItems=true" jsonschema_description:"Variables whose values are secret: taken from env: or, when it does not set them, from runner's environment; given to commands like env: and replaced by [REDACTED] in every output."`
	// Network lets commands reach the network inside the sandbox.
	Network bool `json:"network,omitempty" jsonschema_description:"Let commands reach the network inside the sandbox. Default: false."`
	// Sandbox is one of LoadOptions.SandboxModes (tools/exec/sandbox's Modes).
	Sandbox string       `json:"sandbox" jsonschema_description:"How commands are confined. Default: auto." jsonschema_extras:"use=sandbox"`
	Limits  tools.Limits `json:"limits" jsonschema_description:"Resource limits for each command; 0 or omitted takes the sandbox's default."`
	// Environment, when set, runs commands in a container (see Environment).
	Environment *Environment  `json:"environment,omitempty" jsonschema_description:"Run commands in a container (Docker or Podman CLI) instead of the host sandbox. The workspace is mounted at workdir; verify files are copied to verify_dir after the agent finished."`
	Workspace   WorkspaceSpec `json:"workspace" jsonschema_description:"How the workspace is built before the agent starts."`
	Verify      VerifySpec    `json:"verify" jsonschema_description:"Files copied in only after the agent has finished, so it never sees them (hidden tests)."`
	Assert      []Assertion   `json:"assert" jsonschema_description:"Checks run after the agent has finished; all must hold for the scenario to pass."`
	// Score, when set, gives the scenario a score between 0 and 1.
	Score     *Score `json:"score,omitempty" jsonschema_description:"The scenario's score between 0 and 1: pass_fraction (of the per-test results of command assertions) or {file: PATH}, a number the tests wrote (a workspace path, or absolute inside the environment)."`
	Reference []Call `json:"reference,omitempty" jsonschema_description:"One correct solution as tool calls, played by the oracle model (runner validate --oracle)."`

	// Vars, Matrix and Dataset expand the file into cases, each an ordinary Task with its
	// Case set; they are read before the rest of the file (see readCases).
	Vars    map[string]any `json:"vars,omitempty" jsonschema_description:"Template variables and their default values. A file with vars:, matrix: or dataset: is templated (Go text/template, an unknown variable is an error) in prompt, system, description, env values, workspace.setup, the workspace.files named by workspace.template, and every value under assert: and reference:. --var and --vars set declared variables and win."`
	Matrix  map[string]any `json:"matrix,omitempty" jsonschema_description:"Runs the task once per cell of the cross product of its axes (each a list of values), as GitHub Actions does: exclude: (a list of mappings) drops cells, include: extends the cells it does not contradict or adds its own. Each cell is a scenario named task[axis=value,...]."`
	Dataset string         `json:"dataset,omitempty" jsonschema:"minLength=1" jsonschema_description:"A CSV (header row), JSON Lines, JSON or YAML list of rows beside the task file: the task runs once per row with the row's columns as variables, named task[ID] by an id column, else task[ROW]. Not with matrix:."`

	// KeyLines are the lines of the top-level keys present in the file, so a report can
	// point at the max_steps or timeout a scenario hit.
	KeyLines map[string]int `json:"-"`

	// Case is set when the file declares vars:, a matrix: or a dataset:: which task file
	// and values this scenario is a case of. Name is then "task[label]".
	Case *Case `json:"case,omitempty" jsonschema:"-"`

	// Suite is the suite file (runner.yaml) whose defaults the task inherited, "" for none;
	// Inherited are the keys it took from there.
	Suite     string   `json:"-"`
	Inherited []string `json:"-"`

	// Warnings are problems that do not stop the task (an expired or disabled rule), each
	// formatted as "file:line:column: field: message".
	Warnings []string `json:"warnings,omitempty" jsonschema:"-"`
}

// TaskComplete is the tool that ends a scenario; every task may call it.
const TaskComplete = "task_complete"

// Defaults applied when a task file leaves a key out.
const (
	DefaultMaxSteps = 30
	DefaultTimeout  = 10 * time.Minute
	DefaultSandbox  = "auto"
)

// Approval modes.
const (
	ModeAuto     = "auto"
	ModeReadOnly = "read-only"
	ModeRules    = "rules"
	ModeAsk      = "ask"
)

// ApprovalMode is one row of the registry of approval modes (runner/policy applies them):
// the task file's approval key, --approval, its help and messages and the schema read it.
type ApprovalMode struct {
	Name string
	// Help is the one line the schema and the docs show.
	Help string
}

// ApprovalModes are the approval modes, the default first.
var ApprovalModes = []ApprovalMode{
	{ModeAuto, "every listed tool runs"},
	{ModeReadOnly, "only read-only tools run"},
	{ModeRules, "the rules decide, then default"},
	{ModeAsk, "ask on a terminal, otherwise like rules"},
}

// ApprovalModeNames lists the names of ApprovalModes, in order.
func ApprovalModeNames() []string {
	out := make([]string, len(ApprovalModes))
	for i, m := range ApprovalModes {
		out[i] = m.Name
	}
	return out
}

// ErrUnknownApprovalMode is what CheckApprovalMode returns for a name not in ApprovalModes.
var ErrUnknownApprovalMode = errors.New("unknown approval mode")

// CheckApprovalMode returns nil for a mode in ApprovalModes or "" (the task's), else an
// error wrapping ErrUnknownApprovalMode that lists the modes.
func CheckApprovalMode(mode string) error {
	if mode == "" || slices.Contains(ApprovalModeNames(), mode) {
		return nil
	}
	return fmt.Errorf("%w %q (want %s)", ErrUnknownApprovalMode, mode, orList(ApprovalModeNames()))
}

// orList joins names as "a, b or c", for help and messages.
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ApprovalModeChoices is "auto, read-only, rules or ask", for help and messages.
func ApprovalModeChoices() string { return orList(ApprovalModeNames()) }

// Agent is the agent: key: a kind (runner/agent/kinds) and, for the command kind, the
// command line.
type Agent struct {
	Kind    string `json:"kind,omitempty" jsonschema_description:"The agent kind (runner agents lists them). Default: command when command is set, else runner." jsonschema_extras:"use=agentKind"`
	Command string `json:"command,omitempty" jsonschema:"minLength=1" jsonschema_description:"The agent program's command line, run by sh in the workspace: the prompt on stdin and in RUNNER_PROMPT, the model in RUNNER_MODEL; exit 0 means it finished, anything else that it gave up. A program beside the task file is $TASK_DIR/PATH (sh $TASK_DIR/agent.sh): the agent sees only the files its command names and files: lists."`
	// Files are what the agent may read of the task file's directory (absolute):
	// files: and the $TASK_DIR/PATH its command names. Dir is that directory (TASK_DIR).
	Files []string `json:"files,omitempty" jsonschema_description:"Paths of files or directories beside the task file that the agent may read (under TASK_DIR), besides the $TASK_DIR/PATH its command names. Never the task file or its verify files." jsonschema_extras:"use=texts"`
	Dir   string   `json:"-"`
}

// External reports whether the agent is a program talking to runner's endpoint rather
// than the built-in loop.
func (a Agent) External() bool { return a.Kind != "" && a.Kind != kinds.NameRunner }

// Approval is the approval policy: a shorthand mode ("auto") or a block.
type Approval struct {
	Mode string `json:"mode" jsonschema_extras:"use=approvalMode"`
	// Default is allow or deny, for calls no rule matches (rules and ask modes).
	Default string `json:"default,omitempty" jsonschema_description:"The action for calls no rule matches, in modes rules and ask. Default: deny." jsonschema_extras:"use=action"`
	Rules   []Rule `json:"rules,omitempty" jsonschema_description:"Approval rules; the first match wins."`
}

// Rule is one approval rule; the first enabled, unexpired match wins.
type Rule struct {
	// Tool is a tool name, alias or glob ("*_file").
	Tool string `json:"tool,omitempty" jsonschema:"minLength=1" jsonschema_description:"A tool name, alias or glob such as *_file. Omitted: any tool."`
	// Match is a regex over the call's arguments as compact JSON with sorted keys.
	Match    string     `json:"match,omitempty" jsonschema_description:"A regex over the call's arguments as compact JSON with sorted keys, e.g. '\"path\":\"docs/'. Omitted: any arguments." jsonschema_extras:"use=regex"`
	Action   string     `json:"action" jsonschema:"required" jsonschema_description:"allow or deny the matching call." jsonschema_extras:"use=action"`
	Reason   string     `json:"reason,omitempty" jsonschema_description:"Why; shown to the model with a denial and recorded in the transcript."`
	Expires  *time.Time `json:"expires,omitempty" jsonschema_description:"The rule is skipped (with a warning) from this date (YYYY-MM-DD, midnight UTC) or RFC 3339 time on." jsonschema_extras:"use=date"`
	Disabled bool       `json:"disabled,omitempty" jsonschema_description:"Skip this rule (with a warning) without deleting it."`
	Pos      Position   `json:"pos" jsonschema:"-"`
}

// CommandRule allows or denies shell commands before run_in_terminal or run_code runs them.
type CommandRule struct {
	// Match is a regex over each simple command, its words joined by single spaces.
	Match  string   `json:"match" jsonschema:"required" jsonschema_description:"A regex over one simple command, its words joined by single spaces." jsonschema_extras:"use=regex"`
	Action string   `json:"action" jsonschema:"required" jsonschema_description:"allow or deny a matching command." jsonschema_extras:"use=action"`
	Reason string   `json:"reason,omitempty" jsonschema_description:"Why; shown to the model with a denial."`
	Pos    Position `json:"pos" jsonschema:"-"`
}

// WorkspaceSpec says how the workspace is built before the agent starts.
type WorkspaceSpec struct {
	// Files are inline files, path -> content.
	Files map[string]string `json:"files,omitempty" jsonschema_extras:"use=files"`
	// Copy is a directory copied in, relative to the task file.
	Copy string `json:"copy,omitempty" jsonschema_extras:"use=copyDir"`
	// Setup commands run in the workspace before the agent; a failure is a scenario error.
	Setup []string `json:"setup,omitempty" jsonschema_description:"Shell commands run in the workspace before the agent; a failure is a scenario error." jsonschema_extras:"use=texts"`
	// Template are globs over the paths of Files whose content is a template (see Case).
	Template []string `json:"template,omitempty" jsonschema_description:"Globs over workspace.files paths whose content is a template, for a task with vars:, matrix: or dataset: (opt-in, so code with braces is left alone)."`
}

// VerifySpec are files added only after the agent has finished: it never sees them.
type VerifySpec struct {
	Files map[string]string `json:"files,omitempty" jsonschema_extras:"use=files"`
	Copy  string            `json:"copy,omitempty" jsonschema_extras:"use=copyDir"`
	// Protect are doublestar globs over workspace paths that verification relies on
	// (test files, conftest.py, Makefile): the agent's file tools may not write there, and
	// any change the agent made there fails the scenario. A glob that matches a directory
	// protects everything under it.
	Protect []string `json:"protect,omitempty" jsonschema_description:"Globs (doublestar: **, *, ?, [..], {a,b}) over workspace paths that verification runs on, such as '**/*_test.go', '**/conftest.py', 'Makefile'; with environment:, an absolute glob names paths inside the container (its test runner), checked with the engine's diff after the agent. The agent's file tools may not write there, and a file the agent created, changed or deleted there in any way fails the scenario. A glob that matches a directory protects everything under it." jsonschema_extras:"use=protect"`
	// FreshContainer runs verification (command assertions, per-test results, score
	// file, verify_dir files) in a new container of the image the agent's container
	// started from (by image id), with a copy of the final workspace mounted: the agent's
	// container is stopped first, so nothing it changed outside the workspace or left
	// running takes part. Needs environment:.
	FreshContainer bool `json:"fresh_container,omitempty" jsonschema_description:"With environment: only. Stop the agent's container when it finishes and run verification (command assertions, per-test results, score file, verify files) in a new container of the same image (by image id), with a throwaway copy of the final workspace mounted: nothing the agent changed outside the workspace (a replaced test tool) and no process it left running takes part. Default: false (verification runs in the agent's container)."`
}

// Call is one tool call of the reference solution.
type Call struct {
	// Tool is the name as written, possibly an alias: Args then use the alias's parameter
	// names, and the registry maps both when the oracle plays the call.
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
	Pos  Position       `json:"pos" jsonschema:"-"`
}

// Assertion is one entry of assert:, a single-key map whose key is the kind. Spec holds
// the kind's typed value, always a value and never a pointer: FileContains, FileMatches,
// FileEquals, CommandCheck or ToolCalled, or bool/int/string for the scalar kinds (see
// the Kind constants). Tool names in ToolCalled and tool_not_called are canonical.
type Assertion struct {
	Kind string   `json:"kind"`
	Spec any      `json:"spec"`
	Pos  Position `json:"pos" jsonschema:"-"`
}

// Assertion kinds and the type of their Spec.
const (
	KindCompleted      = "completed"       // bool
	KindFileExists     = "file_exists"     // string (path)
	KindFileAbsent     = "file_absent"     // string (path)
	KindFileContains   = "file_contains"   // FileContains
	KindFileMatches    = "file_matches"    // FileMatches
	KindFileEquals     = "file_equals"     // FileEquals
	KindCommand        = "command"         // CommandCheck
	KindToolCalled     = "tool_called"     // ToolCalled
	KindToolNotCalled  = "tool_not_called" // string (tool name)
	KindStepsAtMost    = "steps_at_most"   // int
	KindSummaryMatches = "summary_matches" // string (regex)
	KindDeniedAtMost   = "denied_at_most"  // int
)

// FileContains checks that a file contains a substring.
type FileContains struct {
	Path string `json:"path" jsonschema:"required" jsonschema_extras:"use=path"`
	Text string `json:"text" jsonschema:"required" jsonschema_description:"The substring." jsonschema_extras:"use=text"`
}

// FileMatches checks that a file matches a regex.
type FileMatches struct {
	Path  string `json:"path" jsonschema:"required" jsonschema_extras:"use=path"`
	Regex string `json:"regex" jsonschema:"required" jsonschema_extras:"use=regex"`
}

// FileEquals checks a file's exact content.
type FileEquals struct {
	Path    string `json:"path" jsonschema:"required" jsonschema_extras:"use=path"`
	Content string `json:"content" jsonschema:"required" jsonschema_description:"The whole expected content." jsonschema_extras:"use=text"`
}

// CommandCheck runs a command in the final workspace.
type CommandCheck struct {
	Run            string        `json:"run" jsonschema:"required,minLength=1" jsonschema_description:"The command line." jsonschema_extras:"use=text"`
	ExitCode       int           `json:"exit_code" jsonschema:"minimum=0" jsonschema_description:"The expected exit code. Default: 0."`
	StdoutContains string        `json:"stdout_contains,omitempty" jsonschema_description:"A substring the command's output must contain." jsonschema_extras:"use=text"`
	Timeout        time.Duration `json:"timeout,omitempty" jsonschema_description:"Time limit for the command. Default: 60s."`
	// JUnit names the JUnit XML file the command writes inside $RESULTS_DIR, a directory
	// runner makes afresh for it; Format "pytest" parses pytest -rA output on stdout.
	// Either turns each test into a result of its own: the check then passes when every
	// test passed (and at least one ran) and the command exited 0 (the loader refuses
	// another exit_code: a report never outweighs the exit code).
	JUnit  string `json:"junit,omitempty" jsonschema:"minLength=1" jsonschema_description:"The name of the JUnit XML file the command writes inside $RESULTS_DIR, a directory runner makes afresh for each command outside anything the agent could write: each test becomes a result of its own. Write it as \"$RESULTS_DIR/junit.xml\"."`
	Format string `json:"format,omitempty" jsonschema:"enum=pytest" jsonschema_description:"pytest: parse pytest -rA output on stdout into per-test results."`
	// ExitCodeSet records that exit_code was written beside junit or format.
	ExitCodeSet bool `json:"-"`
}

// FormatPytest is the format of pytest's -rA output ("PASSED tests/test_x.py::test_y").
const FormatPytest = "pytest"

// PerTest reports whether the check has per-test results.
func (c CommandCheck) PerTest() bool { return c.JUnit != "" || c.Format != "" }

// ToolCalled checks how often a tool was executed, optionally with matching arguments.
type ToolCalled struct {
	Name string `json:"name" jsonschema:"required" jsonschema_extras:"use=toolName"`
	// ArgsMatch is a regex over the arguments as compact JSON with sorted keys.
	ArgsMatch string `json:"args_match,omitempty" jsonschema_description:"A regex over the arguments as compact JSON with sorted keys; only matching calls count." jsonschema_extras:"use=regex"`
	// Min defaults to 1; Max of 0 means no upper bound.
	Min int `json:"min" jsonschema:"minimum=0" jsonschema_description:"At least this many calls. Default: 1."`
	Max int `json:"max,omitempty" jsonschema:"minimum=0" jsonschema_description:"At most this many calls; 0 or omitted: no upper bound."`
}
