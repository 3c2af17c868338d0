//go:build !linux

package transcript

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
