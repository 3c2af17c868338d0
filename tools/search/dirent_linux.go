//go:build linux

package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// On Linux a directory is listed with getdents64 on its bare descriptor, without the
// os.File that os.ReadDir needs (whose creation costs an fcntl call) and without one
// fs.DirEntry allocation per entry: the names of a directory share one string.

func newDirHandle(fd int, _ string) *dirHandle { return &dirHandle{fd: fd} }

// direntBuf is a getdents64 buffer and what is parsed from it, reused across listings.
type direntBuf struct {
	raw   [32 << 10]byte
	names []byte // NUL-terminated names
	ents  []dirEntry
}

var direntBufs = sync.Pool{New: func() any { return new(direntBuf) }}

// Offsets in a linux_dirent64 record: ino (8 bytes), off (8), reclen (2), type (1), name.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

func (h *dirHandle) readDir() ([]dirEntry, error) {
	b := direntBufs.Get().(*direntBuf)
	defer direntBufs.Put(b)
	b.names, b.ents = b.names[:0], b.ents[:0]
	for {
		n, err := unix.Getdents(h.fd, b.raw[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents64", Path: ".", Err: err}
		}
		if n <= 0 {
			break
		}
		err = parseDirents(b.raw[:n], func(typ byte, name []byte) {
			if string(name) == "." || string(name) == ".." {
				return // not one of the directory's own entries
			}
			mode, ok := direntMode(h.fd, typ, name)
			if !ok {
				return // gone since the listing
			}
			b.ents = append(b.ents, dirEntry{typ: mode})
			b.names = append(b.names, name...)
			b.names = append(b.names, 0)
		})
		if err != nil {
			return nil, err
		}
	}
	// One string holds every name; each entry's name is a slice of it.
	ents := slices.Clone(b.ents)
	all := string(b.names)
	for i := range ents {
		end := strings.IndexByte(all, 0)
		ents[i].name, all = all[:end], all[end+1:]
	}
	return ents, nil
}

// parseDirents calls fn with the type and name of each linux_dirent64 record in buf,
// skipping deleted entries (inode 0).
func parseDirents(buf []byte, fn func(typ byte, name []byte)) error {
	for len(buf) > 0 {
		reclen := 0
		if len(buf) >= direntName {
			reclen = int(binary.NativeEndian.Uint16(buf[direntReclen:]))
		}
		if reclen < direntName || reclen > len(buf) {
			return fmt.Errorf("getdents64: malformed record: %w", unix.EIO)
		}
		name := buf[direntName:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if binary.NativeEndian.Uint64(buf) != 0 {
			fn(buf[direntType], name)
		}
		buf = buf[reclen:]
	}
	return nil
}

// direntMode maps a d_type to a file type, asking fstatat when the file system left
// the type out (DT_UNKNOWN). It is false when the entry no longer exists.
func direntMode(dirfd int, typ byte, name []byte) (fs.FileMode, bool) {
	switch typ {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_UNKNOWN:
		var st unix.Stat_t
		for {
			err := unix.Fstatat(dirfd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return 0, false
			}
			break
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			return 0, true
		case unix.S_IFDIR:
			return fs.ModeDir, true
		case unix.S_IFLNK:
			return fs.ModeSymlink, true
		}
	}
	return fs.ModeIrregular, true // a FIFO, socket or device: never searched
}
