package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// --record and --replay through the command line: a recorded run replays with the same
// verdicts; a cassette with nothing in it, a replay that is recorded again and an unknown
// parser are usage errors before anything runs.
func TestRecordReplayFlags(t *testing.T) {
	dir := t.TempDir()
	pass := writeTask(t, dir, "hello.yaml", passingTask)
	fail := writeTask(t, dir, "wrong.yaml", failingTask)
	cassette := filepath.Join(t.TempDir(), "cassette")

	code, stdout, stderr := invoke(t, runArgs(t.TempDir(), pass, fail, "--record", cassette)...)
	assert.Equal(t, code, ExitFailed, "%s%s", stdout, stderr)
	for _, replay := range [][]string{{"--replay", cassette}, {"--model", "replay:" + cassette}} {
		code, stdout, stderr = invoke(t, runArgs(t.TempDir(), append([]string{pass, fail}, replay...)...)...)
		assert.Equal(t, code, ExitFailed, "%v: %s%s", replay, stdout, stderr)
		assert.Assert(t, is.Contains(stdout, "1 passed, 1 failed"), "%v", replay)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--replay", filepath.Join(dir, "none")}, "holds no recordings"},
		{[]string{"--model", "replay:" + cassette, "--record", t.TempDir()}, "--record cannot be combined with a replay"},
		{[]string{"--tool-call-parser", "xml"}, `--tool-call-parser: unknown tool call parser "xml" (want auto, native, hermes, json or off)`},
	} {
		code, stdout, stderr := invoke(t, runArgs(t.TempDir(), append([]string{pass}, tc.args...)...)...)
		assert.Equal(t, code, ExitUsage, "%v: %s%s", tc.args, stdout, stderr)
		assert.Assert(t, strings.Contains(stderr, tc.want), "%v: %s", tc.args, stderr)
	}
}
