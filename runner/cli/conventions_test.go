package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestUnknownCommand(t *testing.T) {
	code, stdout, stderr := invoke(t, "nosuch")
	assert.Equal(t, code, ExitUsage)
	assert.Equal(t, stdout, "")
	assert.Check(t, is.Contains(stderr, `runner: unknown command "nosuch" (commands: run, bench, validate,`))
	_, _, stderr = invoke(t, "rn")
	assert.Check(t, is.Contains(stderr, `runner: unknown command "rn"; did you mean "run"?`))
	_, _, stderr = invoke(t, "run", "--modle", "oracle", "x.yaml")
	assert.Check(t, is.Contains(stderr, `runner: run: unknown flag --modle; did you mean --model?`))
}

func TestBadFlagValueNamesFlagAndForm(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--timeout", "5", "x"}, `runner: run: --timeout "5": want a duration such as 90s, 5m or 1h30m`},
		{[]string{"run", "-j", "many", "x"}, `runner: run: --parallel "many": want a whole number`},
		{[]string{"run", "--shard", "5/4", "x"}, `runner: run: --shard "5/4": want I/N with 1 <= I <= N`},
		{[]string{"run", "--nope", "x"}, `runner: run: unknown flag --nope (see runner run --help)`},
		{[]string{"run", "--resume", "a", "--rerun-failed", "b", "x"}, "give one of them"},
	} {
		code, stdout, stderr := invoke(t, tc.args...)
		assert.Equal(t, code, ExitUsage, "%v", tc.args)
		assert.Check(t, is.Contains(stderr, tc.want), "%v", tc.args)
		assert.Check(t, !strings.Contains(stdout+stderr, "USAGE:"), "%v: no help dump", tc.args)
	}
}

func TestHelpShowsPlaceholdersEnvAndExamples(t *testing.T) {
	_, stdout, _ := invoke(t, "run", "--help")
	for _, want := range []string{
		"--timeout DURATION", "--model PROVIDER:MODEL", "--max-steps N", "(default: the task's)",
		"--shard I/N", "OPENAI_BASE_URL", "OLLAMA_HOST", "OPENAI_API_KEY", "Examples:",
	} {
		assert.Check(t, is.Contains(stdout, want))
	}
	_, stdout, _ = invoke(t, "bench", "--help")
	for _, want := range []string{
		"Examples:", "runner bench -m ollama:qwen3:4b -m ollama:qwen3:8b --repeat 5 scenarios/",
		"oracle:fail=0.3,seed=1", "runner bench compare", "OLLAMA_HOST",
	} {
		assert.Check(t, is.Contains(stdout, want))
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := invoke(t, "--version")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.HasPrefix(stdout, "runner devel"), stdout)
	_, again, _ := invoke(t, "version")
	assert.Equal(t, again, stdout)
}

// Each completion script is what its shell can load: bash and zsh parse it, fish gets
// the generated script with every command in it.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, stdout, stderr := invoke(t, "completion", shell)
		assert.Equal(t, code, 0, stderr)
		assert.Check(t, is.Contains(stdout, "runner"))
		if shell == "fish" {
			assert.Check(t, is.Contains(stdout, "complete -c runner"))
			assert.Check(t, is.Contains(stdout, "merge"))
			assert.Check(t, is.Contains(stdout, "__fish_seen_subcommand_from run bench validate check' -k -a '(__fish_complete_suffix .yaml"))
			continue
		}
		assert.Check(t, is.Contains(stdout, "--generate-bash-completion"))
		if bin, err := exec.LookPath(shell); err == nil {
			f := filepath.Join(t.TempDir(), "c."+shell)
			assert.NilError(t, os.WriteFile(f, []byte(stdout), 0o644))
			out, err := exec.Command(bin, "-n", f).CombinedOutput()
			assert.NilError(t, err, "%s -n: %s", shell, out)
		}
	}
	code, _, stderr := invoke(t, "completion", "tcsh")
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(stderr, "want bash, zsh or fish"))
	// tests/completion_test.go drives the bash script with the built binary.
}

// The binary's answer to the scripts' question (words, then the word being completed):
// task files for run's arguments, never urfave's "help h".
func TestCompletionAnswers(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{""}, "run\nbench\n"},
		{[]string{"run", ""}, ":taskfiles\n"},
		{[]string{"run", "--model", "oracle", "a.yaml", ""}, ":taskfiles\n"},
		{[]string{"run", "--out", ""}, ":dirs\n"},
		{[]string{"run", "--filter", ""}, ""},
		{[]string{"bench", ""}, "compare\n:taskfiles\n"},
		{[]string{"policy", ""}, "check\n"},
		{[]string{"policy", "check", ""}, ":taskfiles\n"},
		{[]string{"show", ""}, ":dirs\n"},
		{[]string{"run", "--kee"}, "--keep-workspaces\n"},
	} {
		code, stdout, stderr := invoke(t, append(tc.words, "--generate-bash-completion")...)
		assert.Equal(t, code, 0, stderr)
		if tc.want == "" {
			assert.Check(t, is.Equal(stdout, ""), "%q", tc.words)
			continue
		}
		assert.Check(t, strings.HasPrefix(stdout, tc.want), "%q: %q", tc.words, stdout)
		assert.Check(t, !strings.Contains(stdout, "help\n"), "%q: %q", tc.words, stdout)
	}
}

func executeWithEnv(t *testing.T, env map[string]string, tty bool, paths ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	err := Execute(context.Background(), RunOptions{
		Paths: paths, Model: DefaultModel, OutDir: t.TempDir(), Parallel: 1, Repeat: 1,
		TTY: &tty, Getenv: func(k string) string { return env[k] },
		IO: IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &bytes.Buffer{}},
	})
	return exitCode(err, &bytes.Buffer{}), out.String()
}

func TestNoColorAndDumbTerminal(t *testing.T) {
	dir := t.TempDir()
	p := writeTask(t, dir, "wrong.yaml", failingTask)
	_, colour := executeWithEnv(t, nil, true, p)
	assert.Check(t, strings.Contains(colour, "\x1b["), "a terminal gets colour")
	_, plain := executeWithEnv(t, map[string]string{"NO_COLOR": "1"}, true, p)
	assert.Check(t, !strings.Contains(plain, "\x1b[3"), "NO_COLOR: %q", plain)
	_, dumb := executeWithEnv(t, map[string]string{"TERM": "dumb"}, true, p)
	assert.Check(t, !strings.Contains(dumb, "\x1b") && !strings.Contains(dumb, "\r"), "TERM=dumb: %q", dumb)
}

// On GitHub Actions a run annotates the failed assertion's line and writes the summary.
func TestGitHubActionsOutputs(t *testing.T) {
	dir := t.TempDir()
	p := writeTask(t, dir, "wrong.yaml", failingTask)
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, out := executeWithEnv(t, map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary}, false, p)
	assert.Equal(t, code, ExitFailed)
	assert.Check(t, is.Contains(out, "::error file="+p+",line=6,title=wrong::file_contains: out.txt does not contain"))
	b, err := os.ReadFile(summary)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), "| ❌ | wrong ("+p+":6) |"))
}
