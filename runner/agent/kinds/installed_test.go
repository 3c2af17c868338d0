package kinds

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The outputs under testdata/ are the real programs' stdout, captured against fakellm
// (paths rewritten): a finished run, a request refused with HTTP 400, and a server that
// keeps failing with 500.
func readOutput(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	assert.NilError(t, err)
	return b
}

func TestClaudeCodeOutcome(t *testing.T) {
	k, err := Lookup(NameClaudeCode)
	assert.NilError(t, err)

	v := k.Judge(0, readOutput(t, "claude-code-finished.jsonl"))
	assert.Check(t, v.Finished, "%+v", v)
	assert.Check(t, is.Equal(v.Summary, "All done."))

	v = k.Judge(1, readOutput(t, "claude-code-refused-400.jsonl"))
	assert.Check(t, !v.Finished)
	assert.Check(t, is.Contains(v.Reason, "max_steps (3) reached"))
	assert.Check(t, is.Contains(v.Reason, "api_error"))

	v = k.Judge(1, readOutput(t, "claude-code-server-error-500.jsonl"))
	assert.Check(t, !v.Finished)
	assert.Check(t, is.Contains(v.Reason, "API Error: 500 boom"))

	// Killed before its result event: whatever the exit code, not finished.
	full := readOutput(t, "claude-code-finished.jsonl")
	cut := full[:strings.LastIndex(strings.TrimRight(string(full), "\n"), "\n")]
	for _, code := range []int{0, -1, 137} {
		v = k.Judge(code, cut)
		assert.Check(t, !v.Finished && v.Reason != "", "code %d: %+v", code, v)
	}
	// A result that says it failed is not finished, even with exit 0.
	v = k.Judge(0, []byte(`{"type":"result","subtype":"error_max_turns","is_error":true,"result":""}`+"\n"))
	assert.Check(t, !v.Finished)
	assert.Check(t, is.Contains(v.Reason, "error_max_turns"))
}

func TestCodexOutcome(t *testing.T) {
	k, err := Lookup(NameCodex)
	assert.NilError(t, err)

	v := k.Judge(0, readOutput(t, "codex-finished.jsonl"))
	assert.Check(t, v.Finished, "%+v", v)
	assert.Check(t, is.Equal(v.Summary, "All done."))

	v = k.Judge(1, readOutput(t, "codex-refused-400.jsonl"))
	assert.Check(t, !v.Finished)
	assert.Check(t, is.Contains(v.Reason, "max_steps (3) reached"))

	v = k.Judge(1, readOutput(t, "codex-server-error-500.jsonl"))
	assert.Check(t, !v.Finished)
	assert.Check(t, is.Contains(v.Reason, "high demand"))

	full := readOutput(t, "codex-finished.jsonl")
	cut := full[:strings.LastIndex(strings.TrimRight(string(full), "\n"), "\n")]
	v = k.Judge(0, cut)
	assert.Check(t, !v.Finished && v.Reason != "", "%+v", v)
	v = k.Judge(-1, nil)
	assert.Check(t, !v.Finished && v.Reason != "", "%+v", v)
}

func TestClaudeCodeArgs(t *testing.T) {
	k, _ := Lookup(NameClaudeCode)
	in := Invocation{Prompt: "-rf everything", System: "Be terse.", Model: "anthropic:claude-sonnet-4-5", ModelID: ModelID("anthropic:claude-sonnet-4-5"), BaseURL: "http://127.0.0.1:9"}
	args := k.Args(in)
	assert.Check(t, k.PromptOnStdin)
	assert.Check(t, !slices.Contains(args, in.Prompt), "the prompt goes on stdin, never as an argument: %q", args)
	for _, want := range []string{"-p", "--dangerously-skip-permissions", "--no-session-persistence", "stream-json"} {
		assert.Check(t, slices.Contains(args, want), "%q lacks %s", args, want)
	}
	assert.Check(t, is.DeepEqual(after(args, "--model"), "claude-sonnet-4-5"), "the model's own name, as Claude Code knows it")
	assert.Check(t, is.DeepEqual(after(args, "--append-system-prompt"), "Be terse."))
	env := k.Env(in)
	for _, name := range []string{"IS_SANDBOX", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS", "CLAUDE_CODE_DISABLE_AUTO_MEMORY"} {
		assert.Check(t, is.Equal(env[name], "1"), name)
	}
	for name := range env {
		assert.Check(t, !strings.Contains(name, "KEY") && !strings.Contains(name, "TOKEN"), "the row sets no credential: %s", name)
	}
	assert.Check(t, !slices.Contains(k.Args(Invocation{}), "--append-system-prompt"))
}

func TestCodexArgs(t *testing.T) {
	k, _ := Lookup(NameCodex)
	system := "Say \"done\" when done.\nBackslash \\ and tab\t and \u00e9 and \x01."
	in := Invocation{Prompt: "fix it", System: system, Model: "openai-responses:gpt-5.5", ModelID: ModelID("openai-responses:gpt-5.5"), BaseURL: "http://127.0.0.1:4321/"}
	args := k.Args(in)
	assert.Check(t, k.PromptOnStdin)
	assert.Check(t, is.Equal(args[0], "exec"))
	assert.Check(t, is.Equal(args[len(args)-1], "-"), "the prompt is read from stdin")
	assert.Check(t, is.Equal(after(args, "--model"), "gpt-5.5"), "the model's own name, as Codex knows it")
	for _, want := range []string{"--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", "--ephemeral"} {
		assert.Check(t, slices.Contains(args, want), "%q lacks %s", args, want)
	}

	// Every -c value is TOML as Codex parses it: the provider points at the endpoint's /v1
	// and the system prompt survives quoting.
	conf := map[string]any{}
	for i, a := range args {
		if a != "-c" {
			continue
		}
		key, value, ok := strings.Cut(args[i+1], "=")
		assert.Assert(t, ok, args[i+1])
		var doc map[string]any
		_, err := toml.Decode("v = "+value, &doc)
		assert.NilError(t, err, "-c %s is not TOML", args[i+1])
		conf[key] = doc["v"]
	}
	assert.Check(t, is.Equal(conf["model_provider"], "runner"))
	provider, _ := conf["model_providers.runner"].(map[string]any)
	assert.Check(t, is.Equal(provider["base_url"], "http://127.0.0.1:4321/v1"))
	assert.Check(t, is.Equal(provider["wire_api"], "responses"))
	assert.Check(t, is.Equal(provider["env_key"], "OPENAI_API_KEY"))
	assert.Check(t, is.Equal(conf["developer_instructions"], system))
	assert.Check(t, is.Equal(conf["analytics.enabled"], false))
	assert.Check(t, is.Equal(conf["skills.bundled.enabled"], false))
	_, hasSystem := conf["developer_instructions"]
	assert.Check(t, hasSystem)
}

// The rows' tested versions are the ones tests/agents installs: the pin in package.json
// and the version the lockfile resolved.
func TestTestedVersionsArePinned(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "tests", "agents")
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &pkg))
	b, err = os.ReadFile(filepath.Join(dir, "package-lock.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &lock))
	docs, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "agents.md"))
	assert.NilError(t, err)
	n := 0
	for _, k := range Kinds {
		if k.Package == "" {
			continue
		}
		n++
		assert.Check(t, is.Contains(string(docs), "| `"+k.Name+"` | `"+k.Package+"` | "+k.Tested+" |"), "docs/agents.md's tested versions")
		assert.Check(t, is.Contains(string(docs), k.Package+"@"+k.Tested), "docs/agents.md's install line")
		assert.Check(t, k.Tested != "", "%s: no tested version", k.Name)
		assert.Check(t, is.Equal(pkg.Dependencies[k.Package], k.Tested), "%s: package.json pins %s", k.Name, k.Package)
		assert.Check(t, is.Equal(lock.Packages["node_modules/"+k.Package].Version, k.Tested), "%s: package-lock.json", k.Name)
		assert.Check(t, is.Contains(k.Install, k.Package+"@"+k.Tested))
	}
	assert.Check(t, is.Equal(n, len(pkg.Dependencies)), "every package tests/agents installs is a row's")
}

// after returns the argument following flag ("" when absent).
func after(args []string, flag string) string {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

// --check tells the four states apart with stand-in programs: the tested version, another
// one, none at all, and a program whose probe fails.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "node_modules", ".bin")
	assert.NilError(t, os.MkdirAll(bin, 0o755))
	write := func(name, script string) {
		assert.NilError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	}
	k := Kind{Name: "x", Program: "x-agent", VersionArgs: []string{"--version"}, Tested: "2.1.332", Install: "npm i -g x@2.1.332"}
	assert.Check(t, k.Checkable())
	assert.Check(t, !commandKind.Checkable() && !runnerKind.Checkable())

	c := k.Check(t.Context(), "/nonexistent", dir)
	assert.Check(t, is.Equal(c.Status, CheckMissing))
	assert.Check(t, is.Contains(c.Problem, "npm i -g x@2.1.332"), "says how to install it")

	write("x-agent", `[ "$1" = --version ] && echo "2.1.332 (X Agent)"`)
	c = k.Check(t.Context(), "/nonexistent", dir)
	assert.Check(t, is.Equal(c.Status, CheckOK), c.Problem)
	assert.Check(t, is.Equal(c.Version, "2.1.332"))
	assert.Check(t, is.Equal(c.Path, filepath.Join(bin, "x-agent")))

	write("x-agent", `echo "x-cli 2.2.0-beta.1"`)
	c = k.Check(t.Context(), "/nonexistent", dir)
	assert.Check(t, is.Equal(c.Status, CheckUntested))
	assert.Check(t, is.Equal(c.Version, "2.2.0-beta.1"))
	assert.Check(t, is.Contains(c.Problem, "drive 2.1.332"))

	write("x-agent", `echo "Error: cannot find module" >&2; exit 1`)
	c = k.Check(t.Context(), "/nonexistent", dir)
	assert.Check(t, is.Equal(c.Status, CheckBroken))
	assert.Check(t, is.Contains(c.Problem, "cannot find module"))

	write("x-agent", `echo "no version here"`)
	c = k.Check(t.Context(), "/nonexistent", dir)
	assert.Check(t, is.Equal(c.Status, CheckBroken))
}
