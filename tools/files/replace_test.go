package files_test

import (
	"os"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/files"
)

func TestReplaceString(t *testing.T) {
	const src = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	tests := []struct {
		name    string
		file    string // content of f.go before the call
		args    map[string]any
		want    string // content of f.go after a successful call
		code    tools.ErrorCode
		contain []string
		meta    map[string]any
	}{
		{name: "single", file: src, args: map[string]any{"old_string": `println("hi")`, "new_string": `println("bye")`},
			want: strings.Replace(src, "hi", "bye", 1), contain: []string{"Replaced 1 occurrence in 'f.go' (line 4)"},
			meta: map[string]any{"occurrences_found": 1, "occurrences_replaced": 1, "lines_changed": 1}},
		{name: "multi-line", file: src, args: map[string]any{"old_string": "func main() {\n\tprintln(\"hi\")\n}", "new_string": "func main() {}"},
			want: "package main\n\nfunc main() {}\n", meta: map[string]any{"lines_changed": 3}},
		{name: "delete with an empty new_string", file: "keep DROP keep", args: map[string]any{"old_string": " DROP", "new_string": ""},
			want: "keep keep"},
		{name: "first of several, with a warning", file: "x = 1\ny = 2\nx = 1\nx = 1\n", args: map[string]any{"old_string": "x = 1", "new_string": "x = 9"},
			want: "x = 9\ny = 2\nx = 1\nx = 1\n", contain: []string{"Warning: old_string occurs 3 times (lines 1, 3, 4); only the first, at line 1, was replaced", "replace_all"},
			meta: map[string]any{"occurrences_found": 3, "occurrences_replaced": 1}},
		{name: "replace_all", file: "x = 1\ny = 2\nx = 1\n", args: map[string]any{"old_string": "x = 1", "new_string": "x = 9", "replace_all": true},
			want: "x = 9\ny = 2\nx = 9\n", contain: []string{"Replaced 2 occurrences in 'f.go' (lines 1, 3)"},
			meta: map[string]any{"occurrences_found": 2, "occurrences_replaced": 2, "lines_changed": 2}},
		{name: "replace_all as a quoted boolean", file: "aXa", args: map[string]any{"old_string": "a", "new_string": "b", "replace_all": "true"},
			want: "bXb"},
		{name: "matches are not overlapping", file: "aaaa", args: map[string]any{"old_string": "aa", "new_string": "b", "replace_all": true},
			want: "bb", meta: map[string]any{"occurrences_found": 2}},
		{name: "LF text in a CRLF file keeps CRLF", file: "a\r\nb\r\nc\r\n", args: map[string]any{"old_string": "a\nb\n", "new_string": "A\nB\nextra\n"},
			want: "A\r\nB\r\nextra\r\nc\r\n", contain: []string{"CRLF"}},
		{name: "CRLF text in an LF file keeps LF", file: "a\nb\nc\n", args: map[string]any{"old_string": "a\r\nb", "new_string": "A\r\nB"},
			want: "A\nB\nc\n"},
		{name: "single-line edit leaves the file's other CRLFs alone", file: "one\r\ntwo\r\n", args: map[string]any{"old_string": "two", "new_string": "2"},
			want: "one\r\n2\r\n"},
		{name: "unicode", file: "naïve café ✓\n", args: map[string]any{"old_string": "café ✓", "new_string": "カフェ"},
			want: "naïve カフェ\n"},
		{name: "not found", file: src, args: map[string]any{"old_string": "absent", "new_string": "x"},
			code: tools.CodeInvalidArgument, contain: []string{"old_string was not found in 'f.go'", "read_file"}},
		{name: "whitespace mismatch is pointed out", file: src, args: map[string]any{"old_string": "func main() {\n    println(\"hi\")", "new_string": "x"},
			code: tools.CodeInvalidArgument, contain: []string{"matches if whitespace is ignored (near line 3)"}},
		{name: "CRLF file is named when nothing matches", file: "a\r\nb\r\n", args: map[string]any{"old_string": "zzz", "new_string": "x"},
			code: tools.CodeInvalidArgument, contain: []string{"CRLF"}},
		{name: "empty old_string violates the schema", file: src, args: map[string]any{"old_string": "", "new_string": "x"},
			code: tools.CodeInvalidArgument, contain: []string{"'old_string'"}},
		{name: "identical strings", file: src, args: map[string]any{"old_string": "main", "new_string": "main"},
			code: tools.CodeInvalidArgument, contain: []string{"identical"}},
		{name: "new_string is required", file: src, args: map[string]any{"old_string": "main"},
			code: tools.CodeInvalidArgument, contain: []string{"'new_string' is required"}},
		{name: "missing file", args: map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"},
			code: tools.CodeFileNotFound, contain: []string{"create_file"}},
		{name: "directory", args: map[string]any{"path": "d", "old_string": "a", "new_string": "b"}, code: tools.CodeIsADirectory},
		{name: "escape", args: map[string]any{"path": "../outside/f.go", "old_string": "a", "new_string": "b"}, code: tools.CodeInvalidPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.mkdir("d")
			if tc.file != "" {
				e.write("f.go", tc.file)
			}
			if _, ok := tc.args["path"]; !ok {
				tc.args["path"] = "f.go"
			}
			res := e.run("replace_string_in_file", tc.args)
			if tc.code != "" {
				assertFail(t, res, tc.code, tc.contain...)
				if tc.file != "" {
					assert.Equal(t, e.read("f.go"), tc.file, "a failed edit changes nothing")
				}
				return
			}
			assertOK(t, res)
			assert.Equal(t, e.read("f.go"), tc.want)
			for _, c := range tc.contain {
				assert.Assert(t, is.Contains(res.Output, c))
			}
			for k, v := range tc.meta {
				assert.DeepEqual(t, meta(t, res, k), v)
			}
			assert.DeepEqual(t, res.FilesAffected, []string{"f.go"})
			noTempFiles(t, e)
		})
	}
}

func TestReplaceStringKeepsModeAndLinks(t *testing.T) {
	e := newEnv(t)
	e.write("bin/tool.sh", "echo old\n")
	assert.NilError(t, os.Chmod(e.path("bin/tool.sh"), 0o755))
	e.symlink("bin/tool.sh", "tool")
	res := e.run("replace_string_in_file", map[string]any{"path": "tool", "old_string": "old", "new_string": "new"})
	assertOK(t, res)
	assert.Assert(t, e.isLink("tool"), "editing through a link keeps the link")
	assert.Equal(t, e.read("bin/tool.sh"), "echo new\n")
	fi, err := os.Stat(e.path("bin/tool.sh"))
	assert.NilError(t, err)
	assert.Equal(t, fi.Mode().Perm(), os.FileMode(0o755))
	assert.DeepEqual(t, res.FilesAffected, []string{"bin/tool.sh"})
	assert.Assert(t, !e.approval("replace_string_in_file", map[string]any{"path": "tool", "old_string": "a", "new_string": "b"}))
}

func TestReplaceStringTooLarge(t *testing.T) {
	e := newEnv(t)
	f, err := os.Create(e.path("huge.txt"))
	assert.NilError(t, err)
	assert.NilError(t, f.Truncate(files.MaxReadBytes+1)) // sparse: cheap to make
	assert.NilError(t, f.Close())
	res := e.run("replace_string_in_file", map[string]any{"path": "huge.txt", "old_string": "a", "new_string": "b"})
	assertFail(t, res, tools.CodeTooLarge)
}
