package search

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
)

// newWorkspace creates a workspace holding files (slash paths to contents; a path ending
// in "/" is an empty directory) and returns it with its directory.
func newWorkspace(t *testing.T, files map[string]string) (*tools.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	ws, err := tools.OpenWorkspace(dir)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	return ws, dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			assert.NilError(t, os.MkdirAll(p, 0o755))
			continue
		}
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// call runs a tool through a registry, so that schema defaults and validation apply.
func call(t *testing.T, ws *tools.Workspace, tool, args string) tools.Result {
	t.Helper()
	reg := tools.NewRegistry()
	reg.MustRegister(Tools()...)
	return reg.Run(context.Background(), tool, json.RawMessage(args), ws)
}

// ok runs a call that must succeed.
func ok(t *testing.T, ws *tools.Workspace, tool, args string) tools.Result {
	t.Helper()
	res := call(t, ws, tool, args)
	assert.Assert(t, res.Success, "%s %s failed: %s", tool, args, res.Output)
	return res
}

// fails runs a call that must fail with code, and returns its message.
func fails(t *testing.T, ws *tools.Workspace, tool, args string, code tools.ErrorCode) string {
	t.Helper()
	res := call(t, ws, tool, args)
	assert.Assert(t, !res.Success, "%s %s succeeded: %s", tool, args, res.Output)
	assert.Equal(t, res.Error.Code, code, res.Output)
	return res.Error.Message
}

// lines splits output into lines.
func lines(out string) []string {
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// symlink creates a symlink at name (relative to dir) pointing to target.
func symlink(t *testing.T, dir, target, name string) {
	t.Helper()
	assert.NilError(t, os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))))
}
