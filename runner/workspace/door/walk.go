package door

import (
	"context"
	"errors"
	"io/fs"
	"sort"
)

// Limits bound a walk: an agent can make a tree as large and as deep as it likes, and a
// walk holds a directory handle per level.
type Limits struct {
	// MaxEntries is how many entries a walk visits before it stops with a TooManyFiles
	// error (0: DefaultLimits'; negative: no limit).
	MaxEntries int
	// MaxDepth is the deepest level a walk enters (0: DefaultLimits'); a directory at it
	// is visited a second time with a TooDeep error in Entry.Err instead.
	MaxDepth int
}

// DefaultLimits: a million entries (a large monorepo with its dependencies; a walk of
// them takes seconds), 256 levels (real trees stay well under 100; 4096-byte paths of
// one-letter names reach 2048).
var DefaultLimits = Limits{MaxEntries: 1_000_000, MaxDepth: 256}

// Entry is one path a walk found.
type Entry struct {
	// Path is slash-separated, relative to the walked directory.
	Path string
	// Info is the entry's lstat: a link is a link.
	Info fs.FileInfo
	// Dir is the directory holding the entry, open while the walk's function runs.
	Dir *Dir
	// Depth is 1 for the walked directory's own entries.
	Depth int
	// Err is set when a directory is visited a second time because it could not be
	// entered: its listing failed (an *Error of kind Permission), or it lies deeper than
	// the walk goes (TooDeep).
	Err error
}

// Name is the entry's last component.
func (e Entry) Name() string { return e.Info.Name() }

// Open opens the entry, which must be a regular file (as Dir.Open, without a lookup).
func (e Entry) Open() (*File, error) { return e.Dir.openEntry(e.Info.Name(), e.Info) }

// Readlink is the target of the entry, a link.
func (e Entry) Readlink() (string, error) {
	target, err := e.Dir.root.Readlink(e.Info.Name())
	if err != nil {
		return "", classify(e.Dir.name(e.Info.Name()), err)
	}
	return target, nil
}

// Chmod sets the entry's mode bits (a link is followed inside Dir only).
func (e Entry) Chmod(mode fs.FileMode) error { return e.Dir.root.Chmod(e.Info.Name(), mode) }

// Walk visits every entry below d, depth first, each directory's entries in name order,
// through a handle per directory: no path is ever resolved whole, so its length never
// matters, and no link is followed. fn sees each entry before a directory is entered;
// fs.SkipDir leaves a directory out, fs.SkipAll ends the walk without error, any other
// error ends it with that error. ctx is checked as it goes.
func (d *Dir) Walk(ctx context.Context, lim Limits, fn func(Entry) error) error {
	if lim.MaxEntries == 0 {
		lim.MaxEntries = DefaultLimits.MaxEntries
	}
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = DefaultLimits.MaxDepth
	}
	w := &walker{ctx: ctx, lim: lim, fn: fn, top: d}
	err := w.dir(d, "", 1)
	var s stopped
	if errors.As(err, &s) {
		err = s.err
	}
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

type walker struct {
	ctx context.Context
	lim Limits
	fn  func(Entry) error
	top *Dir
	n   int
}

// stopped carries an error the walk's function returned up the walk untouched.
type stopped struct{ err error }

func (s stopped) Error() string { return s.err.Error() }

// dir visits the entries of d, whose path below the walk's top is rel ("" for the top).
func (w *walker) dir(d *Dir, rel string, depth int) error {
	names, err := d.names()
	if err != nil {
		return err
	}
	for _, name := range names {
		if w.n++; w.n%256 == 1 { // the first entry too: a cancelled walk does no work
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		if w.lim.MaxEntries > 0 && w.n > w.lim.MaxEntries {
			return &Error{Path: w.top.name("."), Kind: TooManyFiles, Limit: int64(w.lim.MaxEntries)}
		}
		info, err := d.root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the listing
		} else if err != nil {
			return classify(d.name(name), err)
		}
		e := Entry{Path: joinRel(rel, name), Info: info, Dir: d, Depth: depth}
		if err := w.fn(e); errors.Is(err, fs.SkipDir) {
			continue
		} else if err != nil {
			return stopped{err}
		}
		if info.IsDir() {
			if err := w.enter(d, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// enter walks the directory entry e of d. When it cannot (its handle or listing is
// refused, it lies too deep), e is visited again with the reason in e.Err; any other
// error ends the walk.
func (w *walker) enter(d *Dir, e Entry) error {
	var err error
	if e.Depth >= w.lim.MaxDepth {
		err = &Error{Path: d.name(e.Name()), Kind: TooDeep, Limit: int64(w.lim.MaxDepth)}
	} else {
		var sub *Dir
		if sub, err = d.subdir(e.Name()); err == nil {
			err = w.dir(sub, e.Path, e.Depth+1)
			_ = sub.Close() // a directory handle: Close loses no data
		}
		var de *Error
		if err == nil || !errors.As(err, &de) || de.Kind != Permission {
			return err
		}
	}
	e.Err = err
	if err := w.fn(e); err != nil && !errors.Is(err, fs.SkipDir) {
		return stopped{err}
	}
	return nil
}

// names lists d's entries, sorted.
func (d *Dir) names() ([]string, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, classify(d.name("."), err)
	}
	names, err := f.Readdirnames(-1)
	_ = f.Close() // a directory handle: Close loses no data
	if err != nil {
		return nil, classify(d.name("."), err)
	}
	sort.Strings(names)
	return names, nil
}

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}
