package cli

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestValidateShowsTheSuiteFile: validate names the suite file and what each task took
// from it; the inherited values are the ones the oracle runs under; the suite file's
// problems come with its own positions.
func TestValidateShowsTheSuiteFile(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	suite := writeTask(t, dir, "runner.yaml", "tools: [write_file]\nsandbox: none\nmax_steps: 5\n")
	task := writeTask(t, dir, "hello.yaml", `prompt: Write hello to out.txt.
max_steps: 4
assert:
  - file_contains: {path: out.txt, text: hello}
reference:
  - write_file: {path: out.txt, content: "hello\n"}
  - task_complete: {summary: Wrote hello.}
`)
	code, stdout, stderr := invoke(t, "validate", dir)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, is.Contains(stdout, "suite file "+suite+": 1 task(s) inherit tools, sandbox\n"))
	code, stdout, stderr = invoke(t, "validate", "--oracle", task)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, is.Contains(stdout, "every reference solution passes"))

	// A suite limit the reference cannot meet fails the oracle: the run used it.
	writeTask(t, dir, "runner.yaml", "tools: [write_file]\nsandbox: none\nmax_steps: 1\n")
	writeTask(t, dir, "hello.yaml", "prompt: Write hello.\nassert:\n  - file_contains: {path: out.txt, text: hello}\nreference:\n"+
		"  - write_file: {path: out.txt, content: \"hello\\n\"}\n  - task_complete: {summary: Wrote hello.}\n")
	code, _, stderr = invoke(t, "validate", "--oracle", task)
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(stderr, "max_steps"), stderr)

	writeTask(t, dir, "runner.yaml", "tools: [write_file]\nmax_stepz: 1\n")
	code, _, stderr = invoke(t, "validate", dir)
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(stderr, suite+`:2:1: max_stepz: unknown field "max_stepz"; did you mean "max_steps"?`), stderr)
}
