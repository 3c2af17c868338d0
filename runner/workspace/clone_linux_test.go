package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/workspace"
)

func blocks(t *testing.T, path string) (allocated int64, nlink uint64) {
	t.Helper()
	var st syscall.Stat_t
	assert.NilError(t, syscall.Lstat(path, &st))
	return st.Blocks * 512, uint64(st.Nlink)
}

// TestCloneDoesNotInflateSparseFilesOrLinks performs the disk-filling attack on the copy
// verification works on: an 8 GiB sparse file and 2,000 hard links to one 1 MiB file take
// a few MiB in the agent's workspace, and must take no more in the copy (copied naively,
// 8 GiB and 2 GiB).
func TestCloneDoesNotInflateSparseFilesOrLinks(t *testing.T) {
	t.Parallel()
	src, dst := t.TempDir(), t.TempDir()
	sparse := filepath.Join(src, "sparse.img")
	f, err := os.Create(sparse)
	assert.NilError(t, err)
	_, err = f.WriteAt([]byte("middle"), 1<<30)
	assert.NilError(t, err)
	assert.NilError(t, f.Truncate(8<<30))
	assert.NilError(t, f.Close())
	if a, _ := blocks(t, sparse); a > 1<<20 {
		t.Skipf("the file system does not keep holes (%d bytes allocated)", a)
	}
	big := make([]byte, 1<<20)
	big[0], big[len(big)-1] = 'a', 'z'
	assert.NilError(t, os.WriteFile(filepath.Join(src, "one"), big, 0o640))
	assert.NilError(t, os.Mkdir(filepath.Join(src, "links"), 0o755))
	for i := range 2000 {
		assert.NilError(t, os.Link(filepath.Join(src, "one"), filepath.Join(src, "links", strconv.Itoa(i))))
	}
	assert.NilError(t, os.Symlink("/etc/passwd", filepath.Join(src, "link-out")))
	assert.NilError(t, syscall.Mkfifo(filepath.Join(src, "fifo"), 0o644))
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	assert.NilError(t, os.Chtimes(filepath.Join(src, "one"), old, old))

	assert.NilError(t, workspace.Clone(context.Background(), src, dst))

	a, _ := blocks(t, filepath.Join(dst, "sparse.img"))
	assert.Assert(t, a <= 1<<20, "the sparse file took %d bytes", a)
	fi, err := os.Stat(filepath.Join(dst, "sparse.img"))
	assert.NilError(t, err)
	assert.Equal(t, fi.Size(), int64(8<<30))
	got := make([]byte, 6)
	g, err := os.Open(filepath.Join(dst, "sparse.img"))
	assert.NilError(t, err)
	_, err = g.ReadAt(got, 1<<30)
	_ = g.Close() // read only
	assert.NilError(t, err)
	assert.Equal(t, string(got), "middle")

	_, n := blocks(t, filepath.Join(dst, "one"))
	assert.Equal(t, n, uint64(2001), "the links stay links")
	b, err := os.ReadFile(filepath.Join(dst, "links", "1999"))
	assert.NilError(t, err)
	assert.DeepEqual(t, b, big)
	fi, err = os.Stat(filepath.Join(dst, "one"))
	assert.NilError(t, err)
	assert.Equal(t, fi.Mode().Perm(), os.FileMode(0o640))
	assert.Assert(t, fi.ModTime().Equal(old), "%v", fi.ModTime())
	link, err := os.Readlink(filepath.Join(dst, "link-out"))
	assert.NilError(t, err)
	assert.Equal(t, link, "/etc/passwd", "a link is copied, never followed")
	_, err = os.Lstat(filepath.Join(dst, "fifo"))
	assert.Assert(t, os.IsNotExist(err), "a FIFO is left out")
}

func TestCloneStopsWithItsContext(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(src, "a"), []byte("a"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := workspace.Clone(ctx, src, t.TempDir())
	assert.ErrorIs(t, err, context.Canceled)
}
