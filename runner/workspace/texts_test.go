package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
)

// agentRun snapshots dir (files written first), lets act change it, and returns the diffs.
func agentRun(t *testing.T, files map[string]string, lim TextLimits, act func(dir string)) result.Diffs {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	ctx := context.Background()
	m, err := Snapshot(ctx, dir, nil)
	assert.NilError(t, err)
	texts, err := m.Texts(ctx, dir, lim)
	assert.NilError(t, err)
	time.Sleep(10 * time.Millisecond) // a different mtime, as an agent's later write has
	act(dir)
	c, err := m.Compare(ctx, dir)
	assert.NilError(t, err)
	return texts.Diffs(ctx, dir, c)
}

func byPath(d result.Diffs) map[string]result.FileDiff {
	m := map[string]result.FileDiff{}
	for _, f := range d.Files {
		m[f.Path] = f
	}
	return m
}

func TestDiffsOfCreatedChangedDeleted(t *testing.T) {
	d := agentRun(t, map[string]string{"main.go": "package main\n\nfunc Old() {}\n", "gone.txt": "bye\n", "keep.txt": "same\n", "src/a.txt": "no newline"},
		DefaultTextLimits, func(dir string) {
			assert.NilError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc New() {}\n"), 0o644))
			assert.NilError(t, os.Remove(filepath.Join(dir, "gone.txt")))
			assert.NilError(t, os.WriteFile(filepath.Join(dir, "new.txt"), []byte("hello\n"), 0o644))
			assert.NilError(t, os.WriteFile(filepath.Join(dir, "src/a.txt"), []byte("no newline\n"), 0o644))
			assert.NilError(t, os.Chtimes(filepath.Join(dir, "keep.txt"), time.Now(), time.Now()))
		})
	f := byPath(d)
	assert.Equal(t, len(d.Files), 5, "%+v", d)
	assert.Equal(t, f["keep.txt"].Skipped, "same content (only its metadata changed)")
	assert.Equal(t, f["main.go"].Diff, "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n \n-func Old() {}\n+func New() {}\n")
	assert.Equal(t, [2]int{f["main.go"].Added, f["main.go"].Removed}, [2]int{1, 1})
	assert.Equal(t, f["new.txt"].Diff, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n")
	assert.Equal(t, f["new.txt"].Status, result.DiffCreated)
	assert.Equal(t, f["gone.txt"].Diff, "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n")
	assert.Check(t, is.Contains(f["src/a.txt"].Diff, "-no newline\n\\ No newline at end of file\n+no newline\n"))
}

// TestDiffsSkipBinaryLargeAndOverTheTotal: a 10 MB file, a binary one and files past the
// snapshot's total are listed with the reason, never read whole.
func TestDiffsSkipBinaryLargeAndOverTheTotal(t *testing.T) {
	lim := DefaultTextLimits
	lim.Total = 40
	d := agentRun(t, map[string]string{"a.txt": strings.Repeat("a", 30) + "\n", "b.txt": strings.Repeat("b", 30) + "\n", "bin": "\x00\x01\x02"},
		lim, func(dir string) {
			for _, n := range []string{"a.txt", "b.txt", "bin"} {
				assert.NilError(t, os.WriteFile(filepath.Join(dir, n), []byte("changed\n"), 0o644))
			}
			big := strings.Repeat("x\n", 5<<20) // 10 MB
			assert.NilError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644))
			assert.NilError(t, os.WriteFile(filepath.Join(dir, "new.bin"), []byte("\xff\xfe text"), 0o644))
		})
	f := byPath(d)
	assert.Check(t, f["a.txt"].Diff != "")
	assert.Equal(t, f["b.txt"].Skipped, "not in the snapshot: its 40 bytes total was used up")
	assert.Equal(t, f["bin"].Skipped, "binary")
	assert.Equal(t, f["big.txt"].Skipped, "larger than 256 KiB")
	assert.Equal(t, f["new.bin"].Skipped, "binary")
}

// TestDiffDoesNotFollowASymlinkOutOfTheWorkspace is the attack: the agent replaces a file
// with a link to a host file (and adds one), hoping the diff shows the host file's
// content in the report. Links are not followed.
func TestDiffDoesNotFollowASymlinkOutOfTheWorkspace(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	assert.NilError(t, os.WriteFile(secret, []byte("HOST-SECRET\n"), 0o600))
	d := agentRun(t, map[string]string{"notes.txt": "mine\n"}, DefaultTextLimits, func(dir string) {
		assert.NilError(t, os.Remove(filepath.Join(dir, "notes.txt")))
		assert.NilError(t, os.Symlink(secret, filepath.Join(dir, "notes.txt")))
		assert.NilError(t, os.Symlink(secret, filepath.Join(dir, "link.txt")))
	})
	for _, f := range d.Files {
		assert.Check(t, !strings.Contains(f.Diff, "HOST-SECRET"), "%+v", f)
	}
	assert.Equal(t, byPath(d)["link.txt"].Skipped, "not a regular file")
}

// TestDiffOfAFIFODoesNotBlock: a named pipe the agent leaves behind is listed, not read.
func TestDiffOfAFIFODoesNotBlock(t *testing.T) {
	done := make(chan result.Diffs, 1)
	go func() {
		done <- agentRun(t, nil, DefaultTextLimits, func(dir string) {
			assert.NilError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
		})
	}()
	select {
	case d := <-done:
		assert.Equal(t, byPath(d)["pipe"].Skipped, "not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("reading the FIFO blocked")
	}
}

// TestDiffsAreCapped: one diff at PerDiff, all of them at AllDiffs, and a change too large
// for the diff algorithm is one hunk, quickly.
func TestDiffsAreCapped(t *testing.T) {
	lim := DefaultTextLimits
	lim.PerDiff, lim.AllDiffs, lim.MaxLines = 200, 500, 100
	files := map[string]string{}
	for _, n := range []string{"1", "2", "3", "4", "5", "6"} {
		files[n+".txt"] = strings.Repeat("line "+n+"\n", 50)
	}
	files["many.txt"] = strings.Repeat("old\n", 20000)
	start := time.Now()
	d := agentRun(t, files, lim, func(dir string) {
		for n := range files {
			assert.NilError(t, os.WriteFile(filepath.Join(dir, n), []byte(strings.Repeat("new\nother\n", 20000)), 0o644))
		}
	})
	assert.Assert(t, time.Since(start) < 5*time.Second)
	for _, f := range d.Files {
		assert.Check(t, len(f.Diff) <= 200, "%s: %d", f.Path, len(f.Diff))
		assert.Check(t, f.Truncated)
	}
	assert.Check(t, d.Omitted > 0)
	assert.Check(t, is.Contains(d.Note, "not diffed"))
	f := byPath(d)["many.txt"]
	if f.Path != "" {
		assert.Check(t, is.Contains(f.Diff, "@@ -1,20000 +1,40000 @@"))
	}
}

func TestALargeChangeIsOneHunkQuickly(t *testing.T) {
	start := time.Now()
	d, added, removed := unified(strings.Repeat("old\n", 20000), strings.Repeat("new\nother\n", 20000), "a/x", "b/x", 5000)
	assert.Assert(t, time.Since(start) < 2*time.Second)
	assert.Check(t, strings.HasPrefix(d, "--- a/x\n+++ b/x\n@@ -1,20000 +1,40000 @@\n-old\n"))
	assert.Equal(t, [2]int{added, removed}, [2]int{40000, 20000})
}

// BenchmarkTexts is the per-scenario cost of the text snapshot and the diffs: a workspace
// of 100 files of 4 KB, 5 of them changed by the agent.
func BenchmarkTexts(b *testing.B) {
	dir := b.TempDir()
	for i := range 100 {
		assert.NilError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(strings.Repeat(fmt.Sprintf("line %d of a file\n", i), 4096/18)), 0o644))
	}
	ctx := context.Background()
	m, err := Snapshot(ctx, dir, nil)
	assert.NilError(b, err)
	for i := range 5 {
		assert.NilError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte("changed\n"), 0o644))
	}
	c, err := m.Compare(ctx, dir)
	assert.NilError(b, err)
	b.ResetTimer()
	for range b.N {
		texts, err := m.Texts(ctx, dir, DefaultTextLimits)
		assert.NilError(b, err)
		_ = texts.Diffs(ctx, dir, c)
	}
}

// TestDiffsStopAtTheirFileLimitAndTime: ten thousand files the agent created are counted,
// not each opened, and a context that is done stops the diffs at once.
func TestDiffsStopAtTheirFileLimitAndTime(t *testing.T) {
	lim := DefaultTextLimits
	lim.MaxFiles = 10
	d := agentRun(t, nil, lim, func(dir string) {
		for i := range 10000 {
			assert.NilError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), []byte("x\n"), 0o644))
		}
	})
	assert.Equal(t, len(d.Files), 10)
	assert.Equal(t, d.Omitted, 9990)
	assert.Check(t, is.Contains(d.Note, "9990 more changed file(s) not diffed: the diffs reached 1 MiB or 10 files"))

	dir := t.TempDir()
	m, err := Snapshot(context.Background(), dir, nil)
	assert.NilError(t, err)
	texts, err := m.Texts(context.Background(), dir, DefaultTextLimits)
	assert.NilError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d = texts.Diffs(ctx, dir, Changes{Created: []string{"a", "b"}})
	assert.Equal(t, d.Omitted, 2)
	assert.Check(t, is.Contains(d.Note, "the time for diffs ran out"))
}
