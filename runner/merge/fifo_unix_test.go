//go:build unix

package merge_test

import "syscall"

// mkfifo makes a FIFO at path (a regular file where there is none).
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
