package cli

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestViewSeveralRuns: two real runs of the same task, one passing and one failing, side
// by side: the console lists both with their pass rates and the verdict that changed, and
// the comparison's pages are written beside neither run.
func TestViewSeveralRuns(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	task := writeTask(t, dir, "hello.yaml", passingTask)
	one, two, cmp := filepath.Join(dir, "one"), filepath.Join(dir, "two"), filepath.Join(dir, "cmp")
	code, _, stderr := invoke(t, runArgs(one, "--model", "oracle", task)...)
	assert.Equal(t, code, ExitOK, stderr)
	code, _, stderr = invoke(t, runArgs(two, "--model", "oracle:fail=1,seed=1", task)...)
	assert.Equal(t, code, ExitFailed, stderr)

	code, stdout, stderr := invoke(t, "view", one, two, "--out", cmp)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, is.Contains(stdout, "oracle                100% (1/1)"), stdout)
	assert.Check(t, is.Contains(stdout, "oracle:fail=1,seed=1  0% (0/1)"), stdout)
	assert.Check(t, is.Contains(stdout, "run 1 -> 2: hello: passed -> failed"), stdout)
	assert.Check(t, is.Contains(stdout, filepath.Join(cmp, "index.html")))
	pages, err := filepath.Glob(filepath.Join(cmp, "run2", "hello-*.html"))
	assert.NilError(t, err)
	assert.Equal(t, len(pages), 1)
	b, err := os.ReadFile(pages[0])
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), "<td><code>file_contains</code></td>"))

	code, _, stderr = invoke(t, "view", one, two, "--out", two)
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(stderr, "is one of the runs"))
}
