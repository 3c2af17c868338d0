package task

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// writeTask writes files into a temporary directory and returns the path of the first.
func writeTask(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	var first string
	for i := 0; i < len(files); i += 2 {
		p := filepath.Join(dir, files[i])
		assert.NilError(t, os.WriteFile(p, []byte(files[i+1]), 0o644))
		if first == "" {
			first = p
		}
	}
	return first
}

func names(ts []*Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestVarsFillPromptSetupAssertionsAndReference(t *testing.T) {
	p := writeTask(t, "greet.yaml", `vars:
  who: world
  n: 3
prompt: Write hello {{.who}} into out.txt
workspace:
  files:
    tmpl.txt: "{{.who}}"
    code.go: "func f() { return map[string]int{} }{{"
  template: [tmpl.txt]
  setup: ["echo {{.n}}"]
assert:
  - file_contains: {path: out.txt, text: "hello {{.who}}"}
reference:
  - write_file: {path: out.txt, content: "hello {{.who}}"}
`)
	ts, err := LoadAll([]string{p}, testOptions())
	assert.NilError(t, err)
	assert.Equal(t, len(ts), 1)
	got := ts[0]
	assert.Equal(t, got.Name, "greet")
	assert.Equal(t, got.Prompt, "Write hello world into out.txt")
	assert.Equal(t, got.Workspace.Files["tmpl.txt"], "world")
	assert.Equal(t, got.Workspace.Files["code.go"], "func f() { return map[string]int{} }{{", "a file not named by workspace.template is left as written")
	assert.DeepEqual(t, got.Workspace.Setup, []string{"echo 3"})
	assert.Equal(t, got.Assert[0].Spec.(FileContains).Text, "hello world")
	assert.Equal(t, got.Reference[0].Args["content"], "hello world")
	assert.DeepEqual(t, got.Case.Vars, map[string]any{"who": "world", "n": 3})
}

func TestOutsideVarsWinForDeclaredVariables(t *testing.T) {
	p := writeTask(t, "greet.yaml", "vars: {who: world}\nprompt: hello {{.who}}\n")
	opts := testOptions()
	opts.Vars = map[string]any{"who": "runner"}
	ts, err := LoadAll([]string{p}, opts)
	assert.NilError(t, err)
	assert.Equal(t, ts[0].Prompt, "hello runner")

	opts.Vars = map[string]any{"whoo": "x"}
	_, err = LoadAll([]string{p}, opts)
	var unknown *UnknownVarError
	assert.Assert(t, errors.As(err, &unknown), "%v", err)
	assert.ErrorContains(t, err, `variable "whoo" is set but no task declares it; did you mean "who"?`)
}

func TestAFileWithoutVarsIsNotATemplate(t *testing.T) {
	p := writeTask(t, "plain.yaml", "prompt: print {{.x}} literally\n")
	ts, err := LoadAll([]string{p}, testOptions())
	assert.NilError(t, err)
	assert.Equal(t, ts[0].Prompt, "print {{.x}} literally")
	assert.Assert(t, ts[0].Case == nil)
}

func TestUnknownVariableIsAPositionedLoadError(t *testing.T) {
	p := writeTask(t, "bad.yaml", `vars: {who: world}
prompt: |
  line one
  hello {{.whom}}
`)
	_, err := LoadAll([]string{p}, testOptions())
	assert.ErrorContains(t, err, p+`:4:1: prompt: template: no variable "whom"; known: who`)
}

func TestTemplateSyntaxErrorIsPositioned(t *testing.T) {
	p := writeTask(t, "bad.yaml", "vars: {a: 1}\nprompt: ok\nassert:\n  - file_exists: \"{{.a\"\n")
	_, err := LoadAll([]string{p}, testOptions())
	assert.ErrorContains(t, err, p+":4:18: assert[0].file_exists: template: unclosed action")
}

func TestMatrixExpandsTheCrossProductWithExcludeAndInclude(t *testing.T) {
	p := writeTask(t, "build.yaml", `matrix:
  language: [go, python]
  size: [small, large]
  exclude:
    - {language: python, size: large}
  include:
    - {language: go, flags: -race}
    - {language: rust, size: small}
prompt: build {{.language}} {{.size}}{{with .flags}} {{.}}{{end}}
`)
	ts, err := LoadAll([]string{p}, testOptions())
	assert.NilError(t, err)
	assert.DeepEqual(t, names(ts), []string{
		"build[language=go,size=small]", "build[language=go,size=large]",
		"build[language=python,size=small]", "build[language=rust,size=small]",
	})
	assert.Equal(t, ts[0].Prompt, "build go small -race")
	assert.Equal(t, ts[2].Prompt, "build python small")
	assert.Equal(t, ts[3].Prompt, "build rust small")
	assert.Equal(t, ts[1].Case.Task, "build")
	assert.Equal(t, ts[1].Case.Label, "language=go,size=large")
}

func TestMatrixMistakesArePositioned(t *testing.T) {
	p := writeTask(t, "m.yaml", `matrix:
  language: []
  exclude:
    - {lang: go}
prompt: x
`)
	_, err := LoadAll([]string{p}, testOptions())
	assert.ErrorContains(t, err, p+":2:13: matrix.language: an axis needs at least one value")
	assert.ErrorContains(t, err, p+`:4:7: matrix.exclude[0]: "lang" is not an axis of the matrix`)
}

func TestMatrixAndDatasetTogetherAreRefused(t *testing.T) {
	p := writeTask(t, "m.yaml", "matrix: {a: [1]}\ndataset: d.csv\nprompt: x\n", "d.csv", "a\n1\n")
	_, err := LoadAll([]string{p}, testOptions())
	assert.ErrorContains(t, err, ":2:1: dataset: a task takes either matrix: or dataset:")
}

func TestDatasetFormatsGiveACasePerRow(t *testing.T) {
	const tmpl = "dataset: %s\nprompt: '{{.q}}'\nassert:\n  - summary_matches: '{{.a}}'\n"
	for _, tc := range []struct{ file, data string }{
		{"d.csv", "id,q,a\nfirst,what is 1+1,2\n,\"two, words\",x\n"},
		{"d.jsonl", "{\"id\": \"first\", \"q\": \"what is 1+1\", \"a\": 2}\n\n{\"q\": \"two, words\", \"a\": \"x\"}\n"},
		{"d.json", "[{\"id\": \"first\", \"q\": \"what is 1+1\", \"a\": 2},\n {\"q\": \"two, words\", \"a\": \"x\"}]\n"},
		{"d.yaml", "- {id: first, q: what is 1+1, a: 2}\n- {q: 'two, words', a: x}\n"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := writeTask(t, "qa.yaml", strings.Replace(tmpl, "%s", tc.file, 1), tc.file, tc.data)
			ts, err := LoadAll([]string{p}, testOptions())
			assert.NilError(t, err)
			assert.DeepEqual(t, names(ts), []string{"qa[first]", "qa[2]"})
			assert.Equal(t, ts[0].Prompt, "what is 1+1")
			assert.Equal(t, ts[0].Assert[0].Spec, "2")
			assert.Equal(t, ts[1].Prompt, "two, words")
			assert.Assert(t, ts[1].Case.Row.Line >= 2, "the row keeps its line: %+v", ts[1].Case.Row)
		})
	}
}

func TestADatasetRowThatDoesNotFitIsNamed(t *testing.T) {
	p := writeTask(t, "qa.yaml", "dataset: d.csv\nprompt: '{{.q}} {{.extra}}'\n", "d.csv", "q\nhello\n")
	_, err := LoadAll([]string{p}, testOptions())
	assert.ErrorContains(t, err, `prompt: template: no variable "extra"; known: q (dataset row 1 at `)
	assert.ErrorContains(t, err, "d.csv:2:1)")
}

func TestDatasetProblems(t *testing.T) {
	cases := map[string][]string{
		"not found":    {"dataset: nope.csv\nprompt: x\n", `no such file `},
		"bad json":     {"dataset: d.jsonl\nprompt: x\n", `d.jsonl:2: each line must be a JSON object`, "d.jsonl", "{\"a\": 1}\n[1]\n"},
		"unknown kind": {"dataset: d.txt\nprompt: x\n", `unknown format ".txt"`, "d.txt", "a\n"},
		"no rows":      {"dataset: d.csv\nprompt: x\n", `d.csv has no rows`, "d.csv", "a,b\n"},
		"duplicate id": {"dataset: d.csv\nprompt: x\n", `duplicate scenario name "t[a]"`, "d.csv", "id\na\na\n"},
		"deep yaml":    {"dataset: d.yaml\nprompt: x\n", `d.yaml:1:65: nested more than 64 levels deep`, "d.yaml", strings.Repeat("[", 60000)},
		"deep jsonl":   {"dataset: d.jsonl\nprompt: x\n", `d.jsonl:2:65: nested more than 64 levels deep`, "d.jsonl", "{\"a\": 1}\n" + strings.Repeat("[", 60000)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			files := []string{"t.yaml", c[0]}
			files = append(files, c[2:]...)
			_, err := LoadAll([]string{writeTask(t, files...)}, testOptions())
			assert.ErrorContains(t, err, c[1])
		})
	}
}

func TestLimitAndSamplePickCasesInFileOrder(t *testing.T) {
	var rows strings.Builder
	rows.WriteString("n\n")
	for i := 1; i <= 20; i++ {
		rows.WriteString(strings.Repeat("x", i) + "\n")
	}
	p := writeTask(t, "t.yaml", "dataset: d.csv\nprompt: '{{.n}}'\n", "d.csv", rows.String())
	opts := testOptions()
	opts.Limit = 3
	ts, err := LoadAll([]string{p}, opts)
	assert.NilError(t, err)
	assert.DeepEqual(t, names(ts), []string{"t[1]", "t[2]", "t[3]"})

	opts = testOptions()
	opts.Sample, opts.Seed = 5, 1
	a, err := LoadAll([]string{p}, opts)
	assert.NilError(t, err)
	b, err := LoadAll([]string{p}, opts)
	assert.NilError(t, err)
	assert.DeepEqual(t, names(a), names(b))
	assert.Equal(t, len(a), 5)
	opts.Seed = 2
	c, err := LoadAll([]string{p}, opts)
	assert.NilError(t, err)
	assert.Check(t, !is.DeepEqual(names(a), names(c))().Success(), "another seed, another sample")
}

func TestWorkspaceTemplateWithoutVarsWarns(t *testing.T) {
	p := writeTask(t, "t.yaml", "prompt: x\nworkspace:\n  files: {a: b}\n  template: [a]\n")
	ts, err := LoadAll([]string{p}, testOptions())
	assert.NilError(t, err)
	assert.Assert(t, len(ts[0].Warnings) == 1 && strings.Contains(ts[0].Warnings[0], "workspace.template: has no effect"), "%v", ts[0].Warnings)
}
