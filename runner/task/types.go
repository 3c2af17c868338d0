// Package task is the task file format: the types a YAML task file decodes into, strict
// decoding that reports every problem with file:line:column and field path, validation,
// and the published JSON Schema.
package task

import (
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
)

// Position is where something was written in a task file.
type Position struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// Task is one scenario, decoded from a task file.
type Task struct {
	// Path is the task file's path as given; Dir is its directory (for workspace.copy).
	Path string `json:"path"`
	Dir  string `json:"-"`

	Name         string        `json:"name"`
	Description  string        `json:"description,omitempty"`
	Tags         []string      `json:"tags,omitempty"`
	Model        string        `json:"model,omitempty"`
	ModelOptions model.Options `json:"model_options"`
	System       string        `json:"system,omitempty"`
	Prompt       string        `json:"prompt"`
	// Tools are canonical tool names, task_complete always among them; nil (no tools:
	// key) means every registered tool.
	Tools []string `json:"tools"`
	// ToolsDefined are the tools the task file brings (tools_defined).
	ToolsDefined []ToolDef `json:"tools_defined,omitempty"`
	// MCP are the MCP servers started for the scenario (mcp:).
	MCP          []MCPServer       `json:"mcp,omitempty"`
	Approval     Approval          `json:"approval"`
	CommandRules []CommandRule     `json:"command_rules,omitempty"`
	MaxSteps     int               `json:"max_steps"`
	Timeout      time.Duration     `json:"timeout"`
	Env          map[string]string `json:"env,omitempty"`
	// Network lets commands reach the network inside the sandbox.
	Network bool `json:"network,omitempty"`
	// Sandbox is auto, bwrap, landlock or none.
	Sandbox string       `json:"sandbox"`
	Limits  tools.Limits `json:"limits"`
	// Environment, when set, runs commands in a container (see Environment).
	Environment *Environment  `json:"environment,omitempty"`
	Workspace   WorkspaceSpec `json:"workspace"`
	Verify      VerifySpec    `json:"verify"`
	Assert      []Assertion   `json:"assert"`
	Reference   []Call        `json:"reference,omitempty"`
	// Score, when set, gives the scenario a score between 0 and 1.
	Score *Score `json:"score,omitempty"`

	// KeyLines are the lines of the top-level keys present in the file, so a report can
	// point at the max_steps or timeout a scenario hit.
	KeyLines map[string]int `json:"-"`

	// ToolCallParser reads tool calls the model writes as text (runner/model/textcall
	// modes); "" leaves it to the provider's default.
	ToolCallParser string `json:"tool_call_parser,omitempty"`

	// Case is set when the file declares vars:, a matrix: or a dataset:: which task file
	// and values this scenario is a case of. Name is then "task[label]".
	Case *Case `json:"case,omitempty"`

	// Warnings are problems that do not stop the task (an expired or disabled rule), each
	// formatted as "file:line:column: field: message".
	Warnings []string `json:"warnings,omitempty"`
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

// Approval is the approval policy: a shorthand mode ("auto") or a block.
type Approval struct {
	Mode string `json:"mode"`
	// Default is allow or deny, for calls no rule matches (rules and ask modes).
	Default string `json:"default,omitempty"`
	Rules   []Rule `json:"rules,omitempty"`
}

// Rule is one approval rule; the first enabled, unexpired match wins.
type Rule struct {
	// Tool is a tool name, alias or glob ("*_file").
	Tool string `json:"tool,omitempty"`
	// Match is a regex over the call's arguments as compact JSON with sorted keys.
	Match    string     `json:"match,omitempty"`
	Action   string     `json:"action"`
	Reason   string     `json:"reason,omitempty"`
	Expires  *time.Time `json:"expires,omitempty"`
	Disabled bool       `json:"disabled,omitempty"`
	Pos      Position   `json:"pos"`
}

// CommandRule allows or denies shell commands before run_in_terminal or run_code runs them.
type CommandRule struct {
	// Match is a regex over each simple command, its words joined by single spaces.
	Match  string   `json:"match"`
	Action string   `json:"action"`
	Reason string   `json:"reason,omitempty"`
	Pos    Position `json:"pos"`
}

// WorkspaceSpec says how the workspace is built before the agent starts.
type WorkspaceSpec struct {
	// Files are inline files, path -> content.
	Files map[string]string `json:"files,omitempty"`
	// Copy is a directory copied in, relative to the task file.
	Copy string `json:"copy,omitempty"`
	// Setup commands run in the workspace before the agent; a failure is a scenario error.
	Setup []string `json:"setup,omitempty"`
	// Template are globs over the paths of Files whose content is a template (decoding
	// fills them in; kept for the schema and docs).
	Template []string `json:"template,omitempty"`
}

// VerifySpec are files added only after the agent has finished: it never sees them.
type VerifySpec struct {
	Files map[string]string `json:"files,omitempty"`
	Copy  string            `json:"copy,omitempty"`
	// Protect are doublestar globs over workspace paths that verification relies on
	// (test files, conftest.py, Makefile): the agent's file tools may not write there, and
	// any change the agent made there fails the scenario. A glob that matches a directory
	// protects everything under it.
	Protect []string `json:"protect,omitempty"`
}

// Call is one tool call of the reference solution.
type Call struct {
	// Tool is the name as written, possibly an alias: Args then use the alias's parameter
	// names, and the registry maps both when the oracle plays the call.
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
	Pos  Position       `json:"pos"`
}

// Assertion is one entry of assert:, a single-key map whose key is the kind. Spec holds
// the kind's typed value, always a value and never a pointer: FileContains, FileMatches,
// FileEquals, CommandCheck or ToolCalled, or bool/int/string for the scalar kinds (see
// the Kind constants). Tool names in ToolCalled and tool_not_called are canonical.
type Assertion struct {
	Kind string   `json:"kind"`
	Spec any      `json:"spec"`
	Pos  Position `json:"pos"`
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
	Path string `json:"path"`
	Text string `json:"text"`
}

// FileMatches checks that a file matches a regex.
type FileMatches struct {
	Path  string `json:"path"`
	Regex string `json:"regex"`
}

// FileEquals checks a file's exact content.
type FileEquals struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// CommandCheck runs a command in the final workspace.
type CommandCheck struct {
	Run            string        `json:"run"`
	ExitCode       int           `json:"exit_code"`
	StdoutContains string        `json:"stdout_contains,omitempty"`
	Timeout        time.Duration `json:"timeout,omitempty"`
	// JUnit names a JUnit XML file the command writes (a workspace path, or an absolute
	// path inside the environment); Format "pytest" parses pytest -rA output on stdout.
	// Either turns each test into a result of its own: the check then passes when every
	// test passed (and at least one ran), and the exit code counts only if ExitCodeSet.
	JUnit  string `json:"junit,omitempty"`
	Format string `json:"format,omitempty"`
	// ExitCodeSet records that exit_code was written beside junit or format.
	ExitCodeSet bool `json:"-"`
}

// FormatPytest is the format of pytest's -rA output ("PASSED tests/test_x.py::test_y").
const FormatPytest = "pytest"

// PerTest reports whether the check has per-test results.
func (c CommandCheck) PerTest() bool { return c.JUnit != "" || c.Format != "" }

// ToolCalled checks how often a tool was executed, optionally with matching arguments.
type ToolCalled struct {
	Name string `json:"name"`
	// ArgsMatch is a regex over the arguments as compact JSON with sorted keys.
	ArgsMatch string `json:"args_match,omitempty"`
	// Min defaults to 1; Max of 0 means no upper bound.
	Min int `json:"min"`
	Max int `json:"max,omitempty"`
}
