package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/workspace"
)

// TestMarkKeptReplacesWhatTheAgentLeft: the agent cannot keep its workspace from being
// marked: a directory, a symbolic link to a host file and a FIFO under the marker's name
// are replaced, and a top directory it made read-only is made writable again. The host
// file the link pointed at is untouched.
func TestMarkKeptReplacesWhatTheAgentLeft(t *testing.T) {
	host := filepath.Join(t.TempDir(), "host.txt")
	assert.NilError(t, os.WriteFile(host, []byte("host\n"), 0o644))
	for name, plant := range map[string]func(dir string) error{
		"directory": func(dir string) error {
			return os.MkdirAll(filepath.Join(dir, workspace.KeptMarker, "sub"), 0o755)
		},
		"symlink": func(dir string) error { return os.Symlink(host, filepath.Join(dir, workspace.KeptMarker)) },
		"read-only top": func(dir string) error {
			return os.Chmod(dir, 0o555)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			assert.NilError(t, plant(dir))
			assert.NilError(t, workspace.MarkKept(dir))
			info, err := os.Lstat(filepath.Join(dir, workspace.KeptMarker))
			assert.NilError(t, err)
			assert.Assert(t, info.Mode().IsRegular())
			top, err := os.Lstat(dir)
			assert.NilError(t, err)
			assert.Equal(t, top.Mode().Perm()&0o700, os.FileMode(0o700), "the owner may write the top again")
			b, err := os.ReadFile(host)
			assert.NilError(t, err)
			assert.Equal(t, string(b), "host\n")
		})
	}
}
