package files_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/files"
)

// names returns the entry names from a list_dir result's metadata.
func names(t *testing.T, res tools.Result) []string {
	t.Helper()
	var out []string
	for _, e := range meta(t, res, "entries").([]files.Entry) {
		out = append(out, e.Name)
	}
	return out
}

func entry(t *testing.T, res tools.Result, name string) files.Entry {
	t.Helper()
	for _, e := range meta(t, res, "entries").([]files.Entry) {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no entry %q in %v", name, names(t, res))
	return files.Entry{}
}

func tree(e *env) {
	e.write("b.txt", "12345")
	e.write("a.go", "")
	e.write("src/main.go", "package main\n")
	e.write("src/deep/x.go", "x")
	e.write(".hidden", "h")
	e.write(".git/config", "c")
}

func TestListDir(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(e *env)
		args    map[string]any
		want    []string // entry names, in order
		code    tools.ErrorCode
		contain []string
	}{
		{name: "default path", setup: tree, args: map[string]any{}, want: []string{"a.go", "b.txt", "src"},
			contain: []string{"Contents of '.' (3 entries):\na.go (0 bytes)\nb.txt (5 bytes)\nsrc/\n", "(2 hidden entries not shown; pass include_hidden: true"}},
		{name: "include_hidden", setup: tree, args: map[string]any{"include_hidden": true}, want: []string{".git", ".hidden", "a.go", "b.txt", "src"}},
		{name: "recursive", setup: tree, args: map[string]any{"recursive": true},
			want: []string{"a.go", "b.txt", "src", "src/deep", "src/deep/x.go", "src/main.go"}},
		{name: "recursive as a quoted boolean", setup: tree, args: map[string]any{"recursive": "true"},
			want: []string{"a.go", "b.txt", "src", "src/deep", "src/deep/x.go", "src/main.go"}},
		{name: "recursive and hidden", setup: tree, args: map[string]any{"recursive": true, "include_hidden": true},
			want: []string{".git", ".git/config", ".hidden", "a.go", "b.txt", "src", "src/deep", "src/deep/x.go", "src/main.go"}},
		{name: "names are relative to the listed directory", setup: tree, args: map[string]any{"path": "src", "recursive": true},
			want: []string{"deep", "deep/x.go", "main.go"}, contain: []string{"Contents of 'src'"}},
		{name: "a symlinked directory is listed, not entered", setup: func(e *env) {
			e.write("real/in.txt", "x")
			e.symlink("real", "link")
		}, args: map[string]any{"recursive": true}, want: []string{"link", "real", "real/in.txt"}, contain: []string{"link -> real (symlink)"}},
		{name: "a link to outside is listed as a link", setup: func(e *env) { e.symlink(e.outside, "out") },
			args: map[string]any{"recursive": true}, want: []string{"out"}},
		{name: "empty directory", setup: func(e *env) { e.mkdir("empty") }, args: map[string]any{"path": "empty"}, contain: []string{"Directory 'empty' is empty"}},
		{name: "unicode and spaces", setup: func(e *env) { e.write("dir ü/fi le ✓.txt", "x") }, args: map[string]any{"path": "dir ü"},
			want: []string{"fi le ✓.txt"}, contain: []string{"fi le ✓.txt (1 byte)"}},
		{name: "a file", setup: tree, args: map[string]any{"path": "b.txt"}, code: tools.CodeNotADirectory, contain: []string{"read_file"}},
		{name: "missing", args: map[string]any{"path": "nope"}, code: tools.CodeFileNotFound},
		{name: "include_hidden must be a boolean", args: map[string]any{"include_hidden": 3}, code: tools.CodeInvalidArgument, contain: []string{"'include_hidden'"}},
		{name: "escape", args: map[string]any{"path": ".."}, code: tools.CodeInvalidPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			res := e.run("list_dir", tc.args)
			if tc.code != "" {
				assertFail(t, res, tc.code, tc.contain...)
				return
			}
			assertOK(t, res)
			assert.DeepEqual(t, names(t, res), tc.want)
			for _, c := range tc.contain {
				assert.Assert(t, is.Contains(res.Output, c))
			}
			assert.Equal(t, meta(t, res, "truncated"), false)
		})
	}
}

func TestListDirEntryDetails(t *testing.T) {
	e := newEnv(t)
	tree(e)
	e.symlink("b.txt", "l")
	res := e.run("list_dir", map[string]any{"path": "."})
	assertOK(t, res)
	for _, want := range []files.Entry{
		{Name: "b.txt", Type: "file", Size: 5},
		{Name: "src", Type: "directory", Size: 0},
		{Name: "l", Type: "symlink", Size: 5, Target: "b.txt"},
	} {
		got := entry(t, res, want.Name)
		mod, err := time.Parse(time.RFC3339, got.Modified)
		assert.NilError(t, err)
		assert.Assert(t, time.Since(mod) < time.Hour, got.Modified)
		got.Modified = ""
		assert.DeepEqual(t, got, want)
	}
	assert.Equal(t, meta(t, res, "total_entries"), 4)
	assert.Assert(t, !e.approval("list_dir", map[string]any{}))
}

func TestListDirCap(t *testing.T) {
	e := newEnv(t)
	// Shallow entries must survive the cap even when a deep directory holds more than it.
	e.write("top1.txt", "")
	e.write("top2.txt", "")
	e.mkdir("deep/er")
	for i := range files.MaxListEntries + 100 {
		assert.NilError(t, os.WriteFile(e.path(fmt.Sprintf("deep/er/f%04d", i)), nil, 0o644))
	}
	res := e.run("list_dir", map[string]any{"recursive": true})
	assertOK(t, res)
	got := names(t, res)
	assert.Equal(t, len(got), files.MaxListEntries)
	assert.Equal(t, meta(t, res, "truncated"), true)
	assert.Assert(t, is.Contains(res.Output, "stopped at 1000 entries"))
	assert.DeepEqual(t, got[:2], []string{"deep", "deep/er"})
	assert.Equal(t, got[len(got)-1], "top2.txt")
	assert.Equal(t, strings.Count(res.Output, "\n")+1, 1+files.MaxListEntries+2, "header, entries, blank line and note")
}
