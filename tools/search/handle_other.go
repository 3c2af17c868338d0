//go:build !unix

package search

import (
	"io"
	"os"
)

// dirHandle is an open directory from which entries are opened by name. Off Unix it is
// an os.Root for the directory, so the kernel-enforced confinement still applies.
type dirHandle struct {
	root *os.Root
}

// openStartDir opens rel (workspace-relative) through root.
func openStartDir(root *os.Root, rel string) (*dirHandle, error) {
	r, err := root.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	return &dirHandle{root: r}, nil
}

// openDir opens the child directory name.
func (h *dirHandle) openDir(name string) (*dirHandle, error) { return openStartDir(h.root, name) }

func (h *dirHandle) readDir() ([]dirEntry, error) {
	f, err := h.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return osDirEntries(f.ReadDir(-1))
}

// fileShortEOF is false: os.File reports the end of a file itself.
const fileShortEOF = false

// openFile opens the file name for reading.
func (h *dirHandle) openFile(name string) (io.ReadCloser, error) { return h.root.Open(name) }

func (h *dirHandle) close() error { return h.root.Close() }
