//go:build unix

package door_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/workspace/door"
)

// TestEveryKindOfContentIsRefusedWithItsReason makes each thing an agent can leave where
// a file is read and checks that the read refuses it at once, naming it.
func TestEveryKindOfContentIsRefusedWithItsReason(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	assert.NilError(t, os.WriteFile(outside, []byte("host secret\n"), 0o600))
	assert.NilError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	l, err := net.Listen("unix", filepath.Join(dir, "socket"))
	assert.NilError(t, err)
	defer func() { _ = l.Close() }()
	assert.NilError(t, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "file"), []byte("data\n"), 0o644))
	assert.NilError(t, os.Symlink("file", filepath.Join(dir, "link")))
	assert.NilError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	assert.NilError(t, os.Symlink("loop2", filepath.Join(dir, "loop1")))
	assert.NilError(t, os.Symlink("loop1", filepath.Join(dir, "loop2")))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "big"), nil, 0o644))
	assert.NilError(t, os.Truncate(filepath.Join(dir, "big"), 1<<40)) // sparse: no disk
	d := open(t, dir)

	for _, tc := range []struct {
		name   string
		follow bool
		kind   door.Kind
		msg    string
	}{
		{"fifo", false, door.FIFO, "fifo is a FIFO (named pipe), not a regular file"},
		{"fifo", true, door.FIFO, "fifo is a FIFO (named pipe), not a regular file"},
		{"socket", false, door.Socket, "socket is a socket, not a regular file"},
		{"dir", false, door.Directory, "dir is a directory, not a regular file"},
		{"link", false, door.Symlink, "link is a symlink, which runner does not follow here"},
		{"out", true, door.Symlink, "out is a symlink"},
		{"loop1", true, door.SymlinkLoop, "loop1: too many levels of symbolic links (a symlink loop)"},
		{"big", false, door.TooLarge, "big is larger than 1 MiB"},
		{strings.Repeat("n", 300), false, door.NameTooLong, "a name in the path is too long"},
		{"fifo/x", false, door.FIFO, "fifo is a FIFO (named pipe), not a regular file"},
		{"link/x", false, door.Symlink, "link is a symlink"},
	} {
		var err error
		within(t, 5*time.Second, func() {
			if tc.follow {
				var f *door.File
				if f, err = d.OpenFollow(tc.name); err == nil {
					_, err = f.ReadAll(1 << 20)
					_ = f.Close()
				}
				return
			}
			_, err = d.ReadFile(tc.name, 1<<20)
		})
		assert.Check(t, is.Equal(kindOf(err), tc.kind), "%s (follow %v): %v", tc.name, tc.follow, err)
		if err != nil {
			assert.Check(t, is.Contains(err.Error(), tc.msg))
			assert.Check(t, !strings.Contains(err.Error(), "host secret"))
		}
	}
	// A link inside the directory is followed where asked.
	f, err := d.OpenFollow("link")
	assert.NilError(t, err)
	b, err := f.ReadAll(100)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "data\n")
	_ = f.Close()
}

// TestDeviceIsNeverOpened: a device node (root can make one: /dev/zero's) is refused on
// its lstat, before any open.
func TestDeviceIsNeverOpened(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "zero")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
		t.Skipf("cannot make a device node here (%v): only root can", err)
	}
	d := open(t, dir)
	var err error
	within(t, 5*time.Second, func() { _, err = d.ReadFile("zero", 1<<20) })
	assert.Equal(t, kindOf(err), door.Device, "%v", err)
	assert.ErrorContains(t, err, "zero is a device file, not a regular file")
}
