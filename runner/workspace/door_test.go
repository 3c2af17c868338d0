package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/runner/workspace/door"
)

// deepTree makes 20 nested directories of 250-character names one at a time, as an
// agent's `cd` loop does (no system call is given a path longer than a name), with a
// file at the bottom; it returns the file's path, 5,000 bytes long.
func deepTree(t *testing.T, dir string) string {
	t.Helper()
	name := strings.Repeat("d", 250)
	root, err := os.OpenRoot(dir)
	assert.NilError(t, err)
	for range 20 {
		assert.NilError(t, root.Mkdir(name, 0o755))
		next, err := root.OpenRoot(name)
		assert.NilError(t, err)
		_ = root.Close()
		root = next
	}
	assert.NilError(t, root.WriteFile("bottom.txt", []byte("before\n"), 0o644))
	_ = root.Close()
	return strings.Repeat(name+"/", 20) + "bottom.txt"
}

// TestDeepTreeIsSnapshotComparedDiffedAndCloned: a tree whose paths are longer than
// PATH_MAX (4,096) goes through every verification read as any tree does: a change at
// its bottom is found and diffed, and the copy for fresh_container holds it (the copy by
// path string failed with "file name too long", an error of the scenario).
func TestDeepTreeIsSnapshotComparedDiffedAndCloned(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	rel := deepTree(t, src)
	ctx := context.Background()
	m, err := workspace.Snapshot(ctx, src, nil)
	assert.NilError(t, err)
	texts, err := m.Texts(ctx, src, workspace.DefaultTextLimits)
	assert.NilError(t, err)
	root, err := os.OpenRoot(src)
	assert.NilError(t, err)
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_APPEND, 0)
	assert.NilError(t, err)
	_, err = f.WriteString("after\n")
	assert.NilError(t, err)
	assert.NilError(t, f.Close())
	_ = root.Close()

	c, err := m.Compare(ctx, src)
	assert.NilError(t, err)
	assert.DeepEqual(t, c.Changed, []string{rel})
	diffs := texts.Diffs(ctx, src, c)
	assert.Equal(t, len(diffs.Files), 1)
	assert.Assert(t, strings.Contains(diffs.Files[0].Diff, "+after"), "%+v", diffs.Files[0])

	dst := t.TempDir()
	assert.NilError(t, workspace.Clone(ctx, src, dst))
	copied, err := door.Open(dst)
	assert.NilError(t, err)
	defer func() { _ = copied.Close() }()
	b, err := copied.ReadFile(rel, 100)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "before\nafter\n")
}

// TestTooLargeOrDeepAWorkspaceIsTheAgents: past the walk's limits the snapshot, the
// comparison and the copy stop with a *door.Error, which verification blames on the agent.
func TestTooLargeOrDeepAWorkspaceIsTheAgents(t *testing.T) {
	old := workspace.WalkLimits
	workspace.WalkLimits = door.Limits{MaxEntries: 50, MaxDepth: 5}
	defer func() { workspace.WalkLimits = old }()
	ctx := context.Background()
	many, deep := t.TempDir(), t.TempDir()
	for i := range 60 {
		assert.NilError(t, os.WriteFile(filepath.Join(many, strings.Repeat("f", i+1)), nil, 0o644))
	}
	assert.NilError(t, os.MkdirAll(filepath.Join(deep, "a", "b", "c", "d", "e", "f"), 0o755))
	for _, tc := range []struct {
		dir  string
		kind door.Kind
		msg  string
	}{
		{many, door.TooManyFiles, "it holds more than 50 files and directories"},
		{deep, door.TooDeep, "a/b/c/d/e: directories nested more than 5 deep"},
	} {
		_, err := workspace.Snapshot(ctx, tc.dir, nil)
		var de *door.Error
		assert.Assert(t, errors.As(err, &de), "%v", err)
		assert.Equal(t, de.Kind, tc.kind)
		assert.ErrorContains(t, err, tc.msg)
		err = workspace.Clone(ctx, tc.dir, t.TempDir())
		assert.Assert(t, errors.As(err, &de), "%v", err)
		assert.Equal(t, de.Kind, tc.kind)
	}
}

// TestCloneLeavesSpecialFilesOut: a FIFO and a socket are not copied, and never opened.
func TestCloneLeavesSpecialFilesOut(t *testing.T) {
	t.Parallel()
	src, dst := t.TempDir(), t.TempDir()
	assert.NilError(t, syscall.Mkfifo(filepath.Join(src, "fifo"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644))
	assert.NilError(t, workspace.Clone(context.Background(), src, dst))
	entries, err := os.ReadDir(dst)
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 1)
	assert.Equal(t, entries[0].Name(), "f")
}
