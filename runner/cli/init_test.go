package cli

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestInitWritesAFirstSuite: in a subdirectory of a repository, init writes the task and
// the workflow at the repository's root and the output directories into .gitignore, says
// what it wrote and what to run next; the task passes validate --oracle as written. A
// second init refuses, naming every file, and changes nothing.
func TestInitWritesAFirstSuite(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("/bin/\n/runner-out"), 0o644))
	sub := filepath.Join(root, "src", "deep")
	assert.NilError(t, os.MkdirAll(sub, 0o755))
	t.Chdir(sub)

	code, stdout, stderr := invoke(t, "init")
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, is.Contains(stdout, "wrote scenarios/first-task.yaml"))
	assert.Check(t, is.Contains(stdout, "wrote .github/workflows/agents.yml"))
	assert.Check(t, is.Contains(stdout, "added bench-out/ to .gitignore"))
	assert.Check(t, is.Contains(stdout, "Next: runner run --model oracle scenarios/"))
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	assert.NilError(t, err)
	assert.Equal(t, string(ignore), "/bin/\n/runner-out\n# runner's output (runner run, runner bench)\nbench-out/\n")
	wf, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "agents.yml"))
	assert.NilError(t, err)
	assert.Equal(t, string(wf), initWorkflow)

	task := filepath.Join(root, "scenarios", "first-task.yaml")
	code, stdout, stderr = invoke(t, "validate", "--oracle", filepath.Join(root, "scenarios"))
	assert.Equal(t, code, ExitOK, "the first task must pass with its reference solution: %s", stderr)
	assert.Check(t, is.Contains(stdout, "every reference solution passes"))

	// The task's checks can fail: the untouched workspace does not pass them.
	code, _, stderr = invoke(t, "run", "--model", "oracle:fail=1,seed=1", "--out", filepath.Join(t.TempDir(), "out"), task)
	assert.Equal(t, code, ExitFailed, stderr)

	assert.NilError(t, os.WriteFile(task, []byte("# mine\nprompt: mine\n"), 0o644))
	code, stdout, stderr = invoke(t, "init")
	assert.Equal(t, code, ExitUsage)
	assert.Equal(t, stdout, "")
	assert.Check(t, is.Contains(stderr, "scenarios/first-task.yaml, .github/workflows/agents.yml already exist(s)"))
	assert.Check(t, is.Contains(stderr, "nothing was written"))
	mine, _ := os.ReadFile(task)
	assert.Equal(t, string(mine), "# mine\nprompt: mine\n")
	again, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
	assert.Equal(t, string(again), string(ignore))
}

// TestInitOutsideARepository writes into the current directory and creates .gitignore.
func TestInitOutsideARepository(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, _, stderr := invoke(t, "init")
	assert.Equal(t, code, ExitOK, stderr)
	ignore, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	assert.NilError(t, err)
	assert.Equal(t, string(ignore), "# runner's output (runner run, runner bench)\nrunner-out/\nbench-out/\n")
	_, err = os.Stat(filepath.Join(dir, "scenarios", "first-task.yaml"))
	assert.NilError(t, err)
}

// TestInitWorkflowIsTheExample: the workflow init writes is examples/github-workflow.yml,
// which make lint-actions runs actionlint on and docs/ci.md shows.
func TestInitWorkflowIsTheExample(t *testing.T) {
	example, err := os.ReadFile("../../examples/github-workflow.yml")
	assert.NilError(t, err)
	assert.Equal(t, initWorkflow, string(example))
}
