package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/workspace"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	assert.NilError(t, os.WriteFile(p, []byte(content), 0o644))
}

func protect(t *testing.T, globs ...string) *workspace.Protect {
	t.Helper()
	p, err := workspace.NewProtect(globs)
	assert.NilError(t, err)
	return p
}

func TestProtectMatch(t *testing.T) {
	p := protect(t, "**/*_test.go", "Makefile", "tests", "conftest.py")
	for rel, want := range map[string]bool{
		"main_test.go": true, "pkg/zz_main_test.go": true, "./main_test.go": true,
		"Makefile": true, "sub/Makefile": false, "tests/a.py": true, "tests": true,
		"conftest.py": true, "main.go": false, "testsx/a.py": false,
	} {
		_, got := p.Match(rel)
		assert.Equal(t, got, want, rel)
	}
	var none *workspace.Protect
	_, got := none.Match("a")
	assert.Assert(t, !got)
	for _, bad := range []string{"", "../x", "a/./b", "[", `a\b`} { // "/etc/*" is a container path: see TestProtectedOutside
		_, err := workspace.NewProtect([]string{bad})
		assert.Assert(t, err != nil, "%q accepted", bad)
	}
}

// The agent's attacks on a verification: a TestMain that exits 0, a conftest.py, a
// Makefile edit; each is found by comparing the workspace before and after, even with
// the mtime put back.
func TestManifestFindsChanges(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "main.go", "package main\n")
	write(t, dir, "Makefile", "test:\n\tgo test ./...\n")
	write(t, dir, "old.txt", "old\n")
	write(t, dir, "same.txt", "same\n")
	write(t, dir, "pkg/a.go", "package pkg\n")
	ctx := context.Background()
	m, err := workspace.Snapshot(ctx, dir, protect(t, "**/*_test.go", "Makefile", "**/conftest.py"))
	assert.NilError(t, err)

	none, err := m.Compare(ctx, dir)
	assert.NilError(t, err)
	assert.Equal(t, none.Total(), 0, "%+v", none)

	write(t, dir, "pkg/zz_main_test.go", "package pkg\nfunc TestMain(m *testing.M) { os.Exit(0) }\n")
	write(t, dir, "conftest.py", "import sys; sys.exit(0)\n")
	info, err := os.Stat(filepath.Join(dir, "Makefile"))
	assert.NilError(t, err)
	write(t, dir, "Makefile", "test:\n\ttrue   # ...\n")
	assert.NilError(t, os.Chtimes(filepath.Join(dir, "Makefile"), info.ModTime(), info.ModTime()))
	write(t, dir, "main.go", "package main // edited\n")
	assert.NilError(t, os.Remove(filepath.Join(dir, "old.txt")))
	assert.NilError(t, os.Mkdir(filepath.Join(dir, "newdir"), 0o755))
	assert.NilError(t, os.Symlink("main.go", filepath.Join(dir, "link")))

	c, err := m.Compare(ctx, dir)
	assert.NilError(t, err)
	assert.DeepEqual(t, c.Created, []string{"conftest.py", "link", "newdir/", "pkg/zz_main_test.go"})
	assert.DeepEqual(t, c.Changed, []string{"Makefile", "main.go"})
	assert.DeepEqual(t, c.Deleted, []string{"old.txt"})
	assert.DeepEqual(t, c.Protected, []string{"Makefile", "conftest.py", "pkg/zz_main_test.go"})
	assert.Assert(t, !c.Incomplete)
}

// Rewriting a protected file with its own content, or touching it, is no change; a FIFO
// at a protected path is, and does not block the scan.
func TestManifestProtectedContent(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "Makefile", "all:\n")
	write(t, dir, "main_test.go", "package main\n")
	ctx := context.Background()
	m, err := workspace.Snapshot(ctx, dir, protect(t, "Makefile", "*_test.go"))
	assert.NilError(t, err)
	write(t, dir, "Makefile", "all:\n")
	later := time.Now().Add(time.Hour)
	assert.NilError(t, os.Chtimes(filepath.Join(dir, "Makefile"), later, later))
	assert.NilError(t, os.Remove(filepath.Join(dir, "main_test.go")))
	mkfifo(t, filepath.Join(dir, "main_test.go"))

	done := make(chan struct{})
	var c workspace.Changes
	go func() {
		defer close(done)
		c, err = m.Compare(ctx, dir)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Compare blocked on a FIFO")
	}
	assert.NilError(t, err)
	assert.DeepEqual(t, c.Changed, []string{"main_test.go"})
	assert.DeepEqual(t, c.Protected, []string{"main_test.go"})
}

// A directory made unreadable hides the protected files inside it: they count as deleted.
func TestManifestUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a chmod 000 directory anyway")
	}
	dir := t.TempDir()
	write(t, dir, "tests/a_test.go", "package a\n")
	ctx := context.Background()
	m, err := workspace.Snapshot(ctx, dir, protect(t, "**/*_test.go"))
	assert.NilError(t, err)
	assert.NilError(t, os.Chmod(filepath.Join(dir, "tests"), 0))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "tests"), 0o755) })
	c, err := m.Compare(ctx, dir)
	assert.NilError(t, err)
	assert.DeepEqual(t, c.Protected, []string{"tests/a_test.go"})
}

// Past the entry cap only protected paths are compared, and the result says so.
func TestManifestCapKeepsProtected(t *testing.T) {
	defer workspace.SetMaxEntries(3)()
	dir := t.TempDir()
	for _, name := range []string{"a", "b", "c", "d", "e", "z_test.go"} {
		write(t, dir, name, name)
	}
	ctx := context.Background()
	m, err := workspace.Snapshot(ctx, dir, protect(t, "*_test.go"))
	assert.NilError(t, err)
	write(t, dir, "z_test.go", "changed")
	write(t, dir, "new_test.go", "new")
	c, err := m.Compare(ctx, dir)
	assert.NilError(t, err)
	assert.Assert(t, c.Incomplete)
	assert.DeepEqual(t, c.Protected, []string{"new_test.go", "z_test.go"})
}

func TestManifestProtectedUnder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pkg/sub/a_test.go", "x")
	write(t, dir, "pkg/b.go", "x")
	write(t, dir, "other/c.go", "x")
	m, err := workspace.Snapshot(context.Background(), dir, protect(t, "**/*_test.go"))
	assert.NilError(t, err)
	for dir, want := range map[string]string{".": "pkg/sub/a_test.go", "pkg": "pkg/sub/a_test.go", "pkg/sub": "pkg/sub/a_test.go", "other": "", "pk": "", "pkg/sub/a_test.go": ""} {
		got, glob, ok := m.ProtectedUnder(dir)
		assert.Equal(t, got, want, dir)
		assert.Equal(t, ok, want != "", dir)
		if ok {
			assert.Equal(t, glob, "**/*_test.go")
		}
	}
	unprotected, err := workspace.Snapshot(context.Background(), dir, nil)
	assert.NilError(t, err)
	_, _, ok := unprotected.ProtectedUnder(".")
	assert.Assert(t, !ok)
}

func TestManifestCanceled(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.txt", "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := workspace.Snapshot(ctx, dir, nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestProtectedOutside(t *testing.T) {
	globs := []string{"tests/**", "/usr/local/bin/pytest", "/opt/checker/**"}
	p, glob, ok := workspace.ProtectedOutside(globs, []string{"/usr", "/tmp/x", "/opt/checker/lib/a.so"})
	assert.Assert(t, ok)
	assert.Equal(t, p, "/opt/checker/lib/a.so")
	assert.Equal(t, glob, "/opt/checker/**")
	_, _, ok = workspace.ProtectedOutside(globs, []string{"/usr/local/bin", "/tests/x"})
	assert.Assert(t, !ok, "a parent of a protected path, or a workspace glob, protects nothing outside")
	pr, err := workspace.NewProtect(globs)
	assert.NilError(t, err)
	_, ok = pr.Match("usr/local/bin/pytest")
	assert.Assert(t, !ok, "absolute globs are not workspace globs")
}
