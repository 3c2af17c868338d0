package sandbox

import (
	"fmt"
	"os"

	"github.com/agentrunner/runner/tools"
)

// HelperArg is the hidden first argument with which the runner re-executes itself as the
// sandbox helper: os.Args = [exe, HelperArg, config, program, argv...].
const HelperArg = "__runner-sandbox-exec"

// helperFailed is the helper's exit status when it cannot confine and start the command,
// the shell's "found but cannot execute".
const helperFailed = 126

// helperConfig is what a wrapper tells the helper, as JSON in the argument after HelperArg.
type helperConfig struct {
	Limits tools.Limits `json:"limits"`
	// Cgroup is a pids cgroup directory the helper moves itself into.
	Cgroup string `json:"cgroup,omitempty"`
	// Tmp is the command's private temp directory, removed by Release.
	Tmp string `json:"tmp,omitempty"`
	// Landlock, when set, are the rules the helper applies.
	Landlock *landlockRules `json:"landlock,omitempty"`
}

// landlockRules are the Landlock rules for one command.
type landlockRules struct {
	// Write are the directories the command may write (the workspace, its temp dir).
	Write []string `json:"write"`
	// Deny are paths the command may not read (credential directories and files).
	Deny []string `json:"deny,omitempty"`
	// Network allows TCP connections.
	Network bool `json:"network,omitempty"`
}

// RunHelperIfRequested turns the process into the sandbox helper when it was started as
// one (os.Args[1] == HelperArg): it applies the limits and rules it was given and executes
// the command in its place, never returning; if that fails it prints why and exits 126.
// Otherwise it returns at once. The CLI's main calls it first thing, and so must the
// TestMain of any test that runs sandboxed commands.
func RunHelperIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != HelperArg {
		return
	}
	err := runHelper(os.Args[2:]) // returns only on failure
	fmt.Fprintf(os.Stderr, "runner sandbox: %v\n", err)
	os.Exit(helperFailed)
}
