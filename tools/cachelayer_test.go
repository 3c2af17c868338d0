package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

func TestCacheHome(t *testing.T) {
	cache := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(cache, "go-build", "ab"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(cache, "go-build", "ab", "x-d"), []byte("x"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(cache, "go-build", "trim.txt"), []byte("1"), 0o644))
	ws, err := OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	home, err := ws.CacheHome()
	assert.NilError(t, err)
	assert.Equal(t, home, "", "no cache, no layer")

	ws.CacheDir = cache
	home, err = ws.CacheHome()
	assert.NilError(t, err)
	assert.Equal(t, home, cache, "unconfined: no layer, nothing would enforce it")

	ws.Sandbox = protecting{}
	home, err = ws.CacheHome()
	assert.NilError(t, err)
	assert.Assert(t, home != cache)
	again, _ := ws.View().CacheHome()
	assert.Equal(t, again, home, "a view shares its workspace's layer")
	target, err := os.Readlink(filepath.Join(home, "go-build", "ab", "x-d"))
	assert.NilError(t, err)
	assert.Equal(t, target, filepath.Join(cache, "go-build", "ab", "x-d"))
	fi, err := os.Lstat(filepath.Join(home, "go-build", "trim.txt"))
	assert.NilError(t, err)
	assert.Assert(t, fi.Mode().IsRegular(), "trim.txt is copied, Go rewrites it")

	setup := ws.View()
	setup.CacheWritable = true
	direct, _ := setup.CacheHome()
	assert.Equal(t, direct, cache)

	assert.NilError(t, ws.Close())
	_, err = os.Stat(home)
	assert.Assert(t, os.IsNotExist(err), "the layer goes with the workspace")
}

// TestCacheLayerSkips: a toolchain the task does not use is left out of its layer (a
// link per cached file is the layer's cost), the rest is there; a command that uses the
// skipped one anyway writes a fresh tree of its own in the layer, never the cache.
func TestCacheLayerSkips(t *testing.T) {
	cache := t.TempDir()
	for _, p := range []string{"go-build/ab/x-d", "pip/wheels/y.whl"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(cache, filepath.Dir(p)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(cache, p), []byte("x"), 0o644))
	}
	ws, err := OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	defer func() { _ = ws.Close() }()
	ws.CacheDir, ws.Sandbox, ws.CacheSkip = cache, protecting{}, []string{"go-build"}
	home, err := ws.View().CacheHome()
	assert.NilError(t, err)
	_, err = os.Lstat(filepath.Join(home, "go-build"))
	assert.Assert(t, os.IsNotExist(err), "skipped: %v", err)
	_, err = os.Lstat(filepath.Join(home, "pip", "wheels", "y.whl"))
	assert.NilError(t, err)
}

// BenchmarkCacheLayer makes a layer over a cache of 256 directories and 4096 files, the
// shape of a Go build cache.
func BenchmarkCacheLayer(b *testing.B) {
	cache := b.TempDir()
	for i := 0; i < 4096; i++ {
		dir := filepath.Join(cache, "go-build", fmt.Sprintf("%02x", i%256))
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%064x-d", i)), []byte("x"), 0o644)
	}
	b.ResetTimer()
	for b.Loop() {
		dir, err := newCacheLayer(cache, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = os.RemoveAll(dir)
		b.StartTimer()
	}
}

// protecting is a sandbox that shows the cache read-only.
type protecting struct{}

func (protecting) Name() string                     { return "test" }
func (protecting) Wrap(*exec.Cmd, *Workspace) error { return nil }
func (protecting) ProtectsCache() bool              { return true }
