package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestBashCompletionOffersTaskFiles loads `runner completion bash` into bash and presses
// TAB as a user would (COMP_WORDS, COMP_CWORD): `runner run <TAB>` offers the task files
// and directories, not urfave's "help h", and names with spaces stay one candidate.
func TestBashCompletionOffersTaskFiles(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH")
	}
	script := runner(t, run{Args: []string{"completion", "bash"}})
	assert.Equal(t, script.Code, 0)
	dir := t.TempDir()
	for _, f := range []string{"fix bug.yaml", "b.yml", "notes.txt", "scenarios/x.yaml", "runner-out/r/result.json"} {
		p := filepath.Join(dir, f)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, nil, 0o644))
	}
	scriptFile := filepath.Join(t.TempDir(), "runner.bash")
	assert.NilError(t, os.WriteFile(scriptFile, []byte(script.Stdout), 0o644))
	// press completes the last of words; it prints COMPREPLY one candidate a line.
	press := func(words ...string) []string {
		t.Helper()
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		prog := "source " + scriptFile + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\n" +
			"COMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n" +
			"_runner_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		cmd.Dir = dir
		cmd.Env = append(baseEnv(t), "PATH="+filepath.Dir(runnerBin)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		assert.NilError(t, err, "%s", out)
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		slices.Sort(got)
		return slices.DeleteFunc(got, func(s string) bool { return s == "" })
	}
	// runnerBin is named "runner", as the script's `complete` line expects.
	assert.Equal(t, filepath.Base(runnerBin), "runner")
	assert.DeepEqual(t, press("runner", "run", ""), []string{"b.yml", "fix bug.yaml", "runner-out", "scenarios"})
	assert.DeepEqual(t, press("runner", "validate", "--oracle", "f"), []string{"fix bug.yaml"})
	assert.DeepEqual(t, press("runner", "run", "scenarios/"), []string{"scenarios/x.yaml"})
	assert.DeepEqual(t, press("runner", "bench", "c"), []string{"compare"})
	assert.DeepEqual(t, press("runner", "run", "--out", ""), []string{"runner-out", "scenarios"})
	assert.DeepEqual(t, press("runner", "view", "r"), []string{"runner-out"})
	assert.DeepEqual(t, press("runner", "run", "--rep"), []string{"--repeat", "--replay"})
	assert.DeepEqual(t, press("runner", "me"), []string{"merge"})
	assert.DeepEqual(t, press("runner", "completion", ""), []string{"bash", "fish", "zsh"})
	assert.DeepEqual(t, press("runner", "policy", ""), []string{"check"})
}
