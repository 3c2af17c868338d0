package files_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/files"
)

func TestReadFile(t *testing.T) {
	const five = "one\ntwo\nthree\nfour\nfive\n"
	tests := []struct {
		name    string
		setup   func(e *env)
		args    map[string]any
		raw     string // used instead of args when set
		want    string // exact output on success
		contain []string
		code    tools.ErrorCode // expected failure
		meta    map[string]any
	}{
		{name: "whole file", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt"},
			want: five, meta: map[string]any{"total_lines": 5, "lines_returned": 5, "file_size_bytes": int64(len(five))}},
		{name: "range", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "start_line": 2, "end_line": 3},
			want: "[Lines 2-3 of 5 in 'a.txt']\ntwo\nthree\n", meta: map[string]any{"total_lines": 5, "lines_returned": 2}},
		{name: "start only", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "start_line": 5},
			want: "[Lines 5-5 of 5 in 'a.txt']\nfive\n"},
		{name: "end only", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "end_line": 1},
			want: "[Lines 1-1 of 5 in 'a.txt']\none\n"},
		{name: "end past the end is clamped", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "start_line": 4, "end_line": 99},
			want: "[Lines 4-5 of 5 in 'a.txt'] (end_line 99 is past the end of the file)\nfour\nfive\n"},
		{name: "start past the end names the line count", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "start_line": 9},
			code: tools.CodeInvalidArgument, contain: []string{"has 5 lines", "start_line 9"}},
		{name: "end before start", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "start_line": 3, "end_line": 2},
			code: tools.CodeInvalidArgument, contain: []string{"end_line 2 is before start_line 3"}},
		{name: "start_line zero violates the schema", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "start_line": 0},
			code: tools.CodeInvalidArgument, contain: []string{"'start_line'"}},
		{name: "quoted numbers are coerced", setup: func(e *env) { e.write("a.txt", five) }, raw: `{"path":"a.txt","start_line":"2","end_line":"2"}`,
			want: "[Lines 2-2 of 5 in 'a.txt']\ntwo\n"},
		{name: "file_path is accepted for path", setup: func(e *env) { e.write("a.txt", "x") }, raw: `{"file_path":"a.txt"}`, want: "x"},
		{name: "arguments as a JSON string", setup: func(e *env) { e.write("a.txt", "x") }, raw: `"{\"path\":\"a.txt\"}"`, want: "x"},
		{name: "empty file", setup: func(e *env) { e.write("empty", "") }, args: map[string]any{"path": "empty"},
			want: "[File 'empty' is empty (0 bytes)]", meta: map[string]any{"total_lines": 0, "lines_returned": 0}},
		{name: "empty file with start_line 1", setup: func(e *env) { e.write("empty", "") }, args: map[string]any{"path": "empty", "start_line": 1},
			want: "[File 'empty' is empty (0 bytes)]"},
		{name: "no final newline still counts the last line", setup: func(e *env) { e.write("a.txt", "a\nb") }, args: map[string]any{"path": "a.txt"},
			want: "a\nb", meta: map[string]any{"total_lines": 2}},
		{name: "CRLF is returned as is", setup: func(e *env) { e.write("w.txt", "a\r\nb\r\n") }, args: map[string]any{"path": "w.txt"},
			want: "a\r\nb\r\n", meta: map[string]any{"total_lines": 2}},
		{name: "unicode and spaces in the name", setup: func(e *env) { e.write("dir with space/héllo wörld ✓.txt", "ünïcødé ✓\n") },
			args: map[string]any{"path": "dir with space/héllo wörld ✓.txt"}, want: "ünïcødé ✓\n"},
		{name: "absolute path inside the workspace", setup: func(e *env) { e.write("a.txt", "x") }, args: nil, want: "x"},
		{name: "base64", setup: func(e *env) { e.write("bin", "\x00\x01\xff") }, args: map[string]any{"path": "bin", "encoding": "base64"},
			want: base64.StdEncoding.EncodeToString([]byte("\x00\x01\xff"))},
		{name: "base64 with a range", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "encoding": "base64", "start_line": 1},
			code: tools.CodeInvalidArgument, contain: []string{"only apply"}},
		{name: "unknown encoding", setup: func(e *env) { e.write("a.txt", five) }, args: map[string]any{"path": "a.txt", "encoding": "latin1"},
			code: tools.CodeInvalidArgument, contain: []string{"'encoding'"}},
		{name: "missing path", args: map[string]any{}, code: tools.CodeInvalidArgument, contain: []string{"'path' is required"}},
		{name: "not found", args: map[string]any{"path": "nope.txt"}, code: tools.CodeFileNotFound, contain: []string{"nope.txt"}},
		{name: "directory", setup: func(e *env) { e.mkdir("d") }, args: map[string]any{"path": "d"}, code: tools.CodeIsADirectory, contain: []string{"list_dir"}},
		{name: "escape", args: map[string]any{"path": "../outside/x"}, code: tools.CodeInvalidPath},
		{name: "symlink inside is followed", setup: func(e *env) { e.write("real.txt", "real"); e.symlink("real.txt", "link") },
			args: map[string]any{"path": "link"}, want: "real"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			args := tc.args
			if args == nil && tc.raw == "" {
				args = map[string]any{"path": e.path("a.txt")}
			}
			var res tools.Result
			if tc.raw != "" {
				res = e.runRaw("read_file", tc.raw)
			} else {
				res = e.run("read_file", args)
			}
			if tc.code != "" {
				assertFail(t, res, tc.code, tc.contain...)
				return
			}
			assertOK(t, res)
			assert.Equal(t, res.Output, tc.want)
			for k, v := range tc.meta {
				assert.DeepEqual(t, meta(t, res, k), v)
			}
			_, err := time.Parse(time.RFC3339, meta(t, res, "modified").(string))
			assert.NilError(t, err)
			assert.Equal(t, len(res.FilesAffected), 0, "a read changes nothing")
		})
	}
}

func TestReadFileBinary(t *testing.T) {
	e := newEnv(t)
	data := append([]byte("PNG\x00"), bytes.Repeat([]byte{0xAB}, 3000)...)
	assert.NilError(t, os.WriteFile(e.path("img.png"), data, 0o644))
	res := e.run("read_file", map[string]any{"path": "img.png"})
	assertOK(t, res)
	assert.Assert(t, strings.HasPrefix(res.Output, "Warning: 'img.png' looks like a binary file (3004 bytes)"), res.Output)
	assert.Assert(t, is.Contains(res.Output, "00000000  50 4e 47 00 ab ab"))
	assert.Assert(t, is.Contains(res.Output, "000003f0"), "the dump covers the first 1 KB")
	assert.Assert(t, !strings.Contains(res.Output, "00000400"), "and no more")
	assert.Equal(t, meta(t, res, "binary"), true)

	// Invalid UTF-8 without NUL bytes is binary too; a rune cut by the 8 KB sniff window is not.
	e.write("latin1.txt", "caf\xe9\n")
	assert.Equal(t, e.run("read_file", map[string]any{"path": "latin1.txt"}).Metadata["binary"], true)
	e.write("long.txt", strings.Repeat("a", 8191)+"é"+strings.Repeat("b", 100))
	res = e.run("read_file", map[string]any{"path": "long.txt"})
	assertOK(t, res)
	assert.Assert(t, res.Metadata["binary"] == nil)
	assert.Equal(t, len(res.Output), 8191+2+100)
}

func TestReadFileLarge(t *testing.T) {
	e := newEnv(t)
	line := strings.Repeat("x", 99) + "\n"
	n := files.MaxReadBytes/len(line) + 5000 // a little over 10 MB
	assert.NilError(t, os.WriteFile(e.path("big.log"), bytes.Repeat([]byte(line), n), 0o644))

	res := e.run("read_file", map[string]any{"path": "big.log"})
	assertOK(t, res)
	assert.Assert(t, strings.HasPrefix(res.Output, "Warning: 'big.log' is "), res.Output[:200])
	assert.Assert(t, is.Contains(res.Output[:300], "Use start_line and end_line"))
	assert.Equal(t, meta(t, res, "truncated"), true)
	assert.Equal(t, meta(t, res, "total_lines"), n, "the whole file is counted")
	returned := meta(t, res, "lines_returned").(int)
	assert.Equal(t, returned, files.MaxReadBytes/len(line), "only whole lines are returned")
	assert.Assert(t, strings.HasSuffix(res.Output, line))

	// The tail is reachable with a range, past the 10 MB mark.
	res = e.run("read_file", map[string]any{"path": "big.log", "start_line": n - 1})
	assertOK(t, res)
	assert.Equal(t, meta(t, res, "lines_returned"), 2)
	assert.Equal(t, meta(t, res, "truncated"), false)
}

func TestReadFileLongLine(t *testing.T) {
	// One line far longer than the reader's buffer must come back whole.
	e := newEnv(t)
	long := strings.Repeat("0123456789", 30000)
	e.write("one.txt", long+"\nsecond")
	res := e.run("read_file", map[string]any{"path": "one.txt", "start_line": 1, "end_line": 1})
	assertOK(t, res)
	assert.Equal(t, res.Output, "[Lines 1-1 of 2 in 'one.txt']\n"+long+"\n")
	res = e.run("read_file", map[string]any{"path": "one.txt", "start_line": 2})
	assertOK(t, res)
	assert.Equal(t, res.Output, "[Lines 2-2 of 2 in 'one.txt']\nsecond")
}
