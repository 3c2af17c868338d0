//go:build !unix

package merge_test

import "os"

// mkfifo makes a FIFO at path (a regular file where there is none).
func mkfifo(path string) error { return os.WriteFile(path, nil, 0o644) }
