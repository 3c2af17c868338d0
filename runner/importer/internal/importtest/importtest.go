// Package importtest is what the importers' tests share: a task directory written from a
// map of files, and a copy of such a map with some files changed or removed. Only tests
// import it.
package importtest

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

// Dir writes files (path inside the task -> content) into a new directory named name (the
// importers take a task's name from its directory) and returns its path.
func Dir(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	assert.NilError(t, os.MkdirAll(dir, 0o755))
	for p, body := range files {
		p = filepath.Join(dir, p)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return dir
}

// With sets files' path kv[i] to kv[i+1], or removes it when kv[i+1] is "", and returns files.
func With(files map[string]string, kv ...string) map[string]string {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(files, kv[i])
		} else {
			files[kv[i]] = kv[i+1]
		}
	}
	return files
}
