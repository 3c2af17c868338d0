package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"gotest.tools/v3/assert"
)

// actionFile is action.yml's shape. actionlint checks workflows (and, through `uses: ./`,
// that they pass only inputs action.yml declares) but not action.yml itself, so this
// test decodes it strictly and checks what GitHub would otherwise only find at run time.
type actionFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    map[string]string
	Inputs      map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
		Required    bool    `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	With             map[string]string `yaml:"with"`
	Run              string            `yaml:"run"`
	Shell            string            `yaml:"shell"`
	Env              map[string]string `yaml:"env"`
	WorkingDirectory string            `yaml:"working-directory"`
	ContinueOnError  bool              `yaml:"continue-on-error"`
}

var (
	inputRef  = regexp.MustCompile(`inputs\.([\w-]+)`)
	stepRef   = regexp.MustCompile(`steps\.([\w-]+)\.outputs\.([\w-]+)`)
	setOutput = regexp.MustCompile(`(?m)"?([\w-]+)=[^"\n]*"?\s*>>\s*"\$GITHUB_OUTPUT"|"([\w-]+)=\\\(`)
)

func TestActionDefinition(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "action.yml"))
	assert.NilError(t, err)
	var a actionFile
	assert.NilError(t, yaml.UnmarshalWithOptions(raw, &a, yaml.Strict()), "action.yml has an unknown key")
	assert.Assert(t, a.Name != "" && a.Description != "")
	assert.Equal(t, a.Runs.Using, "composite")

	for name, in := range a.Inputs {
		assert.Assert(t, in.Description != "", "input %s has no description", name)
		assert.Assert(t, in.Default != nil || in.Required, "input %s has neither a default nor required", name)
	}
	for _, m := range inputRef.FindAllStringSubmatch(string(raw), -1) {
		_, ok := a.Inputs[m[1]]
		assert.Assert(t, ok, "action.yml uses inputs.%s, which it does not declare", m[1])
	}
	for _, want := range []string{"paths", "model", "parallel", "junit", "json", "shard", "args", "version",
		"command", "models", "repeat", "baseline", "gate"} {
		_, ok := a.Inputs[want]
		assert.Assert(t, ok, "the issue asks for input %s", want)
	}

	ids := map[string]string{} // step id -> run script
	for i, s := range a.Runs.Steps {
		assert.Assert(t, (s.Uses == "") != (s.Run == ""), "step %d (%s): exactly one of uses and run", i, s.Name)
		if s.Run != "" {
			assert.Assert(t, s.Shell != "", "step %d (%s): a composite run step needs shell", i, s.Name)
			// Inputs reach scripts through env only: ${{ }} inside a script is text
			// substitution, and a crafted input would become shell code.
			assert.Assert(t, !strings.Contains(s.Run, "${{"), "step %d (%s): ${{ }} inside run:", i, s.Name)
		}
		if s.ID != "" {
			_, dup := ids[s.ID]
			assert.Assert(t, !dup, "step id %s twice", s.ID)
			ids[s.ID] = s.Run
		}
	}
	for _, want := range []string{"passed", "failed", "errored", "junit"} {
		_, ok := a.Outputs[want]
		assert.Assert(t, ok, "the issue asks for output %s", want)
	}
	for name, out := range a.Outputs {
		refs := stepRef.FindAllStringSubmatch(out.Value, -1)
		assert.Assert(t, refs != nil, "output %s: value %q names no step output", name, out.Value)
		for _, m := range refs {
			script, ok := ids[m[1]]
			assert.Assert(t, ok, "output %s: no step with id %s", name, m[1])
			assert.Assert(t, setsOutput(script, m[2]), "output %s: step %s never writes %s to GITHUB_OUTPUT", name, m[1], m[2])
		}
	}
	shellCheck(t, a.Runs.Steps)
}

// setsOutput: the script writes name=... to $GITHUB_OUTPUT (directly, or from jq).
func setsOutput(script, name string) bool {
	for _, m := range setOutput.FindAllStringSubmatch(script, -1) {
		if m[1] == name || m[2] == name {
			return true
		}
	}
	return false
}

// shellCheck parses every run script with bash -n, and lints it with shellcheck where it
// is installed (.ci/run installs it; in CI it must be there).
func shellCheck(t *testing.T, steps []actionStep) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil && os.Getenv("CI") != "" {
		t.Fatalf("CI must lint action.yml's scripts, but shellcheck is missing: %v", err)
	}
	for _, s := range steps {
		if s.Run == "" {
			continue
		}
		f := filepath.Join(t.TempDir(), "step.sh")
		assert.NilError(t, os.WriteFile(f, []byte("#!/usr/bin/env bash\n"+s.Run), 0o644))
		out, err := exec.Command("bash", "-n", f).CombinedOutput()
		assert.NilError(t, err, "step %q: bash -n: %s", s.Name, out)
		if sc != "" {
			var buf bytes.Buffer
			cmd := exec.Command(sc, "--shell=bash", f)
			cmd.Stdout, cmd.Stderr = &buf, &buf
			assert.NilError(t, cmd.Run(), "step %q: shellcheck:\n%s", s.Name, buf.String())
		}
	}
}

// The CI page's workflow is examples/github-workflow.yml verbatim, so actionlint (make
// lint-actions) checks what users copy.
func TestDocsWorkflowIsTheExample(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "docs", "ci.md"))
	assert.NilError(t, err)
	example, err := os.ReadFile(filepath.Join("..", "examples", "github-workflow.yml"))
	assert.NilError(t, err)
	assert.Assert(t, bytes.Contains(page, append(append([]byte("```yaml\n"), example...), "```"...)),
		"docs/ci.md must include examples/github-workflow.yml verbatim in a ```yaml block")
}

// The benchmarking page's nightly workflow is examples/github-nightly.yml verbatim, so
// actionlint (make lint-actions) checks what users copy.
func TestDocsNightlyIsTheExample(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "docs", "benchmarking.md"))
	assert.NilError(t, err)
	example, err := os.ReadFile(filepath.Join("..", "examples", "github-nightly.yml"))
	assert.NilError(t, err)
	assert.Assert(t, bytes.Contains(page, append(append([]byte("```yaml\n"), example...), "```"...)),
		"docs/benchmarking.md must include examples/github-nightly.yml verbatim in a ```yaml block")
	// It uses the action (not a build of its own) for the bench, and keys come from secrets.
	assert.Assert(t, bytes.Contains(example, []byte("uses: agentrunner/runner@")))
	assert.Assert(t, bytes.Contains(example, []byte("command: bench")))
	assert.Assert(t, bytes.Contains(example, []byte("${{ secrets.")))
	assert.Assert(t, !bytes.Contains(example, []byte("go build")) && !bytes.Contains(example, []byte("make build")))
}

// TestExamplesUseDeclaredInputs: actionlint checks the inputs of `uses: ./` but not of
// agentrunner/runner@REF, which the examples use: every with: key they pass is an input
// action.yml declares.
func TestExamplesUseDeclaredInputs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "action.yml"))
	assert.NilError(t, err)
	var a actionFile
	assert.NilError(t, yaml.Unmarshal(raw, &a))
	files, err := filepath.Glob(filepath.Join("..", "examples", "github-*.yml"))
	assert.NilError(t, err)
	uses := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		assert.NilError(t, err)
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Uses string         `yaml:"uses"`
					With map[string]any `yaml:"with"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		assert.NilError(t, yaml.Unmarshal(b, &wf), f)
		for _, job := range wf.Jobs {
			for _, s := range job.Steps {
				if !strings.HasPrefix(s.Uses, "agentrunner/runner@") {
					continue
				}
				uses++
				for k := range s.With {
					_, ok := a.Inputs[k]
					assert.Check(t, ok, "%s passes %s, which action.yml does not declare", f, k)
				}
			}
		}
	}
	assert.Assert(t, uses >= 3, "the examples use the action %d times", uses)
}

// TestActionArgsKeepQuotedWords runs the action's run and bench steps with a stand-in
// runner that records its arguments: the args input (and paths) is split as a shell
// splits words, so a quoted regex with spaces stays one argument (it was split on every
// space), and nothing in it is expanded.
func TestActionArgsKeepQuotedWords(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "action.yml"))
	assert.NilError(t, err)
	var a actionFile
	assert.NilError(t, yaml.Unmarshal(raw, &a))
	scripts := map[string]string{}
	for _, s := range a.Runs.Steps {
		if s.ID == "run" || s.ID == "bench" {
			scripts[s.ID] = s.Run
		}
	}
	assert.Equal(t, len(scripts), 2, "the run and bench steps")
	actionPath, err := filepath.Abs("..")
	assert.NilError(t, err)

	dir := t.TempDir()
	got := filepath.Join(dir, "argv")
	fake := "#!/usr/bin/env bash\n[ \"$1\" = version ] && exit 0\nprintf '%s\\0' \"$@\" > " + got + "\n"
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "runner"), []byte(fake), 0o755))
	run := func(id, args, paths string) ([]string, string, error) {
		_ = os.Remove(got)
		step := filepath.Join(dir, id+".sh")
		assert.NilError(t, os.WriteFile(step, []byte(scripts[id]), 0o644))
		cmd := exec.Command("bash", "-e", step) // GitHub runs bash with -e
		cmd.Env = append(os.Environ(),
			"PATH="+dir+":"+os.Getenv("PATH"), "GITHUB_ACTION_PATH="+actionPath,
			"GITHUB_OUTPUT="+filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY="+filepath.Join(dir, "summary"),
			"TASK_PATHS="+paths, "MODEL=", "MODELS=oracle", "REPEAT=", "GATE=models", "BASELINE=", "PARALLEL=",
			"OUT=runner-out", "JUNIT=", "JSON=r.json", "SHARD=", "ARGS="+args)
		out, err := cmd.CombinedOutput()
		b, _ := os.ReadFile(got)
		var argv []string
		if len(b) > 0 {
			argv = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		}
		return argv, string(out), err
	}
	const args = `--filter 'fix (docs|go)' --var "greeting=hello world" --timeout=5m $HOME`
	want := []string{"--filter", "fix (docs|go)", "--var", "greeting=hello world", "--timeout=5m", "$HOME", "scenarios/", "my tasks/*.yaml"}
	argv, out, err := run("run", args, "scenarios/ 'my tasks/*.yaml'")
	assert.NilError(t, err, out)
	assert.DeepEqual(t, argv, append([]string{"run", "--out", "runner-out", "--json", "r.json"}, want...))
	argv, out, err = run("bench", args, "scenarios/ 'my tasks/*.yaml'")
	assert.NilError(t, err, out)
	assert.DeepEqual(t, argv, append([]string{"bench", "--out", "runner-out", "--models", "oracle,", "--gate", "models"}, want...))

	argv, out, err = run("run", "", "scenarios/")
	assert.NilError(t, err, out)
	// No empty argument from empty args.
	assert.DeepEqual(t, argv, []string{"run", "--out", "runner-out", "--json", "r.json", "scenarios/"})

	argv, out, err = run("run", `--filter 'unclosed`, "scenarios/")
	assert.Assert(t, err != nil, "an unmatched quote stops the step")
	assert.Assert(t, argv == nil, "runner did not run: %v", argv)
	assert.Assert(t, strings.Contains(out, "::error::runner action: the args input has an unmatched quote"), out)
}
