package cli

import (
	"os"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// readmeTable returns the rows of the README table whose header row starts with header,
// each cell as a reader sees it: code spans unquoted, \| as |.
func readmeTable(t *testing.T, header string) [][]string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	assert.NilError(t, err)
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, header) {
			continue
		}
		var rows [][]string
		for _, r := range lines[i+2:] {
			if !strings.HasPrefix(r, "|") {
				break
			}
			rows = append(rows, cells(r))
		}
		return rows
	}
	t.Fatalf("README.md has no table starting %q", header)
	return nil
}

func cells(row string) []string {
	row = strings.ReplaceAll(strings.Trim(row, "|"), `\|`, "\x00")
	var out []string
	for _, c := range strings.Split(row, "|") {
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(c), "`", ""), "\x00", "|"))
	}
	return out
}

// The README's tables of providers, parsers, approval and sandbox modes and assertion
// kinds are the registries': a row added to one and not the other fails here.

func TestReadmeProvidersAreTheRegistry(t *testing.T) {
	var want [][]string
	for _, p := range providers.Registry {
		var env []string
		for _, e := range p.Env {
			env = append(env, e.Name)
		}
		want = append(want, []string{p.Name, p.Help, strings.Join(env, ", "), p.PreCheck})
	}
	assert.DeepEqual(t, readmeTable(t, "| provider |"), want)
}

func TestReadmeParsersAreTheRegistry(t *testing.T) {
	var want [][]string
	for _, p := range textcall.Parsers {
		want = append(want, []string{p.Name, p.Help})
	}
	assert.DeepEqual(t, readmeTable(t, "| mode | reads |"), want)
}

func TestReadmeApprovalModesAreTheRegistry(t *testing.T) {
	var want [][]string
	for _, m := range task.ApprovalModes {
		want = append(want, []string{m.Name, m.Help})
	}
	assert.DeepEqual(t, readmeTable(t, "| mode | what runs |"), want)
}

func TestReadmeSandboxModesAreTheRegistry(t *testing.T) {
	var want, got [][]string
	for _, m := range sandbox.Modes {
		want = append(want, []string{m.Name, m.Help})
	}
	got = readmeTable(t, "| sandbox | confines commands with |")
	assert.DeepEqual(t, got, want)
}

// TestReadmeSandboxComparisonHasEveryMode keeps the table of what each mode confines to
// one column per mode auto can choose.
func TestReadmeSandboxComparisonHasEveryMode(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	assert.NilError(t, err)
	var header string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "| | `"+sandbox.ModeBwrap+"`") {
			header = l
		}
	}
	var want []string
	for _, m := range sandbox.ModeNames() {
		if m != sandbox.ModeAuto {
			want = append(want, m)
		}
	}
	assert.DeepEqual(t, cells(header)[1:], want)
}

// TestReadmeAssertionsAreTheRegistry: the table of assertions names every kind of
// task.Kinds, in order (command has two rows).
func TestReadmeAssertionsAreTheRegistry(t *testing.T) {
	var got []string
	for _, row := range readmeTable(t, "| assertion | passes when |") {
		kind, _, _ := strings.Cut(row[0], ":")
		if len(got) == 0 || got[len(got)-1] != kind {
			got = append(got, kind)
		}
	}
	assert.DeepEqual(t, got, task.AssertionKinds)
}
