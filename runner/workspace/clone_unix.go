//go:build unix

package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileID identifies a file by device and inode.
type fileID struct{ dev, ino uint64 }

// idOf is the identity of a file linked more than once (false for a file with one link).
func idOf(info fs.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true // Dev is int32 on some systems
}

// copySparse copies the first size bytes of in to out, only the data segments
// (SEEK_DATA/SEEK_HOLE), then sets out's size: holes stay holes.
func copySparse(out, in *os.File, size int64) error {
	var off int64
	for off < size {
		data, err := in.Seek(off, unix.SEEK_DATA)
		switch {
		case errors.Is(err, syscall.ENXIO):
			off = size // only a hole remains
			continue
		case errors.Is(err, syscall.EINVAL) && off == 0:
			return copyAll(out, in, size) // the file system cannot tell holes
		case err != nil:
			return err
		}
		hole, err := in.Seek(data, unix.SEEK_HOLE)
		if err != nil {
			return err
		}
		if hole > size {
			hole = size
		}
		if _, err := in.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := out.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if err := copyAll(out, in, hole-data); err != nil {
			return err
		}
		off = hole
	}
	return out.Truncate(size)
}
