package door_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/workspace/door"
)

func open(t *testing.T, dir string) *door.Dir {
	t.Helper()
	d, err := door.Open(dir)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// kindOf is err's door kind, 0 when err is not an *Error.
func kindOf(err error) door.Kind {
	var e *door.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// within fails the test when fn takes longer than limit: the reads below used to block.
func within(t *testing.T, limit time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("did not return within %s", limit)
	}
}

// TestUnreadableFileIsPermission: a file the agent made unreadable (chmod 000); root
// reads it anyway, so the test needs another user.
func TestUnreadableFileIsPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode-000 file: the end-to-end test runs runner as another user")
	}
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o000))
	assert.NilError(t, os.Mkdir(filepath.Join(dir, "d"), 0o000))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "d"), 0o700) })
	d := open(t, dir)
	_, err := d.ReadFile("f", 10)
	assert.Equal(t, kindOf(err), door.Permission, "%v", err)
	assert.ErrorContains(t, err, "f cannot be read (permission denied)")
	var seen []string
	err = d.Walk(context.Background(), door.Limits{}, func(e door.Entry) error {
		if e.Err != nil {
			seen = append(seen, e.Path+": "+e.Err.Error())
		}
		return nil
	})
	assert.NilError(t, err)
	assert.DeepEqual(t, seen, []string{"d: d cannot be read (permission denied)"})
}

// TestFileThatGrowsWhileReadIsRefused: the file is appended to after its fstat.
func TestFileThatGrowsWhileReadIsRefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.xml")
	assert.NilError(t, os.WriteFile(p, []byte("<a/>\n"), 0o644))
	d, err := door.OpenLabeled(dir, "$RESULTS_DIR")
	assert.NilError(t, err)
	defer func() { _ = d.Close() }()
	f, err := d.Open("report.xml")
	assert.NilError(t, err)
	defer func() { _ = f.Close() }()
	w, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	assert.NilError(t, err)
	_, err = w.WriteString("<b/>\n")
	assert.NilError(t, err)
	assert.NilError(t, w.Close())
	_, err = f.ReadAll(1 << 20)
	assert.Equal(t, kindOf(err), door.Grew, "%v", err)
	assert.ErrorContains(t, err, "$RESULTS_DIR/report.xml grew while runner read it")
}

// TestReadsStopAtTheirCap: a file over the cap is refused by ReadFile and cut by
// ReadPrefix, which says so.
func TestReadsStopAtTheirCap(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("0123456789"), 0o644))
	d := open(t, dir)
	b, err := d.ReadFile("f", 10)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "0123456789")
	_, err = d.ReadFile("f", 9)
	assert.Equal(t, kindOf(err), door.TooLarge)
	f, err := d.OpenFollow("f")
	assert.NilError(t, err)
	defer func() { _ = f.Close() }()
	b, more, err := f.ReadPrefix(4)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "0123")
	assert.Assert(t, more)
}

// deepTree makes levels nested directories of 250-character names, one at a time (as an
// agent's `cd` loop would: no path longer than a name is ever given to the system), and
// a file at the bottom. The whole path is longer than PATH_MAX.
func deepTree(t *testing.T, dir string, levels int) string {
	t.Helper()
	name := strings.Repeat("d", 250)
	root, err := os.OpenRoot(dir)
	assert.NilError(t, err)
	for i := 0; i < levels; i++ {
		assert.NilError(t, root.Mkdir(name, 0o755))
		next, err := root.OpenRoot(name)
		assert.NilError(t, err)
		_ = root.Close()
		root = next
	}
	assert.NilError(t, root.WriteFile("bottom.txt", []byte("deep\n"), 0o644))
	_ = root.Close()
	return strings.Repeat(name+"/", levels) + "bottom.txt"
}

// TestDeepTreeIsWalkedAndRead: 20 nested 250-character names (a 5,000-byte path) are
// walked, opened and read; path length never matters.
func TestDeepTreeIsWalkedAndRead(t *testing.T) {
	dir := t.TempDir()
	rel := deepTree(t, dir, 20)
	assert.Assert(t, len(rel) > 4096)
	d := open(t, dir)
	var files []string
	err := d.Walk(context.Background(), door.Limits{}, func(e door.Entry) error {
		if e.Err != nil {
			return e.Err
		}
		if e.Info.Mode().IsRegular() {
			files = append(files, e.Path)
			f, err := e.Open()
			if err != nil {
				return err
			}
			defer func() { _ = f.Close() }()
			b, err := f.ReadAll(100)
			assert.Check(t, is.Equal(string(b), "deep\n"))
			return err
		}
		return nil
	})
	assert.NilError(t, err)
	assert.DeepEqual(t, files, []string{rel})
	b, err := d.ReadFile(rel, 100)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "deep\n")
	info, err := d.Lstat(rel)
	assert.NilError(t, err)
	assert.Equal(t, info.Size(), int64(5))
	// A message about such a path stays short.
	_, err = d.ReadFile(rel+"/x", 100)
	assert.Assert(t, err != nil)
	assert.Assert(t, len(err.Error()) < 400, "%d bytes", len(err.Error()))
}

// TestWalkStopsAtItsLimits: too many entries end the walk with TooManyFiles; a directory
// too deep is visited again with TooDeep and not entered.
func TestWalkStopsAtItsLimits(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d"} {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "x", "y", "z"), 0o755))
	d := open(t, dir)
	err := d.Walk(context.Background(), door.Limits{MaxEntries: 3}, func(door.Entry) error { return nil })
	assert.Equal(t, kindOf(err), door.TooManyFiles, "%v", err)
	assert.ErrorContains(t, err, "it holds more than 3 files and directories")

	var deep []string
	err = d.Walk(context.Background(), door.Limits{MaxDepth: 2}, func(e door.Entry) error {
		if e.Err != nil {
			deep = append(deep, e.Err.Error())
		}
		return nil
	})
	assert.NilError(t, err)
	assert.DeepEqual(t, deep, []string{"x/y: directories nested more than 2 deep"})

	// The function's own error ends the walk as it is; SkipAll ends it quietly.
	mine := errors.New("mine")
	err = d.Walk(context.Background(), door.Limits{}, func(door.Entry) error { return mine })
	assert.Equal(t, err, mine)
	err = d.Walk(context.Background(), door.Limits{}, func(door.Entry) error { return fs.SkipAll })
	assert.NilError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = d.Walk(ctx, door.Limits{}, func(door.Entry) error { return nil })
	assert.Assert(t, errors.Is(err, context.Canceled))
}

// TestWalkFollowsNoLink: a link to a directory (inside or out) is an entry, never entered.
func TestWalkFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(dir, "real"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "real", "f"), nil, 0o644))
	assert.NilError(t, os.Symlink("real", filepath.Join(dir, "in")))
	assert.NilError(t, os.Symlink("/", filepath.Join(dir, "root")))
	d := open(t, dir)
	var paths []string
	err := d.Walk(context.Background(), door.Limits{}, func(e door.Entry) error {
		paths = append(paths, e.Path)
		if e.Info.Mode()&fs.ModeSymlink != 0 {
			target, err := e.Readlink()
			assert.Check(t, err)
			paths = append(paths, "-> "+target)
		}
		return nil
	})
	assert.NilError(t, err)
	assert.DeepEqual(t, paths, []string{"in", "-> real", "real", "real/f", "root", "-> /"})
}
