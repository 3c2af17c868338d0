package task

import (
	"sort"
	"time"

	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// testTools stands in for the tool registry: canonical names and two aliases.
var testTools = map[string]string{
	"read_file":              "read_file",
	"grep_search":            "grep_search",
	"replace_string_in_file": "replace_string_in_file",
	"run_in_terminal":        "run_in_terminal",
	"create_file":            "create_file",
	"write_file":             "write_file",
	"delete_file":            "delete_file",
	"list_dir":               "list_dir",
	"task_complete":          "task_complete",
	"bash":                   "run_in_terminal",
	"view":                   "read_file",
}

// sandboxes are the values of sandbox:, which the runtime gives the loader as data.
var sandboxes = sandbox.ModeNames()

// testNow is before the full task's 2027 expiry and after its 2025 one.
var testNow = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func testOptions() LoadOptions {
	var names []string
	for name, canonical := range testTools {
		if name == canonical {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return LoadOptions{
		KnownTool: func(name string) (string, bool) {
			c, ok := testTools[name]
			return c, ok
		},
		ToolNames: names,
		Now:       testNow,
		// What runner/session gives the loader of the runtime's registries.
		SandboxModes: sandboxes,
		Parsers:      textcall.Modes,
		SecretMinLen: scrub.MinLen,
	}
}
