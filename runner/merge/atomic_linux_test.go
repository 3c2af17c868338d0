package merge_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/result"
)

const fsizeEnv = "RUNNER_TEST_FSIZE_OUT"

// TestResultFailedMidWriteIsNeverRead: a result file whose write fails halfway (here the
// file-size limit stops it, as a full disk would; a kill leaves the same) leaves the
// earlier result whole and listed, and nothing half-written for merge, resume or the
// viewer to read: it was written to a temporary file that never replaced it. Written in
// place (os.WriteFile), the earlier file was truncated and half of the new one left under
// its name, and the directory no longer merged.
func TestResultFailedMidWriteIsNeverRead(t *testing.T) {
	if out := os.Getenv(fsizeEnv); out != "" {
		writePastSizeLimit(out)
		return
	}
	out := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(out, "s"), 0o755))
	first := result.Scenario{Name: "s", File: "s.yaml", Status: result.Passed, Reason: "the first run", Started: t0}
	b, err := json.Marshal(first)
	assert.NilError(t, err)
	assert.NilError(t, merge.WriteResult(out, "s/"+merge.ResultFile, b))

	cmd := exec.Command(os.Args[0], "-test.run=^TestResultFailedMidWriteIsNeverRead$", "-test.count=1")
	cmd.Env = append(os.Environ(), fsizeEnv+"="+out)
	msg, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", msg)
	assert.Check(t, is.Contains(string(msg), "file too large"), "the second write failed midway")

	got, err := merge.LoadDir(out, merge.Options{})
	assert.NilError(t, err)
	assert.Equal(t, len(got), 1)
	assert.Equal(t, got[0].Reason, "the first run")
	entries, err := os.ReadDir(filepath.Join(out, "s"))
	assert.NilError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.DeepEqual(t, names, []string{merge.ResultFile}) // no temporary file left behind
}

// writePastSizeLimit is the child of TestResultFailedMidWriteIsNeverRead: it writes a
// result four times the size the process may write to any one file.
func writePastSizeLimit(out string) {
	const limit = 256 << 10
	signal.Ignore(syscall.SIGXFSZ) // the write fails with EFBIG instead of killing us
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		println("setrlimit:", err.Error())
		os.Exit(1)
	}
	second := result.Scenario{Name: "s", File: "s.yaml", Status: result.Failed, Reason: strings.Repeat("x", 4*limit), Started: t0}
	b, _ := json.Marshal(second)
	err := merge.WriteResult(out, "s/"+merge.ResultFile, b)
	if err == nil || !errors.Is(err, syscall.EFBIG) {
		println("want the write to fail with EFBIG, got", err)
		os.Exit(1)
	}
	println(err.Error())
	os.Exit(0)
}
