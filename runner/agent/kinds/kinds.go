// Package kinds is the registry of agent kinds: what runs a scenario's agent. One row per
// kind, one file per kind: runner's own loop (the default), a command the task names, and
// installed programs (Claude Code, Codex CLI) that talk to runner's model endpoint. The
// task file's agent: key, --agent, `runner agents` and the docs read Kinds.
//
// The package imports only the standard library and runner/bounded (for the agents'
// output): runner/task reads it to check names, and runner/agent (the loop) sits above
// runner/task.
package kinds

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Protocol is the model API a program speaks to runner's endpoint. Every external
// program gets every base URL; the row says which one it reads, for `runner agents` and
// for the endpoint's routes a test must cover.
type Protocol string

// Protocols of the endpoint's fronts.
const (
	ProtocolNone            Protocol = ""                 // runner's own loop: no endpoint
	ProtocolOpenAIChat      Protocol = "openai-chat"      // POST /v1/chat/completions
	ProtocolOpenAIResponses Protocol = "openai-responses" // POST /v1/responses
	ProtocolAnthropic       Protocol = "anthropic"        // POST /v1/messages
	ProtocolAny             Protocol = "any"              // a command may speak any of them
)

// Invocation is what a row turns into an argv and an environment for one scenario.
type Invocation struct {
	// Prompt and System are the task's prompt and system prompt ("" when it has none).
	Prompt, System string
	// Model is the model name the endpoint serves, PROVIDER:MODEL (also in RUNNER_MODEL).
	Model string
	// ModelID is the model's own name, without runner's provider (gpt-5.5 of
	// openai:gpt-5.5): what an installed program knows models by, so Codex with a model
	// it knows offers that model's tools and prompts, as it would against the provider.
	ModelID string
	// Command is the task's agent command (the command kind).
	Command string
	// Workdir is the workspace as the program sees it (its working directory).
	Workdir string
	// MaxSteps is the most model requests the endpoint answers.
	MaxSteps int
	// BaseURL is runner's endpoint as the program reaches it (http://127.0.0.1:PORT, no
	// /v1), known once the endpoint listens. Most programs read it from the environment
	// (OPENAI_BASE_URL, ANTHROPIC_BASE_URL); Codex only takes it in its arguments.
	BaseURL string
}

// Verdict is how a program ended, as its row reads it.
type Verdict struct {
	// Finished says the program says it did the job (exit 0 for most); otherwise it gave up.
	Finished bool
	// Summary is what it said it did, when its output says ("" otherwise).
	Summary string
	// Reason explains a program that gave up ("exited with code 2").
	Reason string
}

// Kind is one row of the registry.
type Kind struct {
	// Name is the value of agent: and --agent.
	Name string
	// Help is the one line `runner agents`, --help and the docs show.
	Help string
	// Builtin marks runner's own loop: nothing is started and no endpoint served.
	Builtin bool
	// Program is the executable to run, found by Find: on the command's PATH, or in
	// $RUNNER_AGENTS_DIR/node_modules/.bin for programs installed from npm.
	Program string
	// Package is where the program comes from (an npm package), for messages and docs.
	Package string
	// Install says how to install the program, for messages and docs.
	Install string
	// Protocol is the API the program speaks.
	Protocol Protocol
	// Args are the program's arguments (after its name) for one run: its headless and
	// non-interactive flags, the prompt and the model where it takes them as arguments.
	Args func(Invocation) []string
	// Env are variables the program needs besides the ones every external agent gets
	// (see the endpoint's variables in runner/scenario): telemetry and update checks off.
	Env func(Invocation) map[string]string
	// PromptOnStdin writes the prompt on the program's standard input (else it reads
	// /dev/null there); every program also finds it in $RUNNER_PROMPT.
	PromptOnStdin bool
	// Outcome tells finished from gave up, from the exit code and what the program wrote
	// on stdout; nil: exit 0 is finished, anything else gave up.
	Outcome func(exitCode int, stdout []byte) Verdict
	// VersionArgs are the arguments that make the program print its version (runner agents
	// --check); nil when it has none.
	VersionArgs []string
	// Tested is the program's version runner's end-to-end tests drive (the pin in
	// tests/agents/package.json), for `runner agents --check` and the docs; "" for none.
	Tested string
	// ToolsVisible says the program's tool use shows in the protocol as tool calls the
	// model makes (and results it sends back), so tool_called assertions can read them.
	ToolsVisible bool
}

// AgentsDirEnv names the directory where npm installed the agent programs (its
// node_modules/.bin is searched after PATH).
const AgentsDirEnv = "RUNNER_AGENTS_DIR"

// Default is the kind of a task with no agent: key.
const Default = NameRunner

// Kinds are the agent kinds, the default first. Other files add their rows in init
// (register), so a kind is one file plus its row.
var Kinds = []Kind{runnerKind, commandKind}

// register adds a row (from a kind's own file).
func register(k Kind) { Kinds = append(Kinds, k) }

// Names lists the kinds' names, in order.
func Names() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.Name
	}
	return out
}

// Choices is "runner, command or ...", for help and messages.
func Choices() string {
	names := Names()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ErrUnknown is what Lookup returns for a name not in Kinds.
var ErrUnknown = errors.New("unknown agent")

// Lookup returns the row named name ("" is Default).
func Lookup(name string) (Kind, error) {
	if name == "" {
		name = Default
	}
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, fmt.Errorf("%w %q (want %s)", ErrUnknown, name, Choices())
	}
	return Kinds[i], nil
}

// ErrNotInstalled is what Find returns when the program is nowhere to be found.
var ErrNotInstalled = errors.New("agent program not installed")

// Find returns the absolute path of the row's program: on path (a PATH value), then in
// agentsDir/node_modules/.bin ("" for none). Builtin kinds have none.
func (k Kind) Find(path, agentsDir string) (string, error) {
	if k.Builtin || k.Program == "" {
		return "", nil
	}
	if strings.Contains(k.Program, "/") {
		return k.Program, nil
	}
	dirs := filepath.SplitList(path)
	if agentsDir != "" {
		dirs = append(dirs, filepath.Join(agentsDir, "node_modules", ".bin"))
	}
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) {
			continue // a relative entry would resolve against the workspace
		}
		p := filepath.Join(dir, k.Program)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	hint := ""
	if k.Install != "" {
		hint = "; install it: " + k.Install
	}
	return "", fmt.Errorf("%w: %s (%s) is not on PATH nor in $%s/node_modules/.bin%s", ErrNotInstalled, k.Program, k.Name, AgentsDirEnv, hint)
}

// ModelID is name without its provider (the text after the first colon), or name when
// it has none.
func ModelID(name string) string {
	if _, id, ok := strings.Cut(name, ":"); ok && id != "" {
		return id
	}
	return name
}

// Judge reads how the program ended through the row's Outcome (exit 0 is finished
// without one).
func (k Kind) Judge(exitCode int, stdout []byte) Verdict {
	if k.Outcome != nil {
		return k.Outcome(exitCode, stdout)
	}
	return ExitCode(exitCode, stdout)
}

// ExitCode is the default Outcome: exit 0 finished, anything else gave up.
func ExitCode(code int, _ []byte) Verdict {
	if code == 0 {
		return Verdict{Finished: true}
	}
	return Verdict{Reason: fmt.Sprintf("the agent exited with code %d", code)}
}
