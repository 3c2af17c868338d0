package search

import (
	"cmp"
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentrunner/runner/tools"
)

// The walker lists a directory tree in a fixed order (byte order of the full paths) while
// reading directories in parallel: each directory is read by its own goroutine, scheduled
// a few siblings ahead of the one goroutine that emits files in order. Consumers therefore
// see a deterministic stream and can stop early without losing determinism.

// readAhead is how many sibling directories are read ahead of the emitter. It bounds both
// the parallelism of the walk and the number of open directory handles (about readAhead
// per level of the current path).
const readAhead = 16

// skipDirs are version-control directories that are never searched.
var skipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

// fileRef is one file the walk emits.
type fileRef struct {
	dir  *dirNode // the directory holding the file (its handle opens the file)
	name string
	// link marks a symlink to a regular file inside the workspace: it is read through the
	// workspace's os.Root, which follows links but never out of the workspace.
	link bool
}

// rel returns the file's workspace-relative path. It is built on demand: a search that
// finds nothing in a file never needs it.
func (f fileRef) rel() string { return joinRel(f.dir.rel, f.name) }

// joinRel returns the workspace-relative path of name in directory dir.
func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// dirEntry is one entry of a directory listing.
type dirEntry struct {
	name string
	typ  fs.FileMode // type bits only: 0 for a regular file
}

type dirNode struct {
	rel    string
	name   string
	depth  int
	parent *dirNode
	ign    *ignoreStack // rules for this directory's entries (its own .gitignore included)

	ready chan struct{} // closed once h, items and err are set
	h     *dirHandle
	items []dirItem
	err   error

	refs   atomic.Int32 // the walk's own reference plus one per user of h
	closed sync.Once
}

type dirItem struct {
	name string
	dir  *dirNode // nil for files
	link bool
}

// compareItems sorts siblings as their full paths sort: a directory's name as if "/"
// followed it, so that "a.go" comes before everything in "a/" ('.' < '/').
func compareItems(a, b dirItem) int {
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	return cmp.Compare(a.keyByte(n), b.keyByte(n))
}

// keyByte returns byte i of the item's sort key (its name, then "/" for a directory), or
// -1 past the end.
func (it dirItem) keyByte(i int) int {
	switch {
	case i < len(it.name):
		return int(it.name[i])
	case i == len(it.name) && it.dir != nil:
		return '/'
	}
	return -1
}

func (n *dirNode) acquire() { n.refs.Add(1) }

// release drops a reference and closes the handle with the last one.
func (n *dirNode) release() {
	if n.refs.Add(-1) == 0 {
		n.closeHandle()
	}
}

func (n *dirNode) closeHandle() {
	n.closed.Do(func() {
		if n.h != nil {
			_ = n.h.close()
		}
	})
}

// walker is one walk over a workspace subtree.
type walker struct {
	ws       *tools.Workspace
	maxDepth int
	// depthCut is set when a directory was skipped for lying deeper than maxDepth;
	// cutReported says whether that is news (the pattern itself limits the depth
	// when it is not: deeper files could not match anyway).
	depthCut    atomic.Bool
	cutReported bool
	// keep filters files by workspace-relative path and name; nil keeps all.
	keep func(rel, name string) bool
	// fileRefs makes every emitted file hold its directory's handle open until the
	// consumer calls done (grep reads the file later, on another goroutine).
	fileRefs bool
	// beforeWait, when set, is called before the walk waits for a directory listing
	// (grep hands the files it has gathered to its workers).
	beforeWait func()

	stopped atomic.Bool
	readers sync.WaitGroup
	mu      sync.Mutex
	opened  []*dirNode
	// unreadable counts directories that could not be listed (permissions, races).
	unreadable atomic.Int32
}

// stop makes the walk end as soon as possible.
func (w *walker) stop() { w.stopped.Store(true) }

// done is called by a consumer when it no longer needs f's directory handle.
func (w *walker) done(f fileRef) {
	if w.fileRefs && !f.link {
		f.dir.release()
	}
}

// finish waits for directory readers and closes every handle still open. Call it once the
// walk has returned and consumers are done with their files.
func (w *walker) finish() {
	w.stop()
	w.readers.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.opened {
		n.closeHandle()
	}
	w.opened = nil
}

// walk emits the files below the directory start (workspace-relative) in path order until
// emit returns false, the walker is stopped or ctx ends. ign holds the .gitignore rules of
// start's ancestors. The error is start's own failure to open; deeper failures are
// counted in unreadable and skipped.
func (w *walker) walk(ctx context.Context, start string, ign *ignoreStack, emit func(fileRef) bool) error {
	root := &dirNode{rel: start, name: path.Base(start), ign: ign, ready: make(chan struct{})}
	root.refs.Store(1)
	w.schedule(root)
	<-root.ready
	if root.err != nil {
		root.release()
		return root.err
	}
	w.visit(ctx, root, emit)
	return ctx.Err()
}

// schedule starts reading n on its own goroutine.
func (w *walker) schedule(n *dirNode) {
	if n.parent != nil {
		n.parent.acquire() // the reader opens n through its parent's handle
	}
	w.readers.Add(1)
	go func() {
		defer w.readers.Done()
		defer close(n.ready)
		w.read(n)
	}()
}

var errStopped = errors.New("walk stopped")

// read opens and lists directory n, applying its .gitignore, and sorts what remains.
func (w *walker) read(n *dirNode) {
	if w.stopped.Load() {
		n.err = errStopped
		if n.parent != nil {
			n.parent.release()
		}
		return
	}
	if n.parent == nil {
		n.h, n.err = openStartDir(w.ws.Root(), n.rel)
	} else {
		n.h, n.err = n.parent.h.openDir(n.name)
		n.parent.release()
	}
	if n.err != nil {
		return
	}
	w.mu.Lock()
	w.opened = append(w.opened, n)
	w.mu.Unlock()

	entries, err := n.h.readDir()
	if err != nil {
		n.err = err
		return
	}
	for _, e := range entries {
		if e.name == ".gitignore" && e.typ.IsRegular() {
			if data, err := n.h.readFile(".gitignore", readOpts{limit: maxIgnoreBytes}); err == nil {
				n.ign = n.ign.push(parseIgnore(n.rel, data))
			}
			break
		}
	}
	items := make([]dirItem, 0, len(entries))
	for _, e := range entries {
		name := e.name
		switch {
		case e.typ.IsDir():
			if skipDirs[name] {
				continue
			}
			rel := joinRel(n.rel, name)
			if n.ign.ignored(rel, true) {
				continue
			}
			if n.depth >= w.maxDepth {
				if w.cutReported {
					w.depthCut.Store(true)
				}
				continue
			}
			child := &dirNode{rel: rel, name: name, depth: n.depth + 1, parent: n, ign: n.ign, ready: make(chan struct{})}
			child.refs.Store(1)
			items = append(items, dirItem{name: name, dir: child})
		case e.typ.IsRegular(), e.typ&fs.ModeSymlink != 0:
			// The path is only built when something needs it.
			if n.ign != nil || w.keep != nil {
				rel := joinRel(n.rel, name)
				if n.ign.ignored(rel, false) || (w.keep != nil && !w.keep(rel, name)) {
					continue
				}
			}
			link := e.typ&fs.ModeSymlink != 0
			if link {
				// Follow the link only to a regular file inside the workspace; linked
				// directories are never entered, so a walk cannot leave the workspace or loop.
				fi, err := w.ws.Root().Stat(joinRel(n.rel, name))
				if err != nil || !fi.Mode().IsRegular() {
					continue
				}
			}
			items = append(items, dirItem{name: name, link: link})
		}
	}
	slices.SortFunc(items, compareItems)
	n.items = items
}

// visit emits n's files and descends into its subdirectories in order. It returns false
// when the walk must end.
func (w *walker) visit(ctx context.Context, n *dirNode, emit func(fileRef) bool) bool {
	select {
	case <-n.ready:
	default:
		if w.beforeWait != nil {
			w.beforeWait()
		}
		select {
		case <-n.ready:
		case <-ctx.Done():
			w.stop()
			// n's reader may still be setting n.h: the handle is left to finish, which
			// waits for every reader before it closes what they opened.
			return false
		}
	}
	defer n.release()
	if n.err != nil {
		if !errors.Is(n.err, errStopped) {
			w.unreadable.Add(1)
		}
		return !w.stopped.Load()
	}
	// Read the first readAhead subdirectories now, and one more as each is visited.
	next := 0
	scheduleNext := func() {
		for ; next < len(n.items); next++ {
			if d := n.items[next].dir; d != nil {
				w.schedule(d)
				next++
				return
			}
		}
	}
	for range readAhead {
		scheduleNext()
	}
	for _, it := range n.items {
		if w.stopped.Load() {
			return false
		}
		if it.dir != nil {
			if !w.visit(ctx, it.dir, emit) {
				return false
			}
			scheduleNext()
			continue
		}
		f := fileRef{dir: n, name: it.name, link: it.link}
		if w.fileRefs && !f.link {
			n.acquire()
		}
		if !emit(f) {
			w.done(f)
			w.stop()
			return false
		}
	}
	return true
}

// maxIgnoreBytes caps the size of a .gitignore file that is read.
const maxIgnoreBytes = 1 << 20

// errTooLarge reports a file above the size limit; errBinary a file that is not text.
var (
	errTooLarge = errors.New("file too large")
	errBinary   = errors.New("binary file")
)

// readOpts say how a file is read.
type readOpts struct {
	limit int // fail with errTooLarge beyond this many bytes
	// textOnly (for scan) stops with errBinary as soon as the first binaryProbe bytes
	// hold a NUL, so that large binaries are not read in full only to be skipped.
	textOnly bool
	// shortEOF takes a short read as the end of the file, saving the read that would
	// return 0. That holds for regular files: only pipes, sockets and devices return less
	// than asked for before the end.
	shortEOF bool
}

// readFile reads the whole of the file name in h.
func (h *dirHandle) readFile(name string, o readOpts) ([]byte, error) {
	f, err := h.openFile(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	o.shortEOF = fileShortEOF
	return readAll(f, o)
}

// readAll reads r to its end, failing with errTooLarge beyond o.limit bytes.
func readAll(r io.Reader, o readOpts) ([]byte, error) {
	b := make([]byte, 0, 4<<10)
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, cap(b))
		}
		want := cap(b) - len(b)
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if len(b) > o.limit {
			return nil, errTooLarge
		}
		if errors.Is(err, io.EOF) || (err == nil && (n == 0 || (o.shortEOF && n < want))) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ancestorIgnores loads the .gitignore files that apply to start from the workspace root
// down to start's parent (start's own is read by the walk), plus .git/info/exclude.
func ancestorIgnores(ws *tools.Workspace, start string) *ignoreStack {
	var s *ignoreStack
	if data, err := ws.Root().ReadFile(".git/info/exclude"); err == nil && len(data) <= maxIgnoreBytes {
		s = s.push(parseIgnore(".", data))
	}
	dirs := []string{"."}
	if parent := path.Dir(start); parent != "." {
		acc := ""
		for _, elem := range strings.Split(parent, "/") {
			acc = path.Join(acc, elem)
			dirs = append(dirs, acc)
		}
	}
	if start == "." {
		dirs = nil // the walk reads the start directory's own .gitignore
	}
	for _, dir := range dirs {
		if data, err := ws.Root().ReadFile(path.Join(dir, ".gitignore")); err == nil && len(data) <= maxIgnoreBytes {
			s = s.push(parseIgnore(dir, data))
		}
	}
	return s
}
