package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
)

// hostileNameTask is named with a space, quotes, #, a command substitution, ".." and a
// non-ASCII letter; its matrix labels hold "/" and "..".
const hostileNameTask = `name: 'fix the "bug" #1 $(touch pwned) ü..'
prompt: Write hello to out.txt.
tools: [write_file]
sandbox: none
assert:
  - file_contains: {path: out.txt, text: hello}
reference:
  - write_file: {path: out.txt, content: "hello\n"}
  - task_complete: {summary: Wrote hello.}
`

const hostileCasesTask = `name: wrong one
prompt: Write hello to out.txt.
tools: [write_file]
sandbox: none
matrix:
  where: ["../x/y", "日本"]
assert:
  - file_contains: {path: out.txt, text: hello}
reference:
  - write_file: {path: out.txt, content: "goodbye\n"}
  - task_complete: {summary: Wrote goodbye.}
`

// TestOutputDirectoryNamesAreSafe runs scenarios with hostile names twice each: every
// output directory is a name a shell loop, a URL and an artifact upload take as it is,
// "NAME.rK" holds "repeat": K (one numbering, from 1, as the reports' "NAME #K"), the
// display name stays in result.json, and show, view, merge and --rerun-failed find them.
func TestOutputDirectoryNamesAreSafe(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "tasks"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "tasks", "a.yaml"), []byte(hostileNameTask), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "tasks", "b.yaml"), []byte(hostileCasesTask), 0o644))
	args := []string{"run", "--repeat", "2", "--cache-dir", "", "--out", "OUT", "tasks/"}
	r := runner(t, run{Args: args, Dir: dir})
	assert.Equal(t, r.Code, 1, "the wrong one fails")

	safe := regexp.MustCompile(`^[\p{L}\p{M}\p{N}_][\p{L}\p{M}\p{N}._-]*\.r([12])$`)
	entries, err := os.ReadDir(filepath.Join(dir, "OUT"))
	assert.NilError(t, err)
	display := map[string]string{} // directory -> display name
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m := safe.FindStringSubmatch(e.Name())
		assert.Assert(t, m != nil, "unsafe directory name %q", e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "OUT", e.Name(), "result.json"))
		assert.NilError(t, err)
		var s result.Scenario
		assert.NilError(t, json.Unmarshal(b, &s))
		assert.Equal(t, strconv.Itoa(s.Repeat), m[1], "%s holds repeat %d", e.Name(), s.Repeat)
		assert.Assert(t, strings.HasSuffix(s.DisplayName(), " #"+m[1]))
		display[e.Name()] = s.DisplayName()
	}
	assert.Equal(t, len(display), 6, "%v", display)
	var names []string
	for _, n := range display {
		names = append(names, n)
	}
	for _, want := range []string{`fix the "bug" #1 $(touch pwned) ü.. #2`, "wrong one[where=.._x_y] #1", "wrong one[where=日本] #2"} {
		assert.Check(t, is.Contains(names, want))
	}
	_, err = os.Stat(filepath.Join(dir, "pwned"))
	assert.Assert(t, os.IsNotExist(err), "a name is never run")

	// show finds a scenario by its directory and by its display name.
	for d, name := range display {
		byDir := runner(t, run{Args: []string{"show", "OUT", d}, Dir: dir})
		assert.Equal(t, byDir.Code, 0, byDir.Stderr)
		assert.Check(t, is.Contains(byDir.Stdout, name))
		byName := runner(t, run{Args: []string{"show", "OUT", name}, Dir: dir})
		assert.Equal(t, byName.Stdout, byDir.Stdout)
		break
	}
	// view links every scenario's page, and each page is there.
	v := runner(t, run{Args: []string{"view", "OUT"}, Dir: dir})
	assert.Equal(t, v.Code, 0, v.Stderr)
	for d := range display {
		_, err := os.Stat(filepath.Join(dir, "OUT", d, "index.html"))
		assert.NilError(t, err)
	}
	// merge reads them back; --rerun-failed reuses the passes and runs the failures again.
	m := runner(t, run{Args: []string{"merge", "OUT", "--json", "merged.json"}, Dir: dir})
	assert.Equal(t, m.Code, 1, m.Stderr)
	b, err := os.ReadFile(filepath.Join(dir, "merged.json"))
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(string(b), `"transcript":`), 6)
	again := runner(t, run{Args: []string{"run", "--repeat", "2", "--cache-dir", "", "--rerun-failed", "OUT", "tasks/"}, Dir: dir})
	assert.Equal(t, again.Code, 1, again.Stderr)
	assert.Check(t, is.Contains(again.Stdout, "6 scenarios: 2 passed, 4 failed"))
	after, err := os.ReadDir(filepath.Join(dir, "OUT"))
	assert.NilError(t, err)
	assert.Equal(t, len(after), len(entries), "the same directories, rewritten in place")
}
