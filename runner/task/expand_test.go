package task

import (
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/fs"
)

const okTask = "prompt: Say hello.\n"

func suiteDir(t *testing.T) *fs.Dir {
	return fs.NewDir(t, "suite",
		fs.WithDir("suite",
			fs.WithFile("a.yaml", okTask),
			fs.WithFile("b.yml", okTask),
			fs.WithFile(".hidden.yaml", okTask),
			fs.WithFile("README.md", "# suite\n"),
			fs.WithDir("fixtures", fs.WithFile("config.yaml", "not: a task\n")),
			fs.WithDir("sub", fs.WithFile("c.yaml", okTask)),
		),
		fs.WithDir("other", fs.WithFile("x.yaml", okTask)),
		fs.WithDir("empty"),
	)
}

func TestExpand(t *testing.T) {
	dir := suiteDir(t)
	p := func(rel string) string { return filepath.Join(dir.Path(), filepath.FromSlash(rel)) }
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"a directory is not recursive and skips hidden files",
			[]string{p("suite")}, []string{p("suite/a.yaml"), p("suite/b.yml")}},
		{"a recursive glob",
			[]string{p("suite/**/*.yaml")}, []string{p("suite/.hidden.yaml"), p("suite/a.yaml"), p("suite/fixtures/config.yaml"), p("suite/sub/c.yaml")}},
		{"a glob keeps only yaml files",
			[]string{p("suite/*")}, []string{p("suite/.hidden.yaml"), p("suite/a.yaml"), p("suite/b.yml")}},
		{"one level down",
			[]string{p("*/*.yaml")}, []string{p("other/x.yaml"), p("suite/.hidden.yaml"), p("suite/a.yaml")}},
		{"alternatives",
			[]string{p("suite/{a,b}.y*ml")}, []string{p("suite/a.yaml"), p("suite/b.yml")}},
		{"an explicit file is taken whatever its extension",
			[]string{p("suite/README.md")}, []string{p("suite/README.md")}},
		{"sorted and de-duplicated across arguments",
			[]string{p("suite/b.yml"), p("other"), p("suite"), p("suite/./a.yaml")},
			[]string{p("other/x.yaml"), p("suite/a.yaml"), p("suite/b.yml")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Expand(tc.args)
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

func TestExpandReportsEveryArgumentThatMatchesNothing(t *testing.T) {
	dir := suiteDir(t)
	p := func(rel string) string { return filepath.Join(dir.Path(), filepath.FromSlash(rel)) }
	got, err := Expand([]string{p("missing.yaml"), p("suite"), p("none/*.yaml"), p("empty"), p("suite/*.json"), p("*") + "/"})
	assert.Assert(t, got != nil || err != nil)
	assert.Error(t, err, strings.Join([]string{
		p("missing.yaml") + ": no such file or directory",
		p("none/*.yaml") + ": no .yaml or .yml task file matches",
		p("empty") + ": directory holds no .yaml or .yml task file",
		p("suite/*.json") + ": no .yaml or .yml task file matches",
		p("*") + "/: no .yaml or .yml task file matches",
	}, "\n"))
	assert.Equal(t, len(Problems(err)), 5)
}

func TestLoadAll(t *testing.T) {
	dir := fs.NewDir(t, "all",
		fs.WithFile("a.yaml", okTask),
		fs.WithFile("b.yaml", "name: a\nprompt: Same name as a.yaml.\n"),
		fs.WithFile("c.yaml", "prompt: x\nmax_steps: 0\n"),
		fs.WithFile("d.yaml", "promt: x\n"),
		fs.WithFile("e.yaml", okTask),
	)
	p := dir.Join
	tasks, err := LoadAll([]string{dir.Path(), p("missing.yaml")}, LoadOptions{})
	assert.DeepEqual(t, names(tasks), []string{"a", "e"}) // the files that loaded, for run and bench
	assert.Error(t, err, strings.Join([]string{
		p("missing.yaml") + ": no such file or directory",
		p("b.yaml") + `:1:7: name: duplicate scenario name "a", already used by ` + p("a.yaml") + ":1:1; set a different name:",
		p("c.yaml") + ":2:12: max_steps: must be at least 1, got 0",
		p("d.yaml") + `:1:1: promt: unknown field "promt"; did you mean "prompt"?`,
		p("d.yaml") + ":1:1: prompt: required field is missing",
	}, "\n"))

	tasks, err = LoadAll([]string{p("e.yaml"), p("a.yaml"), p("a.yaml")}, LoadOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(tasks), 2)
	assert.Equal(t, tasks[0].Name, "a")
	assert.Equal(t, tasks[1].Name, "e")
}

// TestExpandSuggestsTheGlobThatRecurses: a directory whose task files all lie deeper is
// not searched below its top; the error says how many lie below and the quoted glob.
func TestExpandSuggestsTheGlobThatRecurses(t *testing.T) {
	dir := fs.NewDir(t, "nested",
		fs.WithDir("nested",
			fs.WithDir("a", fs.WithFile("one.yaml", okTask)),
			fs.WithDir("b", fs.WithDir("c", fs.WithFile("two.yaml", okTask))),
			fs.WithDir(".hidden", fs.WithFile("three.yaml", okTask)),
		),
		fs.WithDir("yml", fs.WithDir("a", fs.WithFile("one.yml", okTask))),
	)
	t.Chdir(dir.Path())
	_, err := Expand([]string{"nested/", "yml"})
	assert.Error(t, err, strings.Join([]string{
		"nested/: directory holds no .yaml or .yml task file directly inside it; 2 below it: try 'nested/**/*.yaml'",
		"yml: directory holds no .yaml or .yml task file directly inside it; 1 below it: try 'yml/**/*.yml'",
	}, "\n"))
	got, err := Expand([]string{"nested/**/*.yaml"})
	assert.NilError(t, err)
	assert.Check(t, is.Contains(got, filepath.FromSlash("nested/a/one.yaml")), "the suggestion finds them")
	assert.Check(t, is.Contains(got, filepath.FromSlash("nested/b/c/two.yaml")))
}
