//go:build linux

package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
)

// dirent builds one linux_dirent64 record, its name NUL-padded to a multiple of 8.
func dirent(ino uint64, typ byte, name string) []byte {
	n := (direntName + len(name) + 1 + 7) &^ 7
	rec := make([]byte, n)
	binary.NativeEndian.PutUint64(rec, ino)
	binary.NativeEndian.PutUint16(rec[direntReclen:], uint16(n))
	rec[direntType] = typ
	copy(rec[direntName:], name)
	return rec
}

func TestParseDirents(t *testing.T) {
	var buf []byte
	buf = append(buf, dirent(1, unix.DT_REG, "a.go")...)
	buf = append(buf, dirent(0, unix.DT_REG, "deleted")...)
	buf = append(buf, dirent(2, unix.DT_DIR, "sub-directory")...)
	type ent struct {
		Typ  byte
		Name string
	}
	var got []ent
	err := parseDirents(buf, func(typ byte, name []byte) { got = append(got, ent{typ, string(name)}) })
	assert.NilError(t, err)
	assert.DeepEqual(t, got, []ent{{unix.DT_REG, "a.go"}, {unix.DT_DIR, "sub-directory"}})

	for name, bad := range map[string][]byte{
		"short":        buf[:10],
		"past the end": buf[:len(buf)-1],
		"below minimum": func() []byte {
			r := dirent(1, unix.DT_REG, "x")
			binary.NativeEndian.PutUint16(r[direntReclen:], 8)
			return r
		}(),
	} {
		err := parseDirents(bad, func(byte, []byte) {})
		assert.Assert(t, errors.Is(err, unix.EIO), name)
	}
}

// A file system that leaves d_type out (DT_UNKNOWN) has each entry's type asked for.
func TestDirentModeUnknown(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"file": "x", "sub/": ""})
	symlink(t, dir, "file", "link")
	assert.NilError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	d, err := os.Open(dir)
	assert.NilError(t, err)
	defer func() { _ = d.Close() }() // test cleanup: its error does not change what the test checked
	fd := int(d.Fd())
	for name, want := range map[string]fs.FileMode{"file": 0, "sub": fs.ModeDir, "link": fs.ModeSymlink, "fifo": fs.ModeIrregular} {
		got, ok := direntMode(fd, unix.DT_UNKNOWN, []byte(name))
		assert.Assert(t, ok, name)
		assert.Equal(t, got, want, name)
	}
	_, ok := direntMode(fd, unix.DT_UNKNOWN, []byte("missing"))
	assert.Assert(t, !ok)
	got, ok := direntMode(fd, unix.DT_SOCK, []byte("any"))
	assert.Assert(t, ok && got == fs.ModeIrregular)
}

func TestReadDirListsAndFails(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"sub/": ""}
	for i := range 200 { // more than one getdents64 buffer of long names
		files[fmt.Sprintf("many/%03d-%s", i, strings.Repeat("x", 200))] = ""
	}
	writeFiles(t, dir, files)
	f, err := os.Open(filepath.Join(dir, "many"))
	assert.NilError(t, err)
	defer func() { _ = f.Close() }()
	ents, err := (&dirHandle{fd: int(f.Fd())}).readDir()
	assert.NilError(t, err)
	want, err := os.ReadDir(filepath.Join(dir, "many"))
	assert.NilError(t, err)
	assert.Equal(t, len(ents), len(want))
	names := map[string]bool{}
	for _, e := range ents {
		names[e.name] = e.typ.IsRegular()
	}
	for _, e := range want {
		assert.Assert(t, names[e.Name()], e.Name())
	}
	// A descriptor that is not a directory's fails to list.
	file, err := os.Open(filepath.Join(dir, "many", want[0].Name()))
	assert.NilError(t, err)
	defer func() { _ = file.Close() }()
	_, err = (&dirHandle{fd: int(file.Fd())}).readDir()
	assert.Assert(t, errors.Is(err, unix.ENOTDIR), "%v", err)
}
