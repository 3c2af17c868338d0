package task

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"
)

// TestBrokenFilesGolden loads every testdata/bad file and compares the whole error text
// with its .golden file; run `go test ./runner/task -update` after an intended change.
func TestBrokenFilesGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	assert.NilError(t, err)
	assert.Assert(t, len(files) >= 10, "expected the broken files, found %d", len(files))
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			task, err := Load(file, testOptions())
			assert.Assert(t, task == nil)
			assert.Assert(t, err != nil, "%s loaded without error", file)
			golden.Assert(t, err.Error()+"\n", filepath.Join("bad", name+".golden"))

			// Every problem is an *Error whose text starts with the file's position.
			for _, p := range Problems(err) {
				var te *Error
				assert.Assert(t, errors.As(p, &te), "%T is not a *task.Error", p)
				assert.Equal(t, te.Pos.File, file)
				assert.Assert(t, te.Pos.Line >= 1 && te.Pos.Column >= 1, "no position in %q", p)
				assert.Assert(t, strings.HasPrefix(p.Error(), te.Pos.String()+": "))
			}
		})
	}
}
