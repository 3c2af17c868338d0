//go:build unix

package search

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory from which entries are opened by name. On Unix it wraps
// the directory's descriptor and opens children with openat(2) and O_NOFOLLOW: one
// system call per file instead of os.Root's walk from the workspace root, which measured
// 2.5x slower on a large tree. A single name from the directory's own listing, opened
// without following links, cannot leave the directory, so this keeps os.Root's guarantee.
// The root directory of a walk is itself opened through the workspace's os.Root.
type dirHandle struct {
	f  *os.File // owns fd; nil where readDir works on fd alone (Linux)
	fd int
}

// openStartDir opens rel (workspace-relative) through root.
func openStartDir(root *os.Root, rel string) (*dirHandle, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	return &dirHandle{f: f, fd: int(f.Fd())}, nil
}

// openDir opens the child directory name, refusing symlinks.
func (h *dirHandle) openDir(name string) (*dirHandle, error) {
	fd, err := openat(h.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	return newDirHandle(fd, name), nil
}

// fileShortEOF says that a short read from openFile's reader is the end of the file.
const fileShortEOF = true

// openFile opens the regular file name for reading. O_NONBLOCK keeps a FIFO swapped in
// after the listing from blocking the search; O_NOFOLLOW keeps a symlink swapped in from
// leading out of the workspace.
func (h *dirHandle) openFile(name string) (io.ReadCloser, error) {
	fd, err := openat(h.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	return fdReader(fd), nil
}

// fdReader reads an open file descriptor.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) { return readFd(int(r), p) }
func (r fdReader) Close() error               { return unix.Close(int(r)) }

// Size implements sizer.
func (r fdReader) Size() (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(r), &st); err != nil {
		return 0, &fs.PathError{Op: "fstat", Path: "", Err: err}
	}
	return st.Size, nil
}

func (h *dirHandle) close() error {
	if h.f != nil {
		return h.f.Close()
	}
	return unix.Close(h.fd)
}

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

func readFd(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Read(fd, p)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return 0, nil // a FIFO with nothing in it: treat as end of file
		}
		if n < 0 {
			n = 0
		}
		return n, err
	}
}
