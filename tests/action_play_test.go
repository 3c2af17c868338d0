package tests

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// played is what playing action.yml's steps left: the action's outputs, the job summary,
// the artifacts it would upload, and whether the step failed.
type played struct {
	Outputs map[string]string
	Summary string
	Uploads map[string]string // artifact name -> its path: lines
	Failed  bool
	Log     string
}

// skipSteps are the steps that install runner: the test puts the binary it built on PATH.
var skipSteps = map[string]bool{"Build runner from the action's checkout": true, "Download the runner release": true}

// playAction runs action.yml's composite steps as GitHub's runner would, in dir: each run:
// step with bash -e -o pipefail, its env: expressions filled in from the inputs and earlier
// steps' outputs, $GITHUB_OUTPUT read back after it, `if:` conditions honoured (after a
// failure only always() steps run). uses: steps are recorded, not run. The expressions are
// the small subset action.yml uses; anything else fails the test, so the action stays
// within what is played here.
func playAction(t *testing.T, dir string, inputs map[string]string, env []string) played {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "action.yml"))
	assert.NilError(t, err)
	var a actionFile
	assert.NilError(t, yaml.Unmarshal(raw, &a))
	in := map[string]string{}
	for name, i := range a.Inputs {
		if i.Default != nil {
			in[name] = *i.Default
		}
	}
	for k, v := range inputs {
		_, ok := a.Inputs[k]
		assert.Assert(t, ok, "input %s is not declared", k)
		in[k] = v
	}
	in["github-token"] = "test-token"
	tmp := t.TempDir()
	// The action's own folder, as GitHub sets it for a composite action's steps.
	actionPath, err := filepath.Abs("..")
	assert.NilError(t, err)
	summary := filepath.Join(tmp, "summary.md")
	steps := map[string]map[string]string{}
	ev := &evaluator{t: t, inputs: in, steps: steps}
	p := played{Outputs: map[string]string{}, Uploads: map[string]string{}}
	var log strings.Builder
	for i, s := range a.Runs.Steps {
		if skipSteps[s.Name] || !ev.cond(s.If, p.Failed) {
			continue
		}
		if s.Uses != "" {
			if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
				p.Uploads[ev.fill(s.With["name"])] = ev.fill(s.With["path"])
			}
			continue
		}
		out := filepath.Join(tmp, "output-"+s.ID+"-"+string(rune('a'+i)))
		assert.NilError(t, os.WriteFile(out, nil, 0o644))
		script := filepath.Join(tmp, "step.sh")
		assert.NilError(t, os.WriteFile(script, []byte(s.Run), 0o644))
		cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", script)
		cmd.Dir = dir
		cmd.Env = append(append(baseEnv(t), env...), "GITHUB_OUTPUT="+out, "GITHUB_STEP_SUMMARY="+summary,
			"GITHUB_PATH="+filepath.Join(tmp, "path"), "RUNNER_TEMP="+tmp, "GITHUB_ACTION_PATH="+actionPath)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+ev.fill(v))
		}
		b, err := cmd.CombinedOutput()
		log.WriteString("== " + s.Name + "\n" + string(b))
		if err != nil {
			p.Failed = true
		}
		if s.ID != "" {
			steps[s.ID] = readOutputs(t, out)
		}
	}
	for name, o := range a.Outputs {
		p.Outputs[name] = ev.fill(o.Value)
	}
	sum, _ := os.ReadFile(summary)
	p.Summary, p.Log = string(sum), log.String()
	return p
}

func readOutputs(t *testing.T, path string) map[string]string {
	f, err := os.Open(path)
	assert.NilError(t, err)
	defer func() { _ = f.Close() }() // read only
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

// evaluator fills in the expressions action.yml uses.
type evaluator struct {
	t      *testing.T
	inputs map[string]string
	steps  map[string]map[string]string
}

var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// fill replaces every ${{ }} in s.
func (e *evaluator) fill(s string) string {
	return exprRe.ReplaceAllStringFunc(s, func(m string) string {
		return e.value(exprRe.FindStringSubmatch(m)[1])
	})
}

// value is an expression's value: a || b || 'lit' of inputs.X, steps.ID.outputs.X, github.X.
func (e *evaluator) value(expr string) string {
	for _, alt := range strings.Split(expr, " || ") {
		var v string
		switch {
		case strings.HasPrefix(alt, "'") && strings.HasSuffix(alt, "'"):
			v = strings.Trim(alt, "'")
		case strings.HasPrefix(alt, "inputs."):
			v = e.inputs[strings.TrimPrefix(alt, "inputs.")]
		case strings.HasPrefix(alt, "steps."):
			parts := strings.Split(alt, ".")
			if len(parts) != 4 || parts[2] != "outputs" {
				e.t.Fatalf("action.yml: expression %q is not steps.ID.outputs.NAME", alt)
			}
			v = e.steps[parts[1]][parts[3]]
		case strings.HasPrefix(alt, "github."):
			v = "" // github.action_path, github.action_repository: not used by the played steps
		default:
			e.t.Fatalf("action.yml: expression %q is outside what the test plays", alt)
		}
		if v != "" {
			return v
		}
	}
	return ""
}

// cond evaluates an if: (terms joined by &&); "" is success().
func (e *evaluator) cond(expr string, failed bool) bool {
	if expr == "" {
		return !failed
	}
	always := false
	ok := true
	for _, term := range strings.Split(expr, " && ") {
		term = strings.TrimSpace(term)
		switch {
		case term == "always()":
			always = true
		case term == "success()":
			ok = ok && !failed
		case strings.Contains(term, " == "):
			l, r, _ := strings.Cut(term, " == ")
			ok = ok && e.value(l) == e.value(r)
		case strings.Contains(term, " != "):
			l, r, _ := strings.Cut(term, " != ")
			ok = ok && e.value(l) != e.value(r)
		default:
			e.t.Fatalf("action.yml: condition %q is outside what the test plays", term)
		}
	}
	return ok && (always || !failed)
}

// actionTasks writes two tasks the oracle solves.
func actionTasks(t *testing.T) string {
	dir := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(dir, "tasks"), 0o755))
	for _, name := range []string{"alpha", "beta"} {
		task := "name: " + name + `
prompt: Write ok to out.txt.
tools: [write_file]
sandbox: none
assert:
  - file_contains: {path: out.txt, text: ok}
reference:
  - write_file: {path: out.txt, content: "ok\n"}
  - task_complete: {summary: done}
`
		assert.NilError(t, os.WriteFile(filepath.Join(dir, "tasks", name+".yaml"), []byte(task), 0o644))
	}
	return dir
}

// fakeGH is a gh that answers `gh run list` with runID ("" for none) and `gh run download`
// from artifacts/NAME/, logging its arguments.
func fakeGH(t *testing.T, runID string) (bin, artifacts, logFile string) {
	bin, artifacts = t.TempDir(), t.TempDir()
	logFile = filepath.Join(bin, "gh.log")
	script := `#!/bin/sh
echo "$*" >> "` + logFile + `"
case "$1 $2" in
"run list") [ -n "` + runID + `" ] && echo "` + runID + `"; exit 0 ;;
"run download")
  while [ $# -gt 0 ]; do case "$1" in --name) name=$2; shift ;; --dir) dir=$2; shift ;; esac; shift; done
  [ -d "` + artifacts + `/$name" ] || { echo "no artifact $name" >&2; exit 1; }
  mkdir -p "$dir" && cp "` + artifacts + `/$name"/* "$dir/" ;;
*) echo "unexpected gh $*" >&2; exit 1 ;;
esac
`
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "gh"), []byte(script), 0o755))
	return bin, artifacts, logFile
}

// TestActionBench plays the action's bench: a first night with nothing to compare, a
// night compared with the previous night's artifact (found through gh, as in a workflow)
// that passes, and one whose model dropped: the gate fails the step with exit code 1.
func TestActionBench(t *testing.T) {
	dir := actionTasks(t)
	ghBin, _, ghLog := fakeGH(t, "")
	env := []string{"PATH=" + ghBin + ":" + filepath.Dir(runnerBin) + ":" + os.Getenv("PATH"),
		"GITHUB_WORKFLOW_REF=acme/app/.github/workflows/nightly.yml@refs/heads/main", "GITHUB_REF_NAME=main", "GITHUB_REPOSITORY=acme/app"}
	inputs := map[string]string{"command": "bench", "paths": "tasks/", "models": "oracle", "repeat": "3", "parallel": "2",
		"out": "bench-out", "baseline": "previous", "artifact-name": "nightly", "install-sandbox": "false"}

	first := playAction(t, dir, inputs, env)
	assert.Assert(t, !first.Failed, first.Log)
	assert.DeepEqual(t, first.Outputs["exit-code"], "0")
	assert.Equal(t, first.Outputs["passed"], "6", first.Log)
	assert.Equal(t, first.Outputs["failed"], "0")
	assert.Equal(t, first.Outputs["baseline"], "")
	assert.Check(t, is.Contains(first.Summary, "| 1 | oracle | 100%"))
	assert.Check(t, is.Contains(first.Summary, "No baseline: nothing was compared."))
	assert.Check(t, is.Contains(first.Log, "No successful run of nightly.yml on main yet"))
	assert.Check(t, is.Contains(first.Uploads["nightly-bench"], "bench-out/bench.json"))
	assert.Check(t, is.Equal(first.Uploads["nightly"], "bench-out"))
	logged, _ := os.ReadFile(ghLog)
	assert.Check(t, is.Contains(string(logged), "run list --workflow nightly.yml --branch main --status success --limit 1"))

	// The previous night's artifact is the baseline.
	ghBin, artifacts, ghLog := fakeGH(t, "77")
	env[0] = "PATH=" + ghBin + ":" + filepath.Dir(runnerBin) + ":" + os.Getenv("PATH")
	assert.NilError(t, os.MkdirAll(filepath.Join(artifacts, "nightly-bench"), 0o755))
	benchJSON, err := os.ReadFile(filepath.Join(dir, "bench-out", "bench.json"))
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(artifacts, "nightly-bench", "bench.json"), benchJSON, 0o644))
	assert.NilError(t, os.RemoveAll(filepath.Join(dir, "bench-out")))
	second := playAction(t, dir, inputs, env)
	assert.Assert(t, !second.Failed, second.Log)
	assert.Check(t, strings.HasSuffix(second.Outputs["baseline"], "runner-baseline/bench.json"), second.Outputs["baseline"])
	assert.Check(t, is.Contains(second.Log, "compared"), "bench compared with the baseline:\n%s", second.Log)
	logged, _ = os.ReadFile(ghLog)
	assert.Check(t, is.Contains(string(logged), "run download 77 --name nightly-bench --dir "))

	// A model that now fails everything it passed last night: the gate fails the step.
	var doc map[string]any
	assert.NilError(t, json.Unmarshal(benchJSON, &doc))
	doc["models"].([]any)[0].(map[string]any)["name"] = "oracle:fail=1,seed=1"
	b, err := json.Marshal(doc)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(artifacts, "nightly-bench", "bench.json"), b, 0o644))
	assert.NilError(t, os.RemoveAll(filepath.Join(dir, "bench-out")))
	inputs["models"] = "oracle:fail=1,seed=1"
	third := playAction(t, dir, inputs, env)
	assert.Assert(t, third.Failed, third.Log)
	assert.Equal(t, third.Outputs["exit-code"], "1", third.Log)
	assert.Equal(t, third.Outputs["failed"], "6")
	assert.Check(t, is.Contains(third.Log, "REGRESSION oracle:fail=1,seed=1"))
	assert.Check(t, is.Contains(third.Summary, "oracle:fail=1,seed=1"))
	assert.Check(t, is.Contains(third.Uploads["nightly-bench"], "bench-out/bench.json"), "a failed night still uploads its reports")
}

// TestActionRunAndBadCommand: the run path still runs (the bench steps stay out of it),
// and a command that is neither run nor bench fails before anything runs.
func TestActionRunAndBadCommand(t *testing.T) {
	dir := actionTasks(t)
	env := []string{"PATH=" + filepath.Dir(runnerBin) + ":" + os.Getenv("PATH")}
	p := playAction(t, dir, map[string]string{"paths": "tasks/", "model": "oracle", "install-sandbox": "false"}, env)
	assert.Assert(t, !p.Failed, p.Log)
	assert.Equal(t, p.Outputs["passed"], "2", p.Log)
	assert.Equal(t, p.Outputs["exit-code"], "0")
	assert.Check(t, !strings.Contains(p.Log, "== Bench"))
	_, bench := p.Uploads["runner-out-bench"]
	assert.Check(t, !bench, "run uploads no bench reports")

	// A failing suite fails the step and says its exit code (GitHub's bash runs with -e).
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "tasks", "gamma.yaml"), []byte("name: gamma\nprompt: p\nsandbox: none\n"+
		"assert:\n  - file_exists: never.txt\nreference:\n  - task_complete: {summary: done}\n"), 0o644))
	p = playAction(t, dir, map[string]string{"paths": "tasks/", "model": "oracle", "install-sandbox": "false"}, env)
	assert.Assert(t, p.Failed, p.Log)
	assert.Equal(t, p.Outputs["exit-code"], "1", p.Log)
	assert.Equal(t, p.Outputs["failed"], "1", p.Log)

	p = playAction(t, dir, map[string]string{"command": "benchh", "install-sandbox": "false"}, env)
	assert.Assert(t, p.Failed)
	assert.Check(t, is.Contains(p.Log, "command: want run or bench, got 'benchh'"))
	assert.Check(t, !strings.Contains(p.Log, "== Run\n"), "nothing ran")
}
