package session

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/tools/catalog"
)

// TestLoadTasksRegistersSecrets: loading a task leaves the scrubber alone (runner/task's
// TestSecretsComeFromEnvOrTheEnvironmentAndLoadingTouchesNoGlobalState); the session that
// runs it registers its secret values, before anything prints.
func TestLoadTasksRegistersSecrets(t *testing.T) {
	const value = "session-secret-0123456789"
	path := filepath.Join(t.TempDir(), "s.yaml")
	assert.NilError(t, os.WriteFile(path, []byte("prompt: p\nsecrets: [DB_PASSWORD]\nenv: {DB_PASSWORD: "+value+"}\n"), 0o644))
	assert.Equal(t, scrub.String(value), value, "known before the session loaded the task")
	_, err := LoadTasks([]string{path}, catalog.Default(), "", io.Discard)
	assert.NilError(t, err)
	assert.Equal(t, scrub.String("a "+value), "a "+scrub.Redacted)
}

// TestLoadTasksChecksTheRuntimesNames: the format leaves sandbox modes and tool-call
// parsers to the runtime, which gives them to the loader: a name of neither is a
// positioned error with the choices, as it was when runner/task knew them itself.
func TestLoadTasksChecksTheRuntimesNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.yaml")
	assert.NilError(t, os.WriteFile(path, []byte("prompt: p\nsandbox: docker\ntool_call_parser: xml\n"), 0o644))
	_, err := LoadTasks([]string{path}, catalog.Default(), "", io.Discard)
	assert.Assert(t, err != nil)
	msg := strings.ReplaceAll(err.Error(), path, "t.yaml")
	assert.Check(t, is.Contains(msg, `t.yaml:2:10: sandbox: invalid value "docker"; want one of: auto, bwrap, landlock, none`))
	assert.Check(t, is.Contains(msg, `t.yaml:3:19: tool_call_parser: invalid value "xml"; want one of: auto, hermes, json, native, off`))
}
