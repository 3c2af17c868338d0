package files_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
)

// A call with the path under test placed in one of a tool's path parameters.
type pathCall struct {
	name string
	tool string
	args func(p string) map[string]any
	// linkOnly: the parameter names a link itself (ResolveNoFollow), so a link that points
	// outside is a legitimate subject rather than an escape.
	linkOnly bool
}

var pathCalls = []pathCall{
	{"read_file", "read_file", func(p string) map[string]any { return map[string]any{"path": p} }, false},
	{"write_file", "write_file", func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned"} }, false},
	{"create_file", "create_file", func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned"} }, false},
	{"replace_string_in_file", "replace_string_in_file", func(p string) map[string]any {
		return map[string]any{"path": p, "old_string": "secret", "new_string": "pwned", "replace_all": true}
	}, false},
	{"delete_file", "delete_file", func(p string) map[string]any { return map[string]any{"path": p, "recursive": true} }, true},
	{"move_file.from", "move_file", func(p string) map[string]any { return map[string]any{"from": p, "to": "moved"} }, true},
	{"move_file.to", "move_file", func(p string) map[string]any { return map[string]any{"from": "inside.txt", "to": p, "overwrite": true} }, false},
	{"create_directory", "create_directory", func(p string) map[string]any { return map[string]any{"path": p} }, false},
	{"list_dir", "list_dir", func(p string) map[string]any { return map[string]any{"path": p, "recursive": true} }, false},
}

// escapeCase is one attempt to reach outside the workspace. isLink marks a path that is
// itself a symlink in the workspace (the link may be removed or moved, its target never).
type escapeCase struct {
	name   string
	path   func(e *env) string
	isLink bool
}

var escapeCases = []escapeCase{
	{name: "dot-dot", path: func(*env) string { return "../outside/secret.txt" }},
	{name: "dot-dot after a directory", path: func(*env) string { return "a/../../outside/secret.txt" }},
	{name: "absolute system file", path: func(*env) string { return "/etc/passwd" }},
	{name: "absolute outside", path: func(e *env) string { return filepath.Join(e.outside, "secret.txt") }},
	{name: "sibling with the workspace as prefix", path: func(e *env) string { return e.dir + "2/secret.txt" }},
	{name: "NUL byte", path: func(*env) string { return "inside.txt\x00../../outside/secret.txt" }},
	{name: "symlink to an outside file", path: func(*env) string { return "link_file" }, isLink: true},
	{name: "relative symlink to an outside file", path: func(*env) string { return "link_rel" }, isLink: true},
	{name: "symlink to an outside directory", path: func(*env) string { return "link_dir" }, isLink: true},
	{name: "file below a symlinked outside directory", path: func(*env) string { return "link_dir/secret.txt" }},
	{name: "new file below a symlinked outside directory", path: func(*env) string { return "link_dir/new.txt" }},
	{name: "dangling symlink to outside", path: func(*env) string { return "dangling" }, isLink: true},
}

// escapeEnv lays out a workspace with links that lead out, an outside directory and a
// sibling whose name has the workspace's as a prefix.
func escapeEnv(t *testing.T) *env {
	e := newEnv(t)
	sibling := e.dir + "2"
	assert.NilError(t, os.Mkdir(sibling, 0o755))
	for _, p := range []string{filepath.Join(e.outside, "secret.txt"), filepath.Join(sibling, "secret.txt")} {
		assert.NilError(t, os.WriteFile(p, []byte("secret\n"), 0o644))
	}
	assert.NilError(t, os.Mkdir(filepath.Join(e.outside, "sub"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(e.outside, "sub", "deep.txt"), []byte("secret\n"), 0o644))
	e.write("inside.txt", "inside secret\n")
	e.mkdir("a")
	e.symlink(filepath.Join(e.outside, "secret.txt"), "link_file")
	e.symlink("../outside/secret.txt", "link_rel")
	e.symlink(e.outside, "link_dir")
	e.symlink(filepath.Join(e.outside, "created.txt"), "dangling")
	return e
}

// snapshot records everything outside the workspace under the test's base directory.
func snapshot(t *testing.T, e *env) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == e.dir {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			desc += " " + hex.EncodeToString(sum[:])
		}
		out[p] = desc + " " + fi.ModTime().String()
		return nil
	})
	assert.NilError(t, err)
	return out
}

// TestEscapes runs every escape attempt against every path parameter of every file tool.
func TestEscapes(t *testing.T) {
	for _, call := range pathCalls {
		for _, ec := range escapeCases {
			t.Run(call.name+"/"+ec.name, func(t *testing.T) {
				e := escapeEnv(t)
				before := snapshot(t, e)
				p := ec.path(e)
				res := e.run(call.tool, call.args(p))

				if ec.isLink && call.linkOnly {
					// The link itself is the subject: it goes (or moves), its target stays.
					assertOK(t, res)
					assert.Assert(t, !e.exists(p), "the link is gone from its place")
					if call.tool == "move_file" {
						assert.Assert(t, e.isLink("moved"), "the link moved as a link")
					}
				} else {
					assertFail(t, res, tools.CodeInvalidPath)
					assert.Assert(t, strings.Contains(res.Output, "outside the workspace") || strings.Contains(res.Output, "NUL"), res.Output)
					assert.Equal(t, e.read("inside.txt"), "inside secret\n", "the other path of a move is untouched")
				}
				assert.DeepEqual(t, snapshot(t, e), before)
			})
		}
	}
}

// A symlink that appears in a directory the workspace links to must not matter: the
// check is on the real path, so a workspace opened through a symlink behaves the same.
func TestEscapesWorkspaceBehindSymlink(t *testing.T) {
	e := escapeEnv(t)
	alias := filepath.Join(e.base, "alias")
	assert.NilError(t, os.Symlink(e.dir, alias))
	ws, err := tools.OpenWorkspace(alias)
	assert.NilError(t, err)
	defer func() { _ = ws.Close() }() // test cleanup: its error does not change what the test checked
	e.ws = ws
	before := snapshot(t, e)
	for _, call := range pathCalls {
		res := e.run(call.tool, call.args(filepath.Join(alias, "..", "outside", "secret.txt")))
		assertFail(t, res, tools.CodeInvalidPath)
		if call.name == "move_file.from" || call.name == "move_file.to" {
			continue
		}
		// An absolute path through the alias is inside.
		res = e.run("read_file", map[string]any{"path": filepath.Join(alias, "inside.txt")})
		assertOK(t, res)
	}
	delete(before, alias)
	after := snapshot(t, e)
	delete(after, alias)
	assert.DeepEqual(t, after, before)
}
