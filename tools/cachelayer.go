package tools

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// cacheLayer is a workspace's private layer over the shared build cache.
type cacheLayer struct {
	once sync.Once
	dir  string
	err  error
}

// CacheHome returns the directory the workspace's commands use as XDG_CACHE_HOME: ""
// without a CacheDir, CacheDir itself when CacheWritable, and otherwise the workspace's
// private layer over it, made on the first call and removed when the workspace closes.
//
// The layer is a tree of the cache's directories, real and writable, whose files are
// symbolic links to the cache's: reads find every entry (a warm Go build), a new entry
// lands in the layer, and a write to an existing one follows the link into the cache,
// which the sandbox shows read-only (bwrap binds it so; Landlock grants only reads), and
// fails. Files named trim.txt are copied instead: Go rewrites its own after trimming, and
// fails if it cannot. Making the layer costs a directory per cached directory and a
// symlink per cached file, not their size: BenchmarkCacheLayer (4096 files) measured
// 1.1 ms per file on the shared 2-core VM at load 34. A cache program (GOCACHEPROG) or
// an overlay (bwrap 0.10's --overlay) would cost nothing per file; neither is here yet.
//
// Each workspace has its own: the agent's, and the verification's, which opens the
// workspace anew, so an assertion never reads what the agent left in its layer. Without a
// sandbox that shows the cache read-only (none, a task's container, which does not see
// the cache) there is no layer: unconfined, the agent could write the cache directly
// anyway, and the layer would cost its making for nothing.
func (w *Workspace) CacheHome() (string, error) {
	if w.CacheDir == "" {
		return "", nil
	}
	if w.CacheWritable || !protectsCache(w.Sandbox) {
		return w.CacheDir, nil
	}
	owner := w
	if w.parent != nil {
		owner = w.parent
	}
	owner.mu.Lock()
	if owner.cache == nil {
		owner.cache = &cacheLayer{}
	}
	l := owner.cache
	owner.mu.Unlock()
	l.once.Do(func() {
		l.dir, l.err = newCacheLayer(w.CacheDir, w.CacheSkip)
		if l.err == nil {
			owner.OnClose(func() { _ = os.RemoveAll(l.dir) })
		}
	})
	return l.dir, l.err
}

// protectsCache reports whether commands wrapped by w see the shared cache read-only, so
// that a layer over it means something (the bwrap and Landlock sandboxes say so).
func protectsCache(w CommandWrapper) bool {
	p, ok := w.(interface{ ProtectsCache() bool })
	return ok && p.ProtectsCache()
}

// newCacheLayer makes a private layer over the cache dir (see CacheHome) in the system's
// temp directory, without the top-level entries named in skip.
func newCacheLayer(cache string, skip []string) (string, error) {
	dir, err := os.MkdirTemp("", "runner-cache-layer-")
	if err != nil {
		return "", fmt.Errorf("cache layer: %w", err)
	}
	err = filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable, or removed meanwhile (a setup trimming): not in the layer
		}
		rel, _ := filepath.Rel(cache, p)
		dst := filepath.Join(dir, rel)
		switch {
		case rel == ".":
			return nil
		case filepath.Dir(rel) == "." && slices.Contains(skip, rel):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				return os.Symlink(target, dst)
			}
			return nil
		case !d.Type().IsRegular():
			return nil
		case d.Name() == "trim.txt":
			return copyFile(p, dst)
		}
		return os.Symlink(p, dst)
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("cache layer over %s: %w", cache, err)
	}
	return dir, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return nil // gone meanwhile
	}
	defer func() { _ = in.Close() }() // read only: Close loses no data
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
