package tools_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

func openWorkspace(t testing.TB, dir string) *tools.Workspace {
	t.Helper()
	ws, err := tools.OpenWorkspace(dir)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

// layout makes base/ws (the workspace) with links in every interesting direction, and
// base/outside and base/ws2 next to it. It returns the real base and workspace paths.
func layout(t testing.TB) (base, dir string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	assert.NilError(t, err)
	dir = filepath.Join(base, "ws")
	for _, d := range []string{"ws/sub/deeper", "outside/dir", "ws2"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	for _, f := range []string{"ws/file.txt", "ws/sub/in.txt", "outside/secret.txt", "ws2/file"} {
		assert.NilError(t, os.WriteFile(filepath.Join(base, f), []byte("x"), 0o644))
	}
	links := map[string]string{
		"ws/link_in":       "file.txt",
		"ws/link_in_abs":   filepath.Join(dir, "sub"),
		"ws/link_out":      filepath.Join(base, "outside", "secret.txt"),
		"ws/link_out_rel":  "../outside/secret.txt",
		"ws/link_out_dir":  filepath.Join(base, "outside"),
		"ws/dangling_in":   "not-yet.txt",
		"ws/dangling_out":  filepath.Join(base, "outside", "new.txt"),
		"ws/sub/link_up":   "..",
		"ws/sub/link_up2":  "../..",
		"ws/loop":          "loop",
		"ws/sub/link_ws2":  filepath.Join(base, "ws2"),
		"ws/link_chain":    "link_out",
		"ws/link_chain_in": "link_in",
	}
	for name, target := range links {
		assert.NilError(t, os.Symlink(target, filepath.Join(base, name)))
	}
	return base, dir
}

func TestResolve(t *testing.T) {
	base, dir := layout(t)
	ws := openWorkspace(t, dir)
	tests := []struct {
		in       string
		want     string // "" means INVALID_PATH for Resolve
		noFollow string // expectation for ResolveNoFollow; "=" means same as want
	}{
		{"file.txt", "file.txt", "="},
		{"./file.txt", "file.txt", "="},
		{"sub/../file.txt", "file.txt", "="},
		{"sub/", "sub", "="},
		{".", ".", "="},
		{"sub/deeper/.", "sub/deeper", "="},
		{"not/there/yet.txt", "not/there/yet.txt", "="},
		{"with space/ünï ✓.txt", "with space/ünï ✓.txt", "="},
		{`back\slash`, `back\slash`, "="},
		{filepath.Join(dir, "sub", "in.txt"), "sub/in.txt", "="},
		{dir, ".", "="},
		{dir + "/", ".", "="},
		{"link_in", "link_in", "="},
		// os.Root treats every absolute link target as an escape, even one that points inside.
		{"link_in_abs", "", "link_in_abs"},
		{"link_in_abs/in.txt", "", ""},
		{"dangling_in", "dangling_in", "="},
		{"link_chain_in", "link_chain_in", "="},
		{"sub/link_up/file.txt", "sub/link_up/file.txt", "="},
		// Escapes.
		{"..", "", ""},
		{"../outside/secret.txt", "", ""},
		{"a/../../x", "", ""},
		{"sub/../../x", "", ""},
		{"/etc/passwd", "", ""},
		{"/", "", ""},
		{filepath.Join(base, "outside"), "", ""},
		{base, "", ""},
		{dir + "2/file", "", ""},
		{dir + "2", "", ""},
		{"", "", ""},
		{"   ", "", ""},
		{"file.txt\x00", "", ""},
		{"\x00", "", ""},
		// A link that leads out may still be named as a link, but not followed.
		{"link_out", "", "link_out"},
		{"link_out_rel", "", "link_out_rel"},
		{"link_out_dir", "", "link_out_dir"},
		{"dangling_out", "", "dangling_out"},
		{"link_chain", "", "link_chain"},
		{"sub/link_up2", "", "sub/link_up2"},
		{"sub/link_ws2", "", "sub/link_ws2"},
		// Below a link that leads out, nothing is reachable either way.
		{"link_out_dir/secret.txt", "", ""},
		{"link_out_dir/new.txt", "", ""},
		{"link_out_dir/dir/x", "", ""},
		{"sub/link_up2/outside/secret.txt", "", ""},
		{"sub/link_ws2/file", "", ""},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.in), func(t *testing.T) {
			got, err := ws.Resolve(tc.in)
			check(t, "Resolve", got, err, tc.want)
			nf := tc.noFollow
			if nf == "=" {
				nf = tc.want
			}
			got, err = ws.ResolveNoFollow(tc.in)
			check(t, "ResolveNoFollow", got, err, nf)
		})
	}
}

func check(t *testing.T, fn, got string, err *tools.Error, want string) {
	t.Helper()
	if want == "" {
		assert.Assert(t, err != nil, "%s accepted %q", fn, got)
		assert.Equal(t, err.Code, tools.CodeInvalidPath, fn)
		assert.Assert(t, err.Suggestion != "" || err.Message != "", fn)
		return
	}
	assert.Assert(t, err == nil, "%s: %v", fn, err)
	assert.Equal(t, got, want, fn)
}

func TestResolveMessages(t *testing.T) {
	_, dir := layout(t)
	ws := openWorkspace(t, dir)
	_, err := ws.Resolve("../x")
	assert.Equal(t, err.Message, "Path '../x' is outside the workspace")
	assert.Assert(t, is.Contains(err.Suggestion, "relative to the workspace root"))
	_, err = ws.Resolve("a\x00b")
	assert.Equal(t, err.Message, "Path contains a NUL byte")
	_, err = ws.Resolve("")
	assert.Equal(t, err.Message, "Path is empty")
}

// A workspace opened through a symlinked path accepts absolute paths spelled either way.
func TestWorkspaceBehindSymlink(t *testing.T) {
	base, dir := layout(t)
	alias := filepath.Join(base, "alias")
	assert.NilError(t, os.Symlink(dir, alias))
	ws := openWorkspace(t, alias)
	assert.Equal(t, ws.Dir(), dir, "Dir is the real path")
	for _, in := range []string{filepath.Join(alias, "file.txt"), filepath.Join(dir, "file.txt")} {
		got, err := ws.Resolve(in)
		assert.Assert(t, err == nil, "%s: %v", in, err)
		assert.Equal(t, got, "file.txt")
	}
	_, err := ws.Resolve(alias + "2/file")
	assert.Assert(t, err != nil)
	_, err = ws.Resolve(filepath.Join(alias, "..", "outside"))
	assert.Assert(t, err != nil)
}

func TestOpenWorkspace(t *testing.T) {
	_, err := tools.OpenWorkspace(filepath.Join(t.TempDir(), "missing"))
	assert.Assert(t, errors.Is(err, fs.ErrNotExist), "%v", err)

	f := filepath.Join(t.TempDir(), "file")
	assert.NilError(t, os.WriteFile(f, nil, 0o644))
	_, err = tools.OpenWorkspace(f)
	assert.Assert(t, err != nil, "a file is not a workspace")

	_, dir := layout(t)
	ws := openWorkspace(t, dir)
	assert.Equal(t, ws.Abs("sub/in.txt"), filepath.Join(dir, "sub", "in.txt"))
	assert.Equal(t, ws.Abs("."), dir)
	b, rerr := ws.Root().ReadFile("file.txt")
	assert.NilError(t, rerr)
	assert.Equal(t, string(b), "x")
	_, rerr = ws.Root().ReadFile("link_out")
	assert.Assert(t, rerr != nil, "the root refuses a link that leads out")
	assert.Equal(t, tools.FileError(rerr, "link_out").Code, tools.CodeInvalidPath)
}

func TestWorkspaceValues(t *testing.T) {
	ws := openWorkspace(t, t.TempDir())
	type key struct{}
	assert.Assert(t, ws.Value(key{}) == nil)
	ws.SetValue(key{}, "last")
	assert.Equal(t, ws.Value(key{}), "last")
	ws.SetValue(key{}, 2)
	assert.Equal(t, ws.Value(key{}), 2)
}

func TestFileError(t *testing.T) {
	_, dir := layout(t)
	ws := openWorkspace(t, dir)
	opErr := func(err error) error { return &fs.PathError{Op: "op", Path: "p", Err: err} }
	_, escErr := ws.Root().Stat("link_out")
	tests := []struct {
		err     error
		code    tools.ErrorCode
		message string
	}{
		{escErr, tools.CodeInvalidPath, "Path 'p' is outside the workspace"},
		{opErr(fs.ErrNotExist), tools.CodeFileNotFound, "File 'p' not found"},
		{opErr(syscall.ENOENT), tools.CodeFileNotFound, "File 'p' not found"},
		{opErr(syscall.EEXIST), tools.CodeAlreadyExists, "'p' already exists"},
		{opErr(syscall.ENOTDIR), tools.CodeNotADirectory, "'p': not a directory"},
		{opErr(syscall.EISDIR), tools.CodeIsADirectory, "'p' is a directory"},
		{opErr(syscall.EACCES), tools.CodePermissionDenied, "Permission denied: 'p'"},
		{opErr(syscall.ELOOP), tools.CodeInvalidPath, "'p': too many levels of symbolic links"},
		{opErr(syscall.ENOTEMPTY), tools.CodeExecutionError, "Directory 'p' is not empty"},
		{fmt.Errorf("wrapped: %w", opErr(syscall.ENOENT)), tools.CodeFileNotFound, "File 'p' not found"},
		{errors.New("disk on fire"), tools.CodeExecutionError, "'p': disk on fire"},
	}
	for _, tc := range tests {
		t.Run(tc.message, func(t *testing.T) {
			got := tools.FileError(tc.err, "p")
			assert.Equal(t, got.Code, tc.code)
			assert.Equal(t, got.Message, tc.message)
		})
	}
	// The kernel's own answer for a symlink loop maps the same way.
	_, loopErr := ws.Root().Stat("loop")
	assert.Equal(t, tools.FileError(loopErr, "loop").Code, tools.CodeInvalidPath)
}

// TestResolveMount: inside a task's container the workspace is also /app; absolute paths
// under it are workspace paths, and every escape stays an escape.
func TestResolveMount(t *testing.T) {
	_, dir := layout(t)
	ws := openWorkspace(t, dir)
	ws.Mount = "/app"
	tests := []struct{ in, want string }{
		{"/app/file.txt", "file.txt"},
		{"/app", "."},
		{"/app/", "."},
		{"/app/sub/../file.txt", "file.txt"},
		{"/app/sub/in.txt", "sub/in.txt"},
		{"file.txt", "file.txt"},
		{filepath.Join(dir, "file.txt"), "file.txt"},
		// Escapes.
		{"/app/../etc/passwd", ""},
		{"/app2/file.txt", ""},
		{"/ap", ""},
		{"/etc/passwd", ""},
		{"/app/link_out_dir/secret.txt", ""},
		{"/app/link_out", ""},
		{"/app/sub/link_up2/outside/secret.txt", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ws.Resolve(tc.in)
			check(t, "Resolve", got, err, tc.want)
		})
	}
	ws.Mount = "/"
	_, err := ws.Resolve("/etc/passwd")
	assert.Assert(t, err != nil, "a mount at / must not make every path a workspace path")
}

func TestView(t *testing.T) {
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	defer func() { _ = ws.Close() }() // test cleanup: its error does not change what the test checked
	ws.Env, ws.ReadOnly = map[string]string{"A": "1"}, []string{"/a"}
	v := ws.View("/b")
	assert.DeepEqual(t, v.ReadOnly, []string{"/a", "/b"})
	assert.DeepEqual(t, ws.ReadOnly, []string{"/a"})
	assert.Equal(t, v.Dir(), ws.Dir())
	assert.DeepEqual(t, v.Env, ws.Env)
	v.SetValue("k", 1)
	assert.Equal(t, ws.Value("k"), 1, "a view shares its parent's values")
	assert.NilError(t, v.Close())
	_, err = ws.Root().Stat(".")
	assert.NilError(t, err, "closing a view must not close the parent's root")

	// A view of a view reads and writes the first workspace's values and keeps the mount
	// a task's container gives the workspace.
	ws.Mount = "/app"
	vv := ws.View().View("/c")
	assert.DeepEqual(t, vv.ReadOnly, []string{"/a", "/c"})
	vv.SetValue("k", 2)
	assert.Equal(t, ws.Value("k"), 2)
	assert.Equal(t, v.Value("k"), 2)
	ws.SetValue("k", 3)
	assert.Equal(t, vv.Value("k"), 3)
	rel, rerr := vv.Resolve("/app/x.txt")
	assert.Assert(t, rerr == nil, "%v", rerr)
	assert.Equal(t, rel, "x.txt")
	assert.NilError(t, vv.Close())
	_, err = ws.Root().Stat(".")
	assert.NilError(t, err)
}

// What a sandbox keeps for a workspace is released once, when the workspace (not a View of
// it) closes, latest registration first.
func TestOnClose(t *testing.T) {
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	var order []string
	ws.OnClose(func() { order = append(order, "first") })
	v := ws.View("/b")
	v.OnClose(func() { order = append(order, "from view") })
	assert.NilError(t, v.Close())
	assert.Check(t, len(order) == 0, "closing a view ran %v", order)
	assert.NilError(t, ws.Close())
	assert.DeepEqual(t, order, []string{"from view", "first"})
	_ = ws.Close() // the root is closed already: its error is not the point
	assert.DeepEqual(t, order, []string{"from view", "first"})
}
