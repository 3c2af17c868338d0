//go:build unix

package search

import (
	"path/filepath"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

func TestGrepSpecialFiles(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"a.txt": "needle\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A FIFO in the tree is skipped (opening it would block until a writer came).
	res := ok(t, ws, "grep_search", `{"pattern":"needle"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"a.txt:1: needle"})
	msg := fails(t, ws, "grep_search", `{"pattern":"needle","path":"fifo"}`, tools.CodeInvalidArgument)
	assert.Assert(t, is.Contains(msg, "neither a regular file nor a directory"))
	res = ok(t, ws, "file_search", `{"pattern":"*"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"a.txt"})
}
