package scenario

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

// hasInterp reports whether the ELF file at name asks for a dynamic loader.
func hasInterp(t *testing.T, name string) bool {
	t.Helper()
	f, err := elf.Open(name)
	assert.NilError(t, err)
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}

// A runner that cannot run inside an arbitrary image (a cgo build, as a test binary
// with -race is; not an ELF file at all) is refused with the cause named, before any
// container starts; a static program passes.
func TestForwarderMustBeStatic(t *testing.T) {
	text := filepath.Join(t.TempDir(), "runner")
	assert.NilError(t, os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755))
	err := staticELF(text)
	assert.Assert(t, errors.Is(err, ErrNotStatic))
	assert.ErrorContains(t, err, text+" cannot run in the task's container")

	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err == nil && hasInterp(t, sh) {
		err = staticELF(sh)
		assert.Assert(t, errors.Is(err, ErrNotStatic))
		assert.ErrorContains(t, err, "is dynamically linked (built with cgo)")
		assert.ErrorContains(t, err, "CGO_ENABLED=0")
	}
	for _, static := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		if _, err := os.Stat(static); err == nil && !hasInterp(t, static) {
			assert.NilError(t, staticELF(static))
		}
	}
}
