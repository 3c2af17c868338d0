package session

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/tools/catalog"
)

// goTask is a Go module whose hidden test imports encoding/json, a standard package
// testing does not need, and whose assertion runs go test.
const goTask = `name: gotask
sandbox: none
env: {CGO_ENABLED: "0", GOFLAGS: -mod=mod}
prompt: p
workspace:
  files:
    go.mod: "module example.com/m\n\ngo 1.21\n"
    m.go: "package m\n\nimport \"strings\"\n\nfunc Up(s string) string { return strings.ToUpper(s) }\n"
verify:
  files:
    m_test.go: "package m\n\nimport (\n\t\"encoding/json\"\n\t\"testing\"\n)\n\nfunc TestUp(t *testing.T) { b, _ := json.Marshal(Up(\"a\")); if string(b) != \"\\\"A\\\"\" { t.Fatal(string(b)) } }\n"
assert:
  - command: {run: go test ./..., exit_code: 0}
reference:
  - task_complete: {summary: done}
`

const readOnlyGoTask = `name: reads-go
sandbox: none
prompt: p
workspace:
  files:
    go.mod: "module example.com/r\n"
    main.go: "package main\n\nimport \"net/http\"\n\nvar _ = http.Get\n"
assert:
  - file_exists: main.go
reference:
  - task_complete: {summary: done}
`

// TestWarmBuildsWhatTheTasksGoTestNeeds (and, on its cache, the attack of
// warmRunsNoTaskCode): a run of a Go task warms the shared cache once,
// before any scenario, so that the task's own `go test` (in a cache layer over it, as the
// agent's and the verification's commands are) compiles only the task's package: nothing
// of the standard library, encoding/json included. A task that only reads Go files warms
// nothing and its layers leave the Go cache out; a second warming finds it all cached.
func TestWarmBuildsWhatTheTasksGoTestNeeds(t *testing.T) {
	t.Parallel() // a cold compile of the standard library's test dependencies: 15-60 s
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "go.yaml"), []byte(goTask), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "reads.yaml"), []byte(readOnlyGoTask), 0o644))
	cache := filepath.Join(t.TempDir(), "cache")
	var progress bytes.Buffer
	s, err := New(t.Context(), Options{Paths: []string{dir}, CacheDir: cache, OutDir: filepath.Join(t.TempDir(), "out"), Warn: &progress})
	assert.NilError(t, err)
	assert.Assert(t, s.Warmup != nil, progress.String())
	assert.Equal(t, len(s.Warmup.Toolchains), 1, "the task that only reads Go warms nothing")
	w := s.Warmup.Toolchains[0]
	assert.Equal(t, w.Error, "", progress.String())
	assert.Equal(t, w.Tasks, 1)
	assert.Check(t, is.Contains(w.Detail, "testing and 2 more standard package(s)"), "strings and encoding/json")
	assert.Check(t, is.Contains(w.Detail, "CGO_ENABLED=0"))
	assert.Check(t, is.Contains(progress.String(), "runner: warming the build cache "+cache+" for go (1 task)...\n"))
	assert.Check(t, is.Contains(progress.String(), "runner: build cache warmed for go (1 task) in "))
	_, err = os.Stat(filepath.Join(s.opts.OutDir, merge.ManifestFile))
	assert.NilError(t, err, "the run's directory is marked as runner's")

	byName := map[string][]string{}
	for _, tk := range s.Tasks {
		byName[tk.Name] = CacheSkip(tk)
	}
	assert.DeepEqual(t, byName, map[string][]string{"gotask": nil, "reads-go": {"go-build"}})

	// The task's own go test, in a layer over the warmed cache, compiles its package only.
	mod := t.TempDir()
	for name, content := range map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n", "m.go": s.Tasks[0].Workspace.Files["m.go"], "m_test.go": s.Tasks[0].Verify.Files["m_test.go"]} {
		assert.NilError(t, os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644))
	}
	layer := t.TempDir()
	cp := exec.Command("cp", "-rs", filepath.Join(cache, "go-build"), filepath.Join(layer, "go-build"))
	out, err := cp.CombinedOutput()
	assert.NilError(t, err, string(out))
	cmd := exec.Command(goBin, "test", "-x", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOCACHE="+filepath.Join(layer, "go-build"), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off")
	out, err = cmd.CombinedOutput()
	assert.NilError(t, err, string(out))
	compiled := regexp.MustCompile(`(?m)/compile .* -p (\S+) `).FindAllStringSubmatch(string(out), -1)
	var pkgs []string
	for _, m := range compiled {
		pkgs = append(pkgs, m[1])
	}
	for _, p := range pkgs {
		assert.Check(t, strings.HasPrefix(p, "example.com/m") || p == "main", "go test compiled %s from the standard library: %v", p, pkgs)
	}

	// Warm again: found cached.
	progress.Reset()
	s2, err := New(t.Context(), Options{Paths: []string{dir}, CacheDir: cache, OutDir: filepath.Join(t.TempDir(), "out2"), Warn: &progress})
	assert.NilError(t, err)
	assert.Equal(t, s2.Warmup.Toolchains[0].Error, "")
	t.Logf("cold warm-up %s, warm %s", w.Duration, s2.Warmup.Toolchains[0].Duration)
	assert.Check(t, s2.Warmup.Toolchains[0].Duration < w.Duration)

	// No cache, nothing to warm.
	s3, err := New(t.Context(), Options{Paths: []string{dir}, Warn: &progress})
	assert.NilError(t, err)
	assert.Assert(t, s3.Warmup == nil)

	// The attack, on the same cache (a second cold compile would double the test's time).
	t.Run("runs no task code", func(t *testing.T) { warmRunsNoTaskCode(t, cache) })
}

// warmRunsNoTaskCode is the attack on the warm-up, which alone writes the shared
// cache besides setup: a task file whose Go files would run code if built (an init that
// writes a marker) and whose imports try to smuggle source into runner's module (a path
// with a quote and a newline) or name packages the standard library does not have. The
// warm-up builds runner's module only: the marker never appears, and only the standard
// packages named are imported.
func warmRunsNoTaskCode(t *testing.T, cache string) {
	marker := filepath.Join(t.TempDir(), "ran")
	evil := "package m\n\nimport (\n\t\"os\"\n\t_ \"example.com/m/sub\"\n\t_ \"mymod/helpers\"\n" +
		"\t_ \"fmt\\\"\\n)\\nfunc init() { os.WriteFile(\\\"x\\\", nil, 0) }\\n//\"\n)\n\n" +
		"func init() { _ = os.WriteFile(" + strconv.Quote(marker) + ", nil, 0o644) }\n"
	dir := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "src", "evil.go"), []byte(evil), 0o644))
	task := strings.Replace(goTask, "workspace:\n", "workspace:\n  copy: src\n", 1)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "go.yaml"), []byte(task), 0o644))
	s, err := LoadTasks([]string{filepath.Join(dir, "go.yaml")}, catalog.Default(), "", io.Discard)
	assert.NilError(t, err)
	imports := goImports(s[0])
	assert.DeepEqual(t, imports, []string{"encoding/json", "mymod/helpers", "os", "strings", "testing"})
	assert.Check(t, stdPathSafe("fmt") && !stdPathSafe(`fmt"`) && !stdPathSafe("fmt\n") && !stdPathSafe("a/internal/b") && !stdPathSafe("../x"))
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	var progress bytes.Buffer
	sess, err := New(t.Context(), Options{Paths: []string{filepath.Join(dir, "go.yaml")}, CacheDir: cache, Warn: &progress})
	assert.NilError(t, err)
	assert.Equal(t, sess.Warmup.Toolchains[0].Error, "", progress.String())
	// testing, and of the rest only what GOROOT holds: encoding/json, os, strings.
	assert.Check(t, is.Contains(sess.Warmup.Toolchains[0].Detail, "testing and 3 more standard package(s)"))
	_, err = os.Stat(marker)
	assert.Assert(t, os.IsNotExist(err), "the task's code ran during the warm-up")
}
