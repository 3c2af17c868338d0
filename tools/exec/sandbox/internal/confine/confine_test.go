//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"
)

func TestReadable(t *testing.T) {
	dir := fs.NewDir(t, "readable",
		fs.WithDir("a",
			fs.WithDir("b", fs.WithFile("secret", "x"), fs.WithFile("ok.txt", "x")),
			fs.WithDir("c"),
		),
		fs.WithDir("d"),
		fs.WithFile("top.txt", "x"),
		fs.WithSymlink("to-b", "a/b"),
		fs.WithSymlink("to-c", "a/c"),
	)
	root := dir.Path()
	p := func(rel string) string { return filepath.Join(root, rel) }

	dirs, files, listOnly := readable(root, []string{p("a/b/secret")})
	assert.DeepEqual(t, listOnly, []string{root, p("a"), p("a/b")})
	assert.DeepEqual(t, dirs, []string{p("a/c"), p("d"), p("to-c")})
	assert.DeepEqual(t, files, []string{p("a/b/ok.txt"), p("top.txt")})

	// A denied directory is skipped whole; nothing denied means one grant for all.
	dirs, files, listOnly = readable(root, []string{p("a/b")})
	assert.DeepEqual(t, listOnly, []string{root, p("a")})
	assert.DeepEqual(t, dirs, []string{p("a/c"), p("d"), p("to-c")})
	assert.DeepEqual(t, files, []string{p("top.txt")})

	dirs, files, listOnly = readable(root, nil)
	assert.DeepEqual(t, dirs, []string{root})
	assert.Equal(t, len(files)+len(listOnly), 0)
}

func TestHandledFor(t *testing.T) {
	tests := []struct {
		abi             int
		fs, net, scoped uint64
	}{
		{abi: 1, fs: 1<<13 - 1},
		{abi: 2, fs: 1<<14 - 1},
		{abi: 3, fs: 1<<15 - 1},
		{abi: 4, fs: 1<<15 - 1, net: 3},
		{abi: 6, fs: 1<<16 - 1, net: 3, scoped: 3},
		{abi: 9, fs: 1<<17 - 1, net: 3, scoped: 3},
		{abi: 10, fs: 1<<17 - 1, net: 15, scoped: 3},
	}
	for _, tc := range tests {
		fs, net, scoped := handledFor(tc.abi)
		assert.Equal(t, fs, tc.fs, "abi %d", tc.abi)
		assert.Equal(t, net, tc.net, "abi %d", tc.abi)
		assert.Equal(t, scoped, tc.scoped, "abi %d", tc.abi)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a", true},
		{"/a", "/a", true},
		{"/ab", "/a", false},
		{"/a", "/a/b", false},
		{"/anything", "/", true},
	}
	for _, tc := range tests {
		assert.Equal(t, Within(tc.p, tc.dir), tc.want, "%s in %s", tc.p, tc.dir)
	}
}

func TestApplyLimitsLowersOnly(t *testing.T) {
	// On a child, so that the test process keeps its own limits.
	sleep := startSleep(t)
	assert.NilError(t, ApplyLimits(sleep, Limits{CPUSeconds: 7, FileSizeMB: 3}))
	b, err := os.ReadFile(filepath.Join("/proc", itoa(sleep), "limits"))
	assert.NilError(t, err)
	assert.Assert(t, containsLine(string(b), "Max cpu time", "7", "8"), string(b))
	assert.Assert(t, containsLine(string(b), "Max file size", "3145728", "3145728"), string(b))
	assert.Assert(t, containsLine(string(b), "Max core file size", "0", "0"), string(b))

	// A second call cannot raise them back.
	assert.NilError(t, ApplyLimits(sleep, Limits{CPUSeconds: 100}))
	b, _ = os.ReadFile(filepath.Join("/proc", itoa(sleep), "limits"))
	assert.Assert(t, containsLine(string(b), "Max cpu time", "8", "8"), string(b))
}
