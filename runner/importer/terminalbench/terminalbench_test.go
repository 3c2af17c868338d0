package terminalbench

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/importer/internal/importtest"
)

// task writes a Terminal-Bench task directory: files by path, relative to it.
func task(t *testing.T, files map[string]string) string {
	t.Helper()
	return importtest.Dir(t, "tb-task", files)
}

func base() map[string]string {
	return map[string]string{
		"task.yaml": "instruction: Fix it.\nauthor_name: Ann\ndifficulty: easy\ncategory: files\ntags: [a]\n" +
			"max_agent_timeout_sec: 60\nmax_test_timeout_sec: 20\n",
		"Dockerfile":      "FROM alpine\nWORKDIR /srv\n",
		"solution.sh":     "echo ok\n",
		"run-tests.sh":    "pytest $TEST_DIR -rA\n",
		"tests/t_test.py": "def test(): pass\n",
	}
}

func with(files map[string]string, kv ...string) map[string]string {
	return importtest.With(files, kv...)
}

func TestConvertACompleteTask(t *testing.T) {
	dir := task(t, base())
	assert.Assert(t, IsTask(dir))
	s, err := Convert(dir)
	assert.NilError(t, err)
	assert.Equal(t, s.Name, "tb-task")
	assert.Equal(t, s.Prompt, "Fix it.")
	assert.Equal(t, s.Timeout, time.Minute)
	assert.Equal(t, s.TestTimeout, 20*time.Second)
	assert.DeepEqual(t, s.Tags, []string{"a", "difficulty:easy", "category:files", "author:Ann", "source:terminal-bench"})
	assert.Equal(t, s.Dockerfile, filepath.Join(dir, "Dockerfile"))
	assert.Equal(t, s.Workdir, "/srv")
	assert.Equal(t, s.Solution, "echo ok\n")
	assert.Equal(t, s.VerifyCopy, filepath.Join(dir, "tests"))
	assert.Equal(t, s.VerifyFiles["run-tests.sh"], "pytest $TEST_DIR -rA\n")
	assert.Equal(t, s.Format, "pytest")
	assert.DeepEqual(t, s.Env, map[string]string{"TEST_DIR": "/tests"})
	assert.Equal(t, len(s.Notes), 0, "%v", s.Notes)
}

// The older descriptions list, an image from compose, a keystroke solution and another
// parser: each kept as far as runner can, the rest said in a note.
func TestConvertOlderAndOtherForms(t *testing.T) {
	files := with(base(),
		"task.yaml", "descriptions:\n  - key: hard\n    description: The hard one.\n  - key: base\n    description: The base one.\n"+
			"parser_name: swebench\nrun_tests_in_same_shell: true\n",
		"Dockerfile", "", "solution.sh", "", "solution.yaml", "- keys: ls\n", "tests/t_test.py", "",
		"docker-compose.yaml", "services:\n  client:\n    image: ghcr.io/x/y:1\n    environment:\n      K: v\n    ports: [\"1:1\"]\n")
	s, err := Convert(task(t, files))
	assert.NilError(t, err)
	assert.Equal(t, s.Prompt, "The base one.")
	assert.Equal(t, s.Image, "ghcr.io/x/y:1")
	assert.Equal(t, s.Format, "")
	assert.Equal(t, s.VerifyCopy, "")
	assert.DeepEqual(t, s.Env, map[string]string{"TEST_DIR": "/tests", "K": "v"})
	notes := strings.Join(s.Notes, "\n")
	for _, want := range []string{"2 descriptions: only the base one", "run_tests_in_same_shell", `compose key "ports"`,
		"keystroke solution (solution.yaml)", `parser "swebench"`} {
		assert.Check(t, is.Contains(notes, want))
	}

	s, err = Convert(task(t, with(base(), "solution.sh", "")))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(strings.Join(s.Notes, "\n"), "no solution.sh: no reference:"))
}

// A task that cannot run says which file is wrong.
func TestConvertErrors(t *testing.T) {
	for want, files := range map[string]map[string]string{
		"task.yaml: ":                                     with(base(), "task.yaml", "instruction: [\n"),
		"task.yaml has no instruction":                    with(base(), "task.yaml", "difficulty: easy\n"),
		"no Dockerfile and no image":                      with(base(), "Dockerfile", ""),
		"run-tests.sh: ":                                  with(base(), "run-tests.sh", ""),
		"compose services a, b":                           with(base(), "compose.yaml", "services:\n  a: {}\n  b: {}\n"),
		"no such file or directory":                       with(base(), "task.yaml", ""),
		"task.yaml:1:65: nested more than 64 levels deep": with(base(), "task.yaml", strings.Repeat("[", 60000)),
	} {
		_, err := Convert(task(t, files))
		assert.ErrorContains(t, err, want)
	}
}
