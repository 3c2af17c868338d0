package catalog_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// pathParam places the path under test in one path-taking parameter of one tool.
type pathParam struct {
	tool, param string
	args        func(p string) map[string]any
	// linkOnly: the parameter names the link itself (delete, move from), so a link that
	// points outside is a legitimate subject: the link goes, its target stays.
	linkOnly bool
}

// pathParams is every path-taking parameter of the catalog. TestPathParamsComplete keeps
// it in step with the schemas.
var pathParams = []pathParam{
	{"read_file", "path", func(p string) map[string]any { return map[string]any{"path": p} }, false},
	{"write_file", "path", func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned"} }, false},
	{"create_file", "path", func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned"} }, false},
	{"replace_string_in_file", "path", func(p string) map[string]any {
		return map[string]any{"path": p, "old_string": "secret", "new_string": "pwned", "replace_all": true}
	}, false},
	{"delete_file", "path", func(p string) map[string]any { return map[string]any{"path": p, "recursive": true} }, true},
	{"move_file", "from", func(p string) map[string]any { return map[string]any{"from": p, "to": "moved"} }, true},
	{"move_file", "to", func(p string) map[string]any { return map[string]any{"from": "inside.txt", "to": p, "overwrite": true} }, false},
	{"create_directory", "path", func(p string) map[string]any { return map[string]any{"path": p} }, false},
	{"list_dir", "path", func(p string) map[string]any { return map[string]any{"path": p, "recursive": true} }, false},
	{"file_search", "base_path", func(p string) map[string]any { return map[string]any{"pattern": "**", "base_path": p} }, false},
	{"grep_search", "path", func(p string) map[string]any { return map[string]any{"pattern": "secret", "path": p} }, false},
	{"run_in_terminal", "cwd", func(p string) map[string]any {
		return map[string]any{"command": "echo pwned > pwned.txt; cat secret.txt", "cwd": p}
	}, false},
}

// escapeLayout is base/{ws,outside} with links in the workspace that lead out.
type escapeLayout struct {
	base, dir, outside string
	ws                 *tools.Workspace
}

func newEscapeLayout(t *testing.T) *escapeLayout {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	assert.NilError(t, err)
	l := &escapeLayout{base: base, dir: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{l.dir, l.outside, filepath.Join(l.outside, "sub"), filepath.Join(l.dir, "inner")} {
		assert.NilError(t, os.Mkdir(d, 0o755))
	}
	files := map[string]string{
		filepath.Join(l.outside, "secret.txt"):       "secret\n",
		filepath.Join(l.outside, "sub", "deep.txt"):  "secret\n",
		filepath.Join(l.dir, "inside.txt"):           "inside secret\n",
		filepath.Join(l.dir, "inner", "another.txt"): "inside\n",
	}
	for p, c := range files {
		assert.NilError(t, os.WriteFile(p, []byte(c), 0o644))
	}
	links := map[string]string{
		"link_file": filepath.Join(l.outside, "secret.txt"),
		"link_rel":  "../outside/secret.txt",
		"link_dir":  l.outside,
		"dangling":  filepath.Join(l.outside, "created.txt"),
	}
	for name, target := range links {
		assert.NilError(t, os.Symlink(target, filepath.Join(l.dir, name)))
	}
	l.ws, err = tools.OpenWorkspace(l.dir)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = l.ws.Close() })
	return l
}

// escape is one attempt to reach outside; isLink marks a path that is itself a link in
// the workspace.
type escape struct {
	name   string
	path   func(l *escapeLayout) string
	isLink bool
}

var escapes = []escape{
	{name: "dot-dot", path: func(*escapeLayout) string { return "../x" }},
	{name: "dot-dot to an existing file", path: func(*escapeLayout) string { return "../outside/secret.txt" }},
	{name: "dot-dot through a directory", path: func(*escapeLayout) string { return "inner/../../outside" }},
	{name: "system file", path: func(*escapeLayout) string { return "/etc/passwd" }},
	{name: "absolute outside", path: func(l *escapeLayout) string { return l.outside }},
	{name: "sibling sharing the prefix", path: func(l *escapeLayout) string { return l.dir + "2" }},
	{name: "symlink to an outside file", path: func(*escapeLayout) string { return "link_file" }, isLink: true},
	{name: "relative symlink out", path: func(*escapeLayout) string { return "link_rel" }, isLink: true},
	{name: "symlink to an outside directory", path: func(*escapeLayout) string { return "link_dir" }, isLink: true},
	{name: "below a symlinked directory", path: func(*escapeLayout) string { return "link_dir/sub" }},
	{name: "new name below a symlinked directory", path: func(*escapeLayout) string { return "link_dir/new" }},
	{name: "dangling symlink out", path: func(*escapeLayout) string { return "dangling" }, isLink: true},
}

// outsideState fingerprints everything under base except the workspace, and /etc/passwd.
func outsideState(t *testing.T, l *escapeLayout) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(l.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == l.dir {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		state[p] = info.Mode().String() + " " + info.ModTime().String() + " " + hashOf(t, p, info)
		return nil
	})
	assert.NilError(t, err)
	if info, err := os.Lstat("/etc/passwd"); err == nil {
		state["/etc/passwd"] = info.ModTime().String() + " " + hashOf(t, "/etc/passwd", info)
	}
	return state
}

func hashOf(t *testing.T, p string, info fs.FileInfo) string {
	if !info.Mode().IsRegular() {
		return ""
	}
	b, err := os.ReadFile(p)
	assert.NilError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestEscapes runs every escape attempt against every path-taking parameter of every tool.
func TestEscapes(t *testing.T) {
	reg := catalog.New(catalog.Options{})
	for _, pp := range pathParams {
		for _, e := range escapes {
			t.Run(pp.tool+"."+pp.param+"/"+e.name, func(t *testing.T) {
				l := newEscapeLayout(t)
				before := outsideState(t, l)
				p := e.path(l)
				raw, err := json.Marshal(pp.args(p))
				assert.NilError(t, err)
				res := reg.Run(context.Background(), pp.tool, raw, l.ws)

				if e.isLink && pp.linkOnly {
					assert.Assert(t, res.Success, "the link itself may be %s: %s", pp.tool, res.Output)
					_, err := os.Lstat(filepath.Join(l.dir, p))
					assert.Assert(t, os.IsNotExist(err), "the link is gone from its place")
					if pp.tool == "move_file" {
						info, err := os.Lstat(filepath.Join(l.dir, "moved"))
						assert.NilError(t, err)
						assert.Assert(t, info.Mode()&fs.ModeSymlink != 0, "the link moved as a link")
					}
				} else {
					assert.Assert(t, !res.Success, "escape allowed: %s", res.Output)
					assert.Equal(t, res.Error.Code, tools.CodeInvalidPath, res.Output)
					assert.Assert(t, strings.Contains(res.Output, "outside the workspace"), res.Output)
				}
				assert.DeepEqual(t, outsideState(t, l), before)
				b, err := os.ReadFile(filepath.Join(l.dir, "inside.txt"))
				assert.NilError(t, err)
				assert.Equal(t, string(b), "inside secret\n", "the other path of a move is untouched")
				_, err = os.Lstat(filepath.Join(l.dir, "pwned.txt"))
				assert.Assert(t, os.IsNotExist(err), "no command ran")
			})
		}
	}
}

// The same parameters accept the workspace's own paths, so the escapes above fail for
// the right reason.
func TestPathParamsAcceptInsidePaths(t *testing.T) {
	reg := catalog.New(catalog.Options{})
	inside := map[string]string{
		"read_file.path": "inside.txt", "write_file.path": "inner/new.txt", "create_file.path": "inner/new.txt",
		"replace_string_in_file.path": "inside.txt", "delete_file.path": "inner", "move_file.from": "inner",
		"move_file.to": "inner/renamed.txt", "create_directory.path": "inner/made", "list_dir.path": "inner",
		"file_search.base_path": "inner", "grep_search.path": "inner", "run_in_terminal.cwd": "inner",
	}
	for _, pp := range pathParams {
		key := pp.tool + "." + pp.param
		t.Run(key, func(t *testing.T) {
			for _, absolute := range []bool{false, true} {
				l := newEscapeLayout(t)
				p := inside[key]
				if absolute {
					p = filepath.Join(l.dir, p)
				}
				raw, _ := json.Marshal(pp.args(p))
				res := reg.Run(context.Background(), pp.tool, raw, l.ws)
				if pp.tool == "run_in_terminal" {
					assert.Equal(t, res.Metadata["exit_code"], 1, "cat finds no secret.txt in inner: %s", res.Output)
					_, err := os.Stat(filepath.Join(l.dir, "inner", "pwned.txt"))
					assert.NilError(t, err, "the command ran in inner")
					continue
				}
				assert.Assert(t, res.Success, "%s %q: %s", key, p, res.Output)
			}
		})
	}
}

// TestPathParamsComplete fails when a tool gains a workspace path parameter that the
// escape table does not cover.
func TestPathParamsComplete(t *testing.T) {
	reg := catalog.New(catalog.Options{})
	var inSchemas, inTable []string
	for _, s := range reg.Specs() {
		for name, p := range s.Parameters.Properties {
			if strings.Contains(strings.ToLower(p.Description), "relative to the workspace root") {
				inSchemas = append(inSchemas, s.Name+"."+name)
			}
		}
	}
	for _, pp := range pathParams {
		inTable = append(inTable, pp.tool+"."+pp.param)
	}
	sort.Strings(inSchemas)
	sort.Strings(inTable)
	assert.DeepEqual(t, inSchemas, inTable)
}
