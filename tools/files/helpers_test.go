package files_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/files"
)

// env is a workspace with a sibling "outside" directory, and a registry holding the file
// tools, so tests run calls the way the agent loop does: Prepare (schema, defaults) then
// Execute (Validate, then the tool).
type env struct {
	t       *testing.T
	base    string // parent of the workspace and of outside
	dir     string // the workspace directory (symlinks evaluated)
	outside string
	ws      *tools.Workspace
	reg     *tools.Registry
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	assert.NilError(t, err)
	dir := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	assert.NilError(t, os.Mkdir(dir, 0o755))
	assert.NilError(t, os.Mkdir(outside, 0o755))
	ws, err := tools.OpenWorkspace(dir)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	reg := tools.NewRegistry()
	reg.MustRegister(files.Tools()...)
	return &env{t: t, base: base, dir: dir, outside: outside, ws: ws, reg: reg}
}

// run calls a tool with arguments given as a Go map, through the registry.
func (e *env) run(name string, args map[string]any) tools.Result {
	e.t.Helper()
	raw, err := json.Marshal(args)
	assert.NilError(e.t, err)
	return e.reg.Run(context.Background(), name, raw, e.ws)
}

// runRaw calls a tool with raw JSON arguments.
func (e *env) runRaw(name, raw string) tools.Result {
	e.t.Helper()
	return e.reg.Run(context.Background(), name, json.RawMessage(raw), e.ws)
}

// approval reports whether the prepared call needs approval.
func (e *env) approval(name string, args map[string]any) bool {
	e.t.Helper()
	raw, err := json.Marshal(args)
	assert.NilError(e.t, err)
	call, terr := e.reg.Prepare(name, raw)
	assert.Assert(e.t, terr == nil, "prepare: %v", terr)
	return call.RequiresApproval(e.ws)
}

func (e *env) path(rel string) string { return filepath.Join(e.dir, filepath.FromSlash(rel)) }

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := e.path(rel)
	assert.NilError(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	assert.NilError(e.t, os.WriteFile(p, []byte(content), 0o644))
}

func (e *env) mkdir(rel string) {
	e.t.Helper()
	assert.NilError(e.t, os.MkdirAll(e.path(rel), 0o755))
}

func (e *env) symlink(target, rel string) {
	e.t.Helper()
	assert.NilError(e.t, os.Symlink(target, e.path(rel)))
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(rel))
	assert.NilError(e.t, err)
	return string(b)
}

func (e *env) exists(rel string) bool {
	_, err := os.Lstat(e.path(rel))
	return err == nil
}

func (e *env) isLink(rel string) bool {
	fi, err := os.Lstat(e.path(rel))
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// entries lists every name under the workspace, to catch stray temporary files.
func (e *env) entries() []string {
	e.t.Helper()
	var out []string
	err := filepath.WalkDir(e.dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	assert.NilError(e.t, err)
	return out
}

func assertOK(t *testing.T, res tools.Result) {
	t.Helper()
	assert.Assert(t, res.Success, "expected success, got %s", res.Output)
	assert.Assert(t, res.Error == nil)
}

func assertFail(t *testing.T, res tools.Result, code tools.ErrorCode, contains ...string) {
	t.Helper()
	assert.Assert(t, !res.Success, "expected %s, got success: %s", code, res.Output)
	assert.Assert(t, res.Error != nil)
	assert.Equal(t, res.Error.Code, code, res.Output)
	for _, c := range contains {
		assert.Assert(t, is.Contains(res.Output, c))
	}
}

func meta(t *testing.T, res tools.Result, key string) any {
	t.Helper()
	v, ok := res.Metadata[key]
	assert.Assert(t, ok, "metadata %q missing in %v", key, res.Metadata)
	return v
}

// noTempFiles fails when an atomic write left its temporary file behind.
func noTempFiles(t *testing.T, e *env) {
	t.Helper()
	for _, n := range e.entries() {
		assert.Assert(t, !strings.Contains(n, ".tmp-"), "temporary file left: %s", n)
	}
}
