package report

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
)

func TestFileWritesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "report.json")
	assert.NilError(t, replay(File(path, WriteJSON), fixedRun()))
	data, err := os.ReadFile(path)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(data), `"schema_version": 2`))

	// A failing writer leaves the old report in place and no temp file behind.
	boom := func(w io.Writer, _ result.Run) error {
		_, _ = io.WriteString(w, "half")
		return errors.New("boom")
	}
	err = File(path, boom).Finish(fixedRun())
	assert.ErrorContains(t, err, "write report "+path+": boom")
	after, _ := os.ReadFile(path)
	assert.DeepEqual(t, after, data)
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Equal(t, len(entries), 1, "temp file left behind")
}

func TestMultiForwardsAndJoinsErrors(t *testing.T) {
	dir := t.TempDir()
	var console, junit = filepath.Join(dir, "console.txt"), filepath.Join(dir, "junit.xml")
	f, err := os.Create(console)
	assert.NilError(t, err)
	defer f.Close()
	bad := File(filepath.Join(dir, "x"), func(io.Writer, result.Run) error { return errors.New("nope") })
	r := Multi(NewConsole(f, ConsoleOptions{}), bad, File(junit, JUnit(junitOpts)))
	err = replay(r, fixedRun())
	assert.ErrorContains(t, err, "nope")
	// The writer after the failing one still ran.
	data, err := os.ReadFile(junit)
	assert.NilError(t, err)
	xmllint(t, data)
	text, _ := os.ReadFile(console)
	assert.Check(t, is.Contains(string(text), "5 scenarios: 2 passed"))
}
