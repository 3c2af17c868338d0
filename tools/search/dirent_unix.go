//go:build unix && !linux

package search

import "os"

// newDirHandle wraps the descriptor of the directory name in an os.File, which lists it.
func newDirHandle(fd int, name string) *dirHandle {
	return &dirHandle{f: os.NewFile(uintptr(fd), name), fd: fd}
}

func (h *dirHandle) readDir() ([]dirEntry, error) { return osDirEntries(h.f.ReadDir(-1)) }
