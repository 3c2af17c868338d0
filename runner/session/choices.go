package session

import (
	"io"
	"os"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// What the command line may name of the runtime, read from each kind's registry (the
// rows of sandbox.Modes, task.ApprovalModes, kinds.Kinds, providers.Registry,
// textcall.Parsers): its help text lists the choices and its Check methods check a flag's
// value here, so the command line reaches the runtime through this package alone.

// Approval modes a flag may name outright.
const (
	ApprovalAuto     = task.ModeAuto
	ApprovalReadOnly = task.ModeReadOnly
	ApprovalAsk      = task.ModeAsk
)

// ApprovalChoices lists the approval modes ("auto, read-only, rules or ask").
func ApprovalChoices() string { return task.ApprovalModeChoices() }

// CheckApproval reports an approval mode that is not one ("" is the task's).
func CheckApproval(mode string) error { return task.CheckApprovalMode(mode) }

// SandboxChoices lists the sandbox modes.
func SandboxChoices() string { return sandbox.ModeChoices() }

// CheckSandbox reports a sandbox mode that is not one ("" is the task's).
func CheckSandbox(mode string) error { return sandbox.CheckMode(mode) }

// AgentChoices lists the agent kinds.
func AgentChoices() string { return kinds.Choices() }

// AgentsDirEnv names the directory where npm installed the agent programs.
const AgentsDirEnv = kinds.AgentsDirEnv

// CheckAgent reports an agent kind that is not one ("" is the default).
func CheckAgent(name string) error {
	_, err := kinds.Lookup(name)
	return err
}

// ProviderNames lists the model providers, for --model's help.
func ProviderNames() []string { return providers.Names() }

// ProviderEnvHelp lists the variables the providers read, one a line, each indented.
func ProviderEnvHelp(indent string) string { return providers.EnvHelp(indent) }

// SplitModels splits comma-separated model lists (blanks and duplicates dropped), keeping
// a model's own options (oracle:fail=0.3,seed=1) whole.
func SplitModels(values ...string) []string { return providers.SplitList(values...) }

// CheckModel reports a model name that does not parse (PROVIDER:MODEL); it opens nothing.
func CheckModel(name string) error { return providers.CheckName(name) }

// ParserChoices lists the parsers of tool calls written as text.
func ParserChoices() string { return textcall.Choices() }

// CheckParser reports a tool-call parser that is not one ("" is the task's).
func CheckParser(mode string) error { return textcall.Check(mode) }

// Closest is the known name nearest to name, for "did you mean" ("" when none is near).
func Closest(name string, known []string) string { return task.Closest(name, known) }

// EnterProcess is the first thing the runner process does: a Landlock helper re-executed
// by the sandbox runs and never returns; then the descriptors the process inherited are
// closed, so no command inherits them (an error: refuse to start).
func EnterProcess() error {
	sandbox.RunHelperIfRequested()
	return sandbox.SealInheritedDescriptors()
}

// Console registers the process's known credentials with the secret scrubber (its
// environment's credential-like variables, the providers' keys and URLs) and wraps the
// command line's two streams in it: whatever prints, no credential reaches the console or
// a CI log. Each returned writer must be flushed at the end.
func Console(stdout, stderr io.Writer) (*scrub.Writer, *scrub.Writer) {
	scrub.AddEnviron(os.Environ())
	scrub.AddProviderEnv(os.Getenv)
	return scrub.NewWriter(stdout), scrub.NewWriter(stderr)
}

// MappingError: a variables file holds no mapping of variable names to values; Detail
// says where the parser stopped.
type MappingError struct{ Path, Detail string }

func (e *MappingError) Error() string {
	return e.Path + ": want a mapping of variable names to values: " + e.Detail
}

// ReadVars reads a file of task variables (YAML or JSON), bounded as every input runner
// did not write: its size, nesting and values are checked before and after parsing. A
// file that is not a mapping is a *MappingError.
func ReadVars(path string) (map[string]any, error) {
	data, err := bounded.ReadFile(path, bounded.Settings)
	if err == nil {
		err = bounded.YAML(path, data, bounded.Settings)
	}
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, &MappingError{Path: path, Detail: strings.TrimSpace(yaml.FormatError(err, false, true))}
	}
	if err := bounded.Values(path, m, bounded.Settings); err != nil {
		return nil, err
	}
	return m, nil
}

// ModelOptions say how models are reached (streaming, request timeout, retries,
// cassettes, the tool-call parser): Options.Open.
type ModelOptions = providers.OpenOptions

// EmptyCassetteError: a cassette to replay holds no recordings.
type EmptyCassetteError = providers.EmptyCassetteError

// UnknownVarError: a variable set from outside (--var, --vars) that no task declares.
type UnknownVarError = task.UnknownVarError
