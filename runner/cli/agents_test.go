package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/agent/kinds"
)

// runner agents reads the registry's rows: every kind, its help, where its program is.
func TestAgentsListsTheRegistry(t *testing.T) {
	code, out, _ := invoke(t, "agents")
	assert.Equal(t, code, 0)
	for _, k := range kinds.Kinds {
		assert.Check(t, is.Contains(out, k.Name+" "))
		assert.Check(t, is.Contains(out, k.Help))
	}
	code, out, _ = invoke(t, "agents", "--format", "json")
	assert.Equal(t, code, 0)
	var rows []agentRow
	assert.NilError(t, json.Unmarshal([]byte(out), &rows))
	assert.Equal(t, len(rows), len(kinds.Kinds))
	assert.Equal(t, rows[0].Name, kinds.Default)

	code, _, errOut := invoke(t, "run", "--agent", "claud", "x.yaml")
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, strings.Contains(errOut, `--agent: unknown agent "claud"`), errOut)
}

// --check probes the installed programs: stand-ins for claude (the tested version) and codex
// (another version) pass with the difference said; with one gone it names it, says how to
// install it and exits 3; kinds without a program of their own are a usage error.
func TestAgentsCheck(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "node_modules", ".bin")
	assert.NilError(t, os.MkdirAll(bin, 0o755))
	claude, _ := kinds.Lookup(kinds.NameClaudeCode)
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '"+claude.Tested+" (Claude Code)'\n"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\necho 'codex-cli 0.1.0'\n"), 0o755))
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv(kinds.AgentsDirEnv, dir)

	code, out, errOut := invoke(t, "agents", "--check")
	assert.Equal(t, code, ExitOK, errOut)
	assert.Check(t, is.Regexp(`claude-code +ok +`+regexp.QuoteMeta(claude.Tested), out))
	assert.Check(t, is.Regexp(`codex +untested +0\.1\.0`, out))
	assert.Check(t, is.Contains(out, "codex: version 0.1.0; runner's tests drive"))

	code, out, _ = invoke(t, "agents", "--check", "--format", "json", "claude-code")
	assert.Equal(t, code, ExitOK)
	var rows []checkRow
	assert.NilError(t, json.Unmarshal([]byte(out), &rows))
	assert.Equal(t, len(rows), 1)
	assert.Equal(t, rows[0].Status, kinds.CheckOK)

	assert.NilError(t, os.Remove(filepath.Join(bin, "codex")))
	code, out, errOut = invoke(t, "agents", "--check")
	assert.Equal(t, code, ExitErrored)
	assert.Check(t, is.Regexp(`codex +missing`, out))
	assert.Check(t, is.Contains(out, "npm install -g @openai/codex@"))
	assert.Check(t, is.Contains(errOut, "1 of 2 agent programs missing or broken"))

	code, _, errOut = invoke(t, "agents", "--check", "command")
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(errOut, "no program of its own"))
	code, _, _ = invoke(t, "agents", "codex")
	assert.Equal(t, code, ExitUsage, "kinds are named only with --check")
}

// run takes one agent; a list is bench's, and each name in it is checked.
func TestAgentListIsBenchs(t *testing.T) {
	code, _, errOut := invoke(t, "run", "--agent", "codex,claude-code", "--model", "ollama:m", "x.yaml")
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(errOut, "compare agents with runner bench --agent codex,claude-code"))
	code, _, errOut = invoke(t, "bench", "--agent", "codex,claud", "--model", "ollama:m", "x.yaml")
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(errOut, `unknown agent "claud"`))
	assert.DeepEqual(t, agentList(" codex, ,runner,codex"), []string{"codex", "runner"})
}
