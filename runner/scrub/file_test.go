package scrub

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

// TestOutputReplacesWholeOrNotAtAll: a render that fails halfway leaves the earlier
// file as it was and no temporary file; one that succeeds replaces it whole, its secrets
// scrubbed, with the mode asked for.
func TestOutputReplacesWholeOrNotAtAll(t *testing.T) {
	const key = "sk-output-0123456789abcdef"
	Add(key)
	dir := t.TempDir()
	name := filepath.Join(dir, "result.json")
	assert.NilError(t, Output{Perm: 0o600, Sync: true}.WriteJSON(name, []byte(`{"reason": "the key `+key+`"}`)))
	b, err := os.ReadFile(name)
	assert.NilError(t, err)
	assert.Equal(t, string(b), `{"reason": "the key [REDACTED]"}`)
	info, err := os.Stat(name)
	assert.NilError(t, err)
	assert.Equal(t, info.Mode().Perm(), os.FileMode(0o600))

	failed := errors.New("render failed")
	err = Output{}.Replace(name, func(w io.Writer) error {
		_, _ = w.Write([]byte(`{"reason": "half`))
		return failed
	})
	assert.ErrorIs(t, err, failed)
	b, err = os.ReadFile(name)
	assert.NilError(t, err)
	assert.Equal(t, string(b), `{"reason": "the key [REDACTED]"}`, "the earlier file, whole")
	entries, err := os.ReadDir(dir)
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 1, "no temporary file left behind")
}
