package files_test

import (
	"encoding/base64"
	"io"
	"os"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/files"
)

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(e *env)
		args    map[string]any
		code    tools.ErrorCode
		contain []string
		check   func(t *testing.T, e *env, res tools.Result)
	}{
		{name: "new file", args: map[string]any{"path": "a.txt", "content": "hello"},
			contain: []string{"Wrote 5 bytes to 'a.txt' (created a new file)"},
			check: func(t *testing.T, e *env, res tools.Result) {
				assert.Equal(t, e.read("a.txt"), "hello")
				assert.Equal(t, meta(t, res, "overwritten"), false)
				assert.Equal(t, meta(t, res, "bytes_written"), 5)
				assert.DeepEqual(t, res.FilesAffected, []string{"a.txt"})
				fi, _ := os.Stat(e.path("a.txt"))
				assert.Equal(t, fi.Mode().Perm(), os.FileMode(0o644))
			}},
		{name: "overwrite keeps the mode", setup: func(e *env) {
			e.write("run.sh", "old")
			assert.NilError(t, os.Chmod(e.path("run.sh"), 0o750))
		}, args: map[string]any{"path": "run.sh", "content": "#!/bin/sh\n"},
			contain: []string{"(overwrote the existing file)"},
			check: func(t *testing.T, e *env, res tools.Result) {
				assert.Equal(t, e.read("run.sh"), "#!/bin/sh\n")
				assert.Equal(t, meta(t, res, "overwritten"), true)
				fi, _ := os.Stat(e.path("run.sh"))
				assert.Equal(t, fi.Mode().Perm(), os.FileMode(0o750))
			}},
		{name: "parents are created by default", args: map[string]any{"path": "a/b/c.txt", "content": "x"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("a/b/c.txt"), "x") }},
		{name: "create_directories false", args: map[string]any{"path": "a/b/c.txt", "content": "x", "create_directories": false},
			code: tools.CodeFileNotFound, contain: []string{"Directory 'a/b' does not exist", "create_directories: true"}},
		{name: "create_directories false with the parent present", setup: func(e *env) { e.mkdir("a") },
			args:  map[string]any{"path": "a/c.txt", "content": "x", "create_directories": "false"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("a/c.txt"), "x") }},
		{name: "base64", args: map[string]any{"path": "bin", "content": base64.StdEncoding.EncodeToString([]byte{0, 1, 254, 255}), "encoding": "base64"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("bin"), "\x00\x01\xfe\xff") }},
		{name: "bad base64", args: map[string]any{"path": "bin", "content": "not base64!", "encoding": "base64"},
			code: tools.CodeInvalidArgument, contain: []string{"not valid base64"}},
		{name: "unknown encoding", args: map[string]any{"path": "bin", "content": "x", "encoding": "utf-16"},
			code: tools.CodeInvalidArgument, contain: []string{"'encoding'"}},
		{name: "content is required", args: map[string]any{"path": "a.txt"},
			code: tools.CodeInvalidArgument, contain: []string{"'content' is required"}},
		{name: "content must be a string", args: map[string]any{"path": "a.txt", "content": 42},
			code: tools.CodeInvalidArgument, contain: []string{"'content'"}},
		{name: "a directory is in the way", setup: func(e *env) { e.mkdir("d") }, args: map[string]any{"path": "d", "content": "x"},
			code: tools.CodeIsADirectory},
		{name: "the workspace root", args: map[string]any{"path": ".", "content": "x"}, code: tools.CodeIsADirectory},
		{name: "a parent is a file", setup: func(e *env) { e.write("f", "x") }, args: map[string]any{"path": "f/g.txt", "content": "x"},
			code: tools.CodeNotADirectory},
		{name: "empty content", args: map[string]any{"path": "empty", "content": ""},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("empty"), "") }},
		{name: "unicode, spaces and CRLF", args: map[string]any{"path": "my dir/ünï ✓.txt", "content": "a\r\nb ✓\r\n"},
			check: func(t *testing.T, e *env, _ tools.Result) {
				assert.Equal(t, e.read("my dir/ünï ✓.txt"), "a\r\nb ✓\r\n")
			}},
		{name: "large content", args: map[string]any{"path": "big", "content": strings.Repeat("0123456789abcdef", 1<<17)},
			check: func(t *testing.T, e *env, res tools.Result) {
				assert.Equal(t, len(e.read("big")), 2<<20)
				assert.Equal(t, meta(t, res, "bytes_written"), 2<<20)
			}},
		{name: "through a symlink inside, the target changes and the link stays", setup: func(e *env) {
			e.write("real.txt", "old")
			e.symlink("real.txt", "link")
		}, args: map[string]any{"path": "link", "content": "new"},
			check: func(t *testing.T, e *env, res tools.Result) {
				assert.Assert(t, e.isLink("link"))
				assert.Equal(t, e.read("real.txt"), "new")
				assert.DeepEqual(t, res.FilesAffected, []string{"real.txt"})
			}},
		{name: "a dangling symlink inside creates its target", setup: func(e *env) {
			e.mkdir("sub")
			e.symlink("../later.txt", "sub/link")
		}, args: map[string]any{"path": "sub/link", "content": "made"},
			check: func(t *testing.T, e *env, _ tools.Result) {
				assert.Assert(t, e.isLink("sub/link"))
				assert.Equal(t, e.read("later.txt"), "made")
			}},
		{name: "a relative link under a linked directory resolves from the real directory", setup: func(e *env) {
			e.write("a/b/target.txt", "old")
			e.symlink("a/b", "lb")
			e.symlink("target.txt", "a/b/l")
		}, args: map[string]any{"path": "lb/l", "content": "new"},
			check: func(t *testing.T, e *env, _ tools.Result) {
				assert.Equal(t, e.read("a/b/target.txt"), "new")
				assert.Assert(t, e.isLink("a/b/l"))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			res := e.run("write_file", tc.args)
			if tc.code != "" {
				assertFail(t, res, tc.code, tc.contain...)
				return
			}
			assertOK(t, res)
			for _, c := range tc.contain {
				assert.Assert(t, is.Contains(res.Output, c))
			}
			if tc.check != nil {
				tc.check(t, e, res)
			}
			noTempFiles(t, e)
		})
	}
}

func TestWriteFileApproval(t *testing.T) {
	e := newEnv(t)
	assert.Assert(t, !e.approval("write_file", map[string]any{"path": "new.txt", "content": "x"}), "creating needs no approval")
	e.write("old.txt", "x")
	assert.Assert(t, e.approval("write_file", map[string]any{"path": "old.txt", "content": "y"}), "overwriting does")
	assert.Assert(t, !e.approval("write_file", map[string]any{"path": "../x", "content": "y"}), "an invalid path fails later instead")
}

// An atomic write replaces the file rather than rewriting it in place: a reader that opened
// the old file keeps reading the old bytes, whole.
func TestWriteFileIsAtomic(t *testing.T) {
	e := newEnv(t)
	e.write("data.json", `{"version": 1}`)
	f, err := os.Open(e.path("data.json"))
	assert.NilError(t, err)
	defer func() { _ = f.Close() }() // test cleanup: its error does not change what the test checked
	assertOK(t, e.run("write_file", map[string]any{"path": "data.json", "content": `{"version": 2, "more": true}`}))
	old, err := io.ReadAll(f)
	assert.NilError(t, err)
	assert.Equal(t, string(old), `{"version": 1}`)
	assert.Equal(t, e.read("data.json"), `{"version": 2, "more": true}`)
	noTempFiles(t, e)
}

func TestCreateFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(e *env)
		args    map[string]any
		code    tools.ErrorCode
		exact   string // exact failure output
		contain []string
		check   func(t *testing.T, e *env, res tools.Result)
	}{
		{name: "creates", args: map[string]any{"path": "test.txt", "content": "hi"}, contain: []string{"Created 'test.txt' (2 bytes)"},
			check: func(t *testing.T, e *env, res tools.Result) {
				assert.Equal(t, e.read("test.txt"), "hi")
				assert.DeepEqual(t, res.FilesAffected, []string{"test.txt"})
			}},
		{name: "an existing file is refused", setup: func(e *env) { e.write("test.txt", "keep") }, args: map[string]any{"path": "test.txt", "content": "x"},
			code: tools.CodeAlreadyExists, exact: "Error: File 'test.txt' already exists. Use replace_string_in_file to modify it, or write_file to replace its whole content",
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("test.txt"), "keep") }},
		{name: "an existing directory is refused", setup: func(e *env) { e.mkdir("d") }, args: map[string]any{"path": "d", "content": "x"},
			code: tools.CodeAlreadyExists, contain: []string{"'d' already exists and is a directory"}},
		{name: "a dangling symlink inside is not written through", setup: func(e *env) { e.symlink("target.txt", "link") },
			args: map[string]any{"path": "link", "content": "x"}, code: tools.CodeAlreadyExists,
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Assert(t, !e.exists("target.txt")) }},
		{name: "parents are created", args: map[string]any{"path": "a/b/c.go", "content": "package c\n"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("a/b/c.go"), "package c\n") }},
		{name: "content defaults to empty", args: map[string]any{"path": "__init__.py"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("__init__.py"), "") }},
		{name: "a parent is a file", setup: func(e *env) { e.write("f", "x") }, args: map[string]any{"path": "f/g", "content": "x"},
			code: tools.CodeNotADirectory},
		{name: "unicode, spaces and CRLF", args: map[string]any{"path": "rép ertoire/fi chier ✓.txt", "content": "l1\r\nl2\r\n"},
			check: func(t *testing.T, e *env, _ tools.Result) {
				assert.Equal(t, e.read("rép ertoire/fi chier ✓.txt"), "l1\r\nl2\r\n")
			}},
		{name: "path is required", args: map[string]any{"content": "x"}, code: tools.CodeInvalidArgument, contain: []string{"'path' is required"}},
		{name: "file_path alias", args: map[string]any{"file_path": "via_alias.txt", "content": "x"},
			check: func(t *testing.T, e *env, _ tools.Result) { assert.Equal(t, e.read("via_alias.txt"), "x") }},
		{name: "empty path", args: map[string]any{"path": "", "content": "x"}, code: tools.CodeInvalidPath},
		{name: "escape", args: map[string]any{"path": "../outside/new.txt", "content": "x"}, code: tools.CodeInvalidPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			res := e.run("create_file", tc.args)
			if tc.code != "" {
				assertFail(t, res, tc.code, tc.contain...)
				if tc.exact != "" {
					assert.Equal(t, res.Output, tc.exact)
				}
			} else {
				assertOK(t, res)
				for _, c := range tc.contain {
					assert.Assert(t, is.Contains(res.Output, c))
				}
			}
			if tc.check != nil {
				tc.check(t, e, res)
			}
			noTempFiles(t, e)
			assert.Assert(t, !e.approval("create_file", map[string]any{"path": "any", "content": ""}))
		})
	}
}

func TestWriteOutputsCountBytes(t *testing.T) {
	e := newEnv(t)
	assert.Equal(t, e.run("write_file", map[string]any{"path": "one", "content": "x"}).Output, "Wrote 1 byte to 'one' (created a new file)")
	assert.Equal(t, e.run("create_file", map[string]any{"path": "none"}).Output, "Created 'none' (0 bytes)")
}

// A seed let write_file and create_file take 42 MB; past 10 MB the call is refused
// before anything is written, whichever encoding carries the content.
func TestWriteSizeLimit(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("a", files.MaxWriteBytes+1)
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "big.txt", "content": big}},
		{"create_file", map[string]any{"path": "big.txt", "content": big}},
		{"write_file", map[string]any{"path": "big.txt", "content": base64.StdEncoding.EncodeToString([]byte(big + "aaaa")), "encoding": "base64"}},
		{"write_file", map[string]any{"path": "big.txt", "content": base64.StdEncoding.EncodeToString([]byte(big[:files.MaxWriteBytes-1])) + "YWFh", "encoding": "base64"}},
	} {
		res := e.run(tc.name, tc.args)
		assertFail(t, res, tools.CodeTooLarge)
		assert.Assert(t, strings.Contains(res.Output, "10 MB"), res.Output)
		assert.Assert(t, !e.exists("big.txt"), "%s wrote the file", tc.name)
	}
	exact := big[:files.MaxWriteBytes]
	assert.Assert(t, e.run("write_file", map[string]any{"path": "ok.txt", "content": exact}).Success)
	assert.Assert(t, e.run("create_file", map[string]any{"path": "ok2.txt", "content": exact}).Success)
	assert.Assert(t, e.run("write_file", map[string]any{"path": "ok3.txt", "encoding": "base64",
		"content": base64.StdEncoding.EncodeToString([]byte(exact))}).Success)
}
