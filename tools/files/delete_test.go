package files_test

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

func TestDeleteFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(e *env)
		args    map[string]any
		code    tools.ErrorCode
		contain []string
		check   func(t *testing.T, e *env, res tools.Result)
	}{
		{name: "file", setup: func(e *env) { e.write("a.txt", "x"); e.write("b.txt", "y") }, args: map[string]any{"path": "a.txt"},
			contain: []string{"Deleted file 'a.txt'"},
			check: func(t *testing.T, e *env, res tools.Result) {
				assert.Assert(t, !e.exists("a.txt"))
				assert.Assert(t, e.exists("b.txt"))
				assert.DeepEqual(t, res.FilesAffected, []string{"a.txt"})
				assert.Equal(t, meta(t, res, "type"), "file")
			}},
		{name: "empty file", setup: func(e *env) { e.write("empty", "") }, args: map[string]any{"path": "empty"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Assert(t, !e.exists("empty")) }},
		{name: "missing", args: map[string]any{"path": "nope"}, code: tools.CodeFileNotFound},
		{name: "empty directory without recursive", setup: func(e *env) { e.mkdir("d") }, args: map[string]any{"path": "d"},
			contain: []string{"Deleted directory 'd'"},
			check:   func(t *testing.T, e *env, _ tools.Result) { assert.Assert(t, !e.exists("d")) }},
		{name: "non-empty directory without recursive", setup: func(e *env) { e.write("d/a", "x"); e.write("d/b", "x") }, args: map[string]any{"path": "d"},
			code: tools.CodeInvalidArgument, contain: []string{"Directory 'd' is not empty (2 entries)", "recursive: true"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("d/a"), "x") }},
		{name: "non-empty directory with recursive", setup: func(e *env) { e.write("d/a", "x"); e.write("d/sub/b", "x") },
			args: map[string]any{"path": "d", "recursive": true}, contain: []string{"Deleted directory 'd' and the 3 entries in it"},
			check: func(t *testing.T, e *env, res tools.Result) {
				assert.Assert(t, !e.exists("d"))
				assert.Equal(t, meta(t, res, "entries_removed"), 4)
			}},
		{name: "recursive must be a boolean", setup: func(e *env) { e.write("d/a", "x") }, args: map[string]any{"path": "d", "recursive": "yes"},
			code: tools.CodeInvalidArgument, contain: []string{"'recursive'"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Assert(t, e.exists("d/a")) }},
		{name: "symlink to a file removes only the link", setup: func(e *env) { e.write("real", "keep"); e.symlink("real", "link") },
			args: map[string]any{"path": "link"}, contain: []string{"Deleted symlink 'link' (the link only"},
			check: func(t *testing.T, e *env, _ tools.Result) {
				assert.Assert(t, !e.exists("link"))
				assert.Equal(t, e.read("real"), "keep")
			}},
		{name: "symlink to a directory is not descended, even recursively", setup: func(e *env) { e.write("dir/keep", "k"); e.symlink("dir", "link") },
			args: map[string]any{"path": "link", "recursive": true},
			check: func(t *testing.T, e *env, _ tools.Result) {
				assert.Assert(t, !e.exists("link"))
				assert.Equal(t, e.read("dir/keep"), "k")
			}},
		{name: "a trailing slash on a link still removes only the link", setup: func(e *env) { e.write("dir/keep", "k"); e.symlink("dir", "link") },
			args: map[string]any{"path": "link/", "recursive": true},
			check: func(t *testing.T, e *env, _ tools.Result) {
				assert.Assert(t, !e.exists("link"))
				assert.Equal(t, e.read("dir/keep"), "k")
			}},
		{name: "a directory holding a link to a directory keeps the link's target", setup: func(e *env) {
			e.write("keep/k", "k")
			e.mkdir("d")
			e.symlink("../keep", "d/link")
		}, args: map[string]any{"path": "d", "recursive": true},
			check: func(t *testing.T, e *env, _ tools.Result) {
				assert.Assert(t, !e.exists("d"))
				assert.Equal(t, e.read("keep/k"), "k")
			}},
		{name: "unicode and spaces", setup: func(e *env) { e.write("a b/ü ✓.txt", "x") }, args: map[string]any{"path": "a b/ü ✓.txt"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Assert(t, !e.exists("a b/ü ✓.txt")) }},
		{name: "the workspace root", setup: func(e *env) { e.write("a", "x") }, args: map[string]any{"path": ".", "recursive": true},
			code: tools.CodeInvalidPath, contain: []string{"workspace root"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Assert(t, e.exists("a")) }},
		{name: "the workspace root spelled otherwise", setup: func(e *env) { e.write("a", "x") }, args: map[string]any{"path": "a/..", "recursive": true},
			code: tools.CodeInvalidPath, check: func(t *testing.T, e *env, _ tools.Result) { assert.Assert(t, e.exists("a")) }},
		{name: "path is required", args: map[string]any{"recursive": true}, code: tools.CodeInvalidArgument, contain: []string{"'path' is required"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			res := e.run("delete_file", tc.args)
			if tc.code != "" {
				assertFail(t, res, tc.code, tc.contain...)
			} else {
				assertOK(t, res)
				for _, c := range tc.contain {
					assert.Assert(t, is.Contains(res.Output, c))
				}
			}
			if tc.check != nil {
				tc.check(t, e, res)
			}
		})
	}
}

func TestDeleteFileRootByAbsolutePath(t *testing.T) {
	e := newEnv(t)
	e.write("a", "x")
	res := e.run("delete_file", map[string]any{"path": e.dir, "recursive": true})
	assertFail(t, res, tools.CodeInvalidPath)
	assert.Assert(t, e.exists("a"))
}

func TestDeleteFileAlwaysNeedsApproval(t *testing.T) {
	e := newEnv(t)
	assert.Assert(t, e.approval("delete_file", map[string]any{"path": "whatever"}))
	e.write("a", "x")
	assert.Assert(t, e.approval("delete_file", map[string]any{"path": "a"}))
}
