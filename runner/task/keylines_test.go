package task

import (
	"testing"

	"gotest.tools/v3/assert"
)

// KeyLines point reports at the limit a scenario hit, so they must be the key's own line.
func TestLoadRecordsKeyLines(t *testing.T) {
	got, err := Load("testdata/valid/full.yaml", testOptions())
	assert.NilError(t, err)
	for _, key := range []string{"name", "max_steps", "timeout", "assert"} {
		assert.Assert(t, got.KeyLines[key] > 0, "no line for %s: %v", key, got.KeyLines)
	}
	assert.Equal(t, got.KeyLines["max_steps"], 27)
	assert.Equal(t, got.KeyLines["timeout"], 28)
	_, ok := got.KeyLines["verify_missing"]
	assert.Assert(t, !ok)
}

// Every documented top-level key has its decoder row, and every row is documented: a key
// in one list and not the other would panic on the first task that uses it.
func TestEveryTopLevelKeyHasADecoder(t *testing.T) {
	for _, k := range taskFields {
		if topLevel[k] == nil {
			t.Errorf("taskFields lists %q but topLevel has no decoder for it", k)
		}
	}
	if len(topLevel) != len(taskFields) {
		t.Errorf("topLevel has %d rows, taskFields %d keys", len(topLevel), len(taskFields))
	}
}
