// Package door is the one way runner reads files from a place an agent controls: a
// workspace, a check's $RESULTS_DIR, the copy fresh_container verification runs on, and an
// output directory merge, resume and the viewer read back. Everything it opens is opened
// relative to a directory handle (an os.Root per directory), one name at a time, so a
// path's length never matters and no link leads out; a file is first looked at (lstat),
// then opened non-blocking and without following a link, and read only if the open
// descriptor is a regular file (fstat), up to a cap. Anything else is an *Error whose Kind
// says what was found: a FIFO never blocks a read, a device is never opened, a file that
// grows while read or a tree too deep or too large stops the read and says so.
//
// Such an error is what the directory's content made of the read, never runner's fault:
// after an agent, the scenario fails ("the agent broke the workspace: ..."), never errors.
// `make lint` (forbidigo, .golangci.yml) rejects every other way of opening a file in the
// packages that read agent data.
package door

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// Kind is what a read found instead of a readable regular file.
type Kind int

// The kinds of content a read refuses.
const (
	FIFO Kind = iota + 1
	Socket
	Device
	// Symlink is a link where runner follows none (walks, result files), or one that
	// leads out of the directory.
	Symlink
	Directory
	// Irregular is any other type of file.
	Irregular
	// TooLarge is a file larger than the read's cap (Error.Limit).
	TooLarge
	// Grew is a file that grew between its fstat and the end of the read.
	Grew
	NameTooLong
	// SymlinkLoop is a path whose links do not end (followed reads only).
	SymlinkLoop
	Permission
	// TooManyFiles is a walk that met more entries than its cap (Error.Limit).
	TooManyFiles
	// TooDeep is a directory nested deeper than a walk goes (Error.Limit).
	TooDeep
)

// Broke is how a verdict names an *Error of the agent's workspace: what follows says
// what the agent left.
const Broke = "the agent broke the workspace: "

// Error is a read refused because of what the directory holds. Path is slash-separated,
// relative to the directory the door was opened on (after its label, when it has one).
type Error struct {
	Path string
	Kind Kind
	// Limit is the cap a TooLarge, TooManyFiles or TooDeep error ran into.
	Limit int64
	// Err is the system's error behind the refusal, when there is one.
	Err error
}

func (e *Error) Error() string {
	p := shortPath(e.Path)
	if p == "" || p == "." {
		p = "the directory"
	}
	switch e.Kind {
	case FIFO:
		return p + " is a FIFO (named pipe), not a regular file"
	case Socket:
		return p + " is a socket, not a regular file"
	case Device:
		return p + " is a device file, not a regular file"
	case Symlink:
		if e.Err != nil {
			return p + " is a symlink that leads out of the directory runner reads"
		}
		return p + " is a symlink, which runner does not follow here"
	case Directory:
		return p + " is a directory, not a regular file"
	case TooLarge:
		return fmt.Sprintf("%s is larger than %s", p, sizeText(e.Limit))
	case Grew:
		return p + " grew while runner read it (something is still writing it)"
	case NameTooLong:
		return p + ": a name in the path is too long"
	case SymlinkLoop:
		return p + ": too many levels of symbolic links (a symlink loop)"
	case Permission:
		return p + " cannot be read (permission denied)"
	case TooManyFiles:
		if p == "the directory" {
			p = "it"
		}
		return fmt.Sprintf("%s holds more than %d files and directories", p, e.Limit)
	case TooDeep:
		return fmt.Sprintf("%s: directories nested more than %d deep", p, e.Limit)
	}
	return p + " is a special file, not a regular file"
}

func (e *Error) Unwrap() error { return e.Err }

// Blame is err's message prefixed with Broke when err is an *Error (the agent's doing),
// and whether it was.
func Blame(err error) (string, bool) {
	var e *Error
	if errors.As(err, &e) {
		return Broke + e.Error(), true
	}
	return "", false
}

// KindOf is the Kind of a file of mode m that is not a regular file (0 for one that is).
func KindOf(m fs.FileMode) Kind {
	switch {
	case m.IsRegular():
		return 0
	case m.IsDir():
		return Directory
	case m&fs.ModeSymlink != 0:
		return Symlink
	case m&fs.ModeNamedPipe != 0:
		return FIFO
	case m&fs.ModeSocket != 0:
		return Socket
	case m&fs.ModeDevice != 0:
		return Device
	}
	return Irregular
}

// Dir is an open directory whose content runner reads. Its methods take slash-separated
// paths relative to it; "." and ".." are not walked through.
type Dir struct {
	root *os.Root
	// rel is this directory's path below the door's top directory, label included, for
	// messages ("" at the top).
	rel string
}

// Open opens the directory dir (runner's own path: links in it are followed).
func Open(dir string) (*Dir, error) { return OpenLabeled(dir, "") }

// OpenLabeled is Open whose errors name paths after label ("$RESULTS_DIR/report.xml").
func OpenLabeled(dir, label string) (*Dir, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		// The directory itself made unreadable is its content's doing; anything else
		// (not there) keeps the system's error, which names dir.
		var e *Error
		if cerr := classify(label, err); errors.As(cerr, &e) {
			return nil, cerr
		}
		return nil, err
	}
	return &Dir{root: root, rel: label}, nil
}

// Close closes the directory's handle.
func (d *Dir) Close() error { return d.root.Close() }

// name is the message path of name inside d.
func (d *Dir) name(name string) string {
	switch {
	case d.rel == "":
		return name
	case name == "." || name == "":
		return d.rel
	}
	return d.rel + "/" + name
}

// split checks name (slash-separated, relative, no "..") and returns its parts.
func split(name string) ([]string, error) {
	clean := path.Clean(name)
	if clean == "." {
		return nil, nil
	}
	if !fs.ValidPath(clean) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return strings.Split(clean, "/"), nil
}

// Sub opens the directory name below d without following a link on the way.
func (d *Dir) Sub(name string) (*Dir, error) {
	parts, err := split(name)
	if err != nil {
		return nil, err
	}
	cur := d
	for _, p := range parts {
		next, err := cur.subdir(p)
		if cur != d {
			_ = cur.Close() // a directory handle: Close loses no data
		}
		if err != nil {
			return nil, err
		}
		cur = next
	}
	if cur == d {
		root, err := d.root.OpenRoot(".")
		if err != nil {
			return nil, classify(d.name("."), err)
		}
		return &Dir{root: root, rel: d.rel}, nil
	}
	return cur, nil
}

// subdir opens the child directory name (one component), refusing anything else.
func (d *Dir) subdir(name string) (*Dir, error) {
	info, err := d.root.Lstat(name)
	if err != nil {
		return nil, classify(d.name(name), err)
	}
	if !info.IsDir() {
		if info.Mode().IsRegular() {
			return nil, &fs.PathError{Op: "open", Path: shortPath(d.name(name)), Err: syscall.ENOTDIR}
		}
		return nil, &Error{Path: d.name(name), Kind: KindOf(info.Mode())}
	}
	root, err := d.root.OpenRoot(name)
	if err != nil {
		return nil, classify(d.name(name), err)
	}
	return &Dir{root: root, rel: d.name(name)}, nil
}

// Lstat describes name without following a final link.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	parent, base, err := d.parent(name)
	if err != nil {
		return nil, err
	}
	if parent != d {
		defer func() { _ = parent.Close() }() // a directory handle: Close loses no data
	}
	info, err := parent.root.Lstat(base)
	if err != nil {
		return nil, classify(parent.name(base), err)
	}
	return info, nil
}

// Readlink is the target of the link name.
func (d *Dir) Readlink(name string) (string, error) {
	parent, base, err := d.parent(name)
	if err != nil {
		return "", err
	}
	if parent != d {
		defer func() { _ = parent.Close() }() // a directory handle: Close loses no data
	}
	target, err := parent.root.Readlink(base)
	if err != nil {
		return "", classify(parent.name(base), err)
	}
	return target, nil
}

// parent opens name's directory and returns it with name's last component. The caller
// closes the directory unless it is d.
func (d *Dir) parent(name string) (*Dir, string, error) {
	parts, err := split(name)
	if err != nil {
		return nil, "", err
	}
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: "open", Path: d.name("."), Err: fs.ErrInvalid}
	}
	if len(parts) == 1 {
		return d, parts[0], nil
	}
	dir, err := d.Sub(strings.Join(parts[:len(parts)-1], "/"))
	if err != nil {
		return nil, "", err
	}
	return dir, parts[len(parts)-1], nil
}

// File is an open regular file, with what fstat said of it when it was opened.
type File struct {
	*os.File
	info fs.FileInfo
	path string
}

// Info is the file's fstat at open.
func (f *File) Info() fs.FileInfo { return f.info }

// Open opens the regular file name, following no link anywhere on its path.
func (d *Dir) Open(name string) (*File, error) {
	parent, base, err := d.parent(name)
	if err != nil {
		return nil, err
	}
	if parent != d {
		defer func() { _ = parent.Close() }() // a directory handle: Close loses no data
	}
	info, err := parent.root.Lstat(base)
	if err != nil {
		return nil, classify(parent.name(base), err)
	}
	return parent.openEntry(base, info)
}

// OpenFollow opens the regular file name as a program in the directory would: links
// are followed while they stay inside d (at most a few: more is a SymlinkLoop), one
// that leads out is refused.
func (d *Dir) OpenFollow(name string) (*File, error) {
	if _, err := split(name); err != nil {
		return nil, err
	}
	info, err := d.root.Stat(name)
	if err != nil {
		return nil, classify(d.name(path.Clean(name)), err)
	}
	if k := KindOf(info.Mode()); k != 0 {
		return nil, &Error{Path: d.name(path.Clean(name)), Kind: k}
	}
	return d.open(name, info, true)
}

// openEntry opens the regular file name, a child of d, described by info (an lstat).
func (d *Dir) openEntry(name string, info fs.FileInfo) (*File, error) {
	if k := KindOf(info.Mode()); k != 0 {
		return nil, &Error{Path: d.name(name), Kind: k}
	}
	return d.open(name, info, false)
}

// open opens name, which info (a stat) says is a regular file, non-blocking, and checks
// with fstat that the descriptor is one and, without follow, the same file: anything
// swapped in since the stat (a FIFO, a link) is refused, never read.
func (d *Dir) open(name string, info fs.FileInfo, follow bool) (*File, error) {
	p := d.name(path.Clean(name))
	f, err := d.root.OpenFile(name, os.O_RDONLY|nonBlocking, 0)
	if err != nil {
		return nil, classify(p, err)
	}
	got, err := f.Stat()
	if err != nil {
		_ = f.Close() // read only: Close loses no data
		return nil, classify(p, err)
	}
	if k := KindOf(got.Mode()); k != 0 {
		_ = f.Close() // read only: Close loses no data
		return nil, &Error{Path: p, Kind: k}
	}
	if !follow && !os.SameFile(info, got) {
		_ = f.Close()                              // read only: Close loses no data
		return nil, &Error{Path: p, Kind: Symlink} // a link swapped in after the lstat
	}
	return &File{File: f, info: got, path: p}, nil
}

// Opener opens files by path below a Dir as Dir.Open does, keeping the directory of the
// last one open: files taken in path order (a snapshot's, a diff's) cost an lstat and an
// open each, not a handle per level of their path.
type Opener struct {
	d   *Dir
	dir string
	sub *Dir
}

// Opener returns an Opener of files below d; Close it when done.
func (d *Dir) Opener() *Opener { return &Opener{d: d} }

// Open is Dir.Open.
func (o *Opener) Open(name string) (*File, error) {
	parts, err := split(name)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, &Error{Path: o.d.name("."), Kind: Directory}
	}
	parent := o.d
	if dir := strings.Join(parts[:len(parts)-1], "/"); dir != "" {
		if dir != o.dir || o.sub == nil {
			o.Close()
			if o.sub, err = o.d.Sub(dir); err != nil {
				return nil, err
			}
			o.dir = dir
		}
		parent = o.sub
	}
	base := parts[len(parts)-1]
	info, err := parent.root.Lstat(base)
	if err != nil {
		return nil, classify(parent.name(base), err)
	}
	return parent.openEntry(base, info)
}

// Close closes the directory it keeps open.
func (o *Opener) Close() {
	if o.sub != nil {
		_ = o.sub.Close() // a directory handle: Close loses no data
	}
	o.sub, o.dir = nil, ""
}

// ReadFile reads the regular file name (no link followed), at most limit bytes: a larger
// file is a TooLarge error, one that grows while read a Grew error.
func (d *Dir) ReadFile(name string, limit int64) ([]byte, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	return f.ReadAll(limit)
}

// ReadAll reads the whole file, at most limit bytes (see Dir.ReadFile).
func (f *File) ReadAll(limit int64) ([]byte, error) {
	size := f.info.Size()
	if size > limit {
		return nil, &Error{Path: f.path, Kind: TooLarge, Limit: limit}
	}
	// Sized by the file (one read, one allocation), one byte more to see it grew.
	b := make([]byte, size+1)
	n, err := io.ReadFull(f.File, b)
	switch err {
	case nil:
		return nil, &Error{Path: f.path, Kind: Grew}
	case io.EOF, io.ErrUnexpectedEOF:
		return b[:n], nil
	}
	return nil, classify(f.path, err)
}

// ReadPrefix reads at most limit bytes of the file from its start; more reports that
// the file holds more.
func (f *File) ReadPrefix(limit int64) (data []byte, more bool, err error) {
	b := make([]byte, min(f.info.Size(), limit)+1)
	n, err := io.ReadFull(f.File, b)
	switch err {
	case nil:
		return b[:n-1], true, nil
	case io.EOF, io.ErrUnexpectedEOF:
		return b[:n], false, nil
	}
	return nil, false, classify(f.path, err)
}

// Create makes the new file name inside root, for writing. It never opens what is
// there (O_CREATE|O_EXCL, no link followed): a write cannot go through a link, a hard
// link or a FIFO the agent left (remove it first; runner/workspace does).
func Create(root *os.Root, name string, perm fs.FileMode) (*os.File, error) {
	return root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
}

// classify turns a system error on the path p into an *Error when it comes from what the
// directory holds; anything else (not there, I/O, out of descriptors) is returned as is,
// with p.
func classify(p string, err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return &fs.PathError{Op: "open", Path: shortPath(p), Err: fs.ErrNotExist}
	case errors.Is(err, syscall.ELOOP):
		return &Error{Path: p, Kind: SymlinkLoop, Err: err}
	case errors.Is(err, syscall.ENAMETOOLONG):
		return &Error{Path: p, Kind: NameTooLong, Err: err}
	case errors.Is(err, fs.ErrPermission):
		return &Error{Path: p, Kind: Permission, Err: err}
	case strings.Contains(err.Error(), "path escapes from parent"):
		// os.Root refusing a link out of the directory (its sentinel is unexported).
		return &Error{Path: p, Kind: Symlink, Err: err}
	}
	return fmt.Errorf("%s: %w", shortPath(p), err)
}

// shortPath keeps a message readable whatever the path's length: 20 nested names of 250
// characters are shown by their ends.
func shortPath(p string) string {
	const keep = 100
	if len(p) <= 2*keep+20 {
		return p
	}
	head, tail := p[:keep], p[len(p)-keep:]
	return strings.ToValidUTF8(head, "") + fmt.Sprintf("…(%d bytes)…", len(p)-2*keep) + strings.ToValidUTF8(tail, "")
}

// sizeText is a byte limit for a message: 256 KiB, 16 MiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
