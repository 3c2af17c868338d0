package workspace

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/agentrunner/runner/runner/workspace/door"
)

// maxEntries bounds how many unprotected entries a Manifest records, so a workspace the
// agent floods with files cannot make the comparison slow or huge. Protected entries
// are always recorded.
var maxEntries = 200_000 // a variable for tests

// entry is what a Manifest keeps of one path: enough to tell, without reading the file,
// that it was not touched. The inode change time (ctime) cannot be set back by an
// unprivileged process, unlike mtime (touch -d), so equal stat fields mean an unchanged
// file; protected files are hashed as well, before and after.
type entry struct {
	mode       fs.FileMode
	size       int64
	mtime      int64
	ctime      int64
	ino        uint64
	link       string // a symlink's target
	sum        []byte // SHA-256 of a protected regular file's content
	unreadable bool   // a directory whose listing failed (chmod 000)
}

// Manifest records a workspace's entries at one moment (after setup, before the agent),
// so Compare can tell afterwards what the agent created, changed or deleted.
type Manifest struct {
	protect   *Protect
	entries   map[string]entry
	protected []string // the protected paths among entries, sorted
	truncated bool
}

// ProtectedUnder reports a protected path of the snapshot strictly below the directory
// dir ("." for the whole workspace), and the glob that protects it: deleting or moving
// dir would take it along.
func (m *Manifest) ProtectedUnder(dir string) (string, string, bool) {
	if m == nil || m.protect == nil {
		return "", "", false
	}
	prefix := dir + "/"
	if dir == "." {
		prefix = ""
	}
	for _, p := range m.protected {
		if strings.HasPrefix(p, prefix) && p != dir {
			glob, _ := m.protect.Match(p)
			return p, glob, true
		}
	}
	return "", "", false
}

// Changes is what Compare found: slash-separated workspace paths, sorted, directories
// with a trailing slash. Protected holds those of them that the protect globs cover.
type Changes struct {
	Created, Changed, Deleted []string
	Protected                 []string
	// Outside are the paths an environment's container changed outside the workspace,
	// as "K /path" (K: A added, C changed, D deleted); absolute verify.protect globs
	// that cover one add it to Protected.
	Outside []string
	// Incomplete is set when the workspace held more than maxEntries entries: changes to
	// unprotected paths beyond them are not listed.
	Incomplete bool
}

// Total is the number of changed paths.
func (c Changes) Total() int { return len(c.Created) + len(c.Changed) + len(c.Deleted) }

// Snapshot records the workspace at dir. protect may be nil.
func Snapshot(ctx context.Context, dir string, protect *Protect) (*Manifest, error) {
	entries, truncated, err := scan(ctx, dir, protect)
	if err != nil {
		return nil, err
	}
	m := &Manifest{protect: protect, entries: entries, truncated: truncated}
	for p := range entries {
		if _, ok := protect.Match(p); ok {
			m.protected = append(m.protected, p)
		}
	}
	sort.Strings(m.protected)
	return m, nil
}

// Compare scans dir again and reports the differences from the snapshot.
func (m *Manifest) Compare(ctx context.Context, dir string) (Changes, error) {
	after, truncated, err := scan(ctx, dir, m.protect)
	if err != nil {
		return Changes{}, err
	}
	c := Changes{Incomplete: m.truncated || truncated}
	add := func(list *[]string, p string, e entry) {
		name := p
		if e.mode.IsDir() {
			name += "/"
		}
		*list = append(*list, name)
		if _, ok := m.protect.Match(p); ok {
			c.Protected = append(c.Protected, name)
		}
	}
	for p, a := range after {
		b, ok := m.entries[p]
		switch {
		case !ok && m.truncated:
			if _, prot := m.protect.Match(p); prot {
				add(&c.Created, p, a) // protected entries are always in the snapshot
			}
		case !ok:
			add(&c.Created, p, a)
		case b.mode.Type() != a.mode.Type():
			add(&c.Changed, p, a)
		case differs(b, a):
			add(&c.Changed, p, a)
		}
	}
	for p, b := range m.entries {
		if _, ok := after[p]; ok {
			continue
		}
		if _, prot := m.protect.Match(p); truncated && !prot {
			continue // maybe only left out of the second scan
		}
		add(&c.Deleted, p, b)
	}
	for _, l := range [][]string{c.Created, c.Changed, c.Deleted, c.Protected} {
		sort.Strings(l)
	}
	return c, nil
}

// differs compares two states of the same path and type.
func differs(b, a entry) bool {
	switch {
	case b.mode != a.mode, b.unreadable != a.unreadable:
		return true
	case b.mode.IsDir():
		return false // a directory's times change with its entries, which are compared
	case b.sum != nil || a.sum != nil:
		return string(b.sum) != string(a.sum) || b.size != a.size || b.link != a.link
	}
	return b.size != a.size || b.mtime != a.mtime || b.ctime != a.ctime || b.ino != a.ino || b.link != a.link
}

// WalkLimits bound every walk of a workspace (the snapshot, the comparison, the copy
// for fresh_container): past them the walk stops with a *door.Error, the agent's doing
// after it ran. A variable for tests.
var WalkLimits = door.DefaultLimits

// scan walks the workspace through the door (a handle per directory, no link followed)
// without opening anything but directories and protected regular files (non-blocking,
// so a FIFO cannot hold it up). It checks ctx as it goes.
func scan(ctx context.Context, dir string, protect *Protect) (map[string]entry, bool, error) {
	d, err := door.Open(dir)
	if err != nil {
		return nil, false, fmt.Errorf("scan workspace: %w", err)
	}
	defer func() { _ = d.Close() }() // a directory handle: Close loses no data
	entries := map[string]entry{}
	truncated := false
	err = d.Walk(ctx, WalkLimits, func(e door.Entry) error {
		if e.Err != nil {
			var de *door.Error
			if errors.As(e.Err, &de) && de.Kind == door.TooDeep {
				return e.Err
			}
			// A directory whose listing failed: remember it, so that an agent cannot hide
			// a change behind chmod 000.
			if en, ok := entries[e.Path]; ok {
				en.unreadable = true
				entries[e.Path] = en
			}
			return nil
		}
		_, prot := protect.Match(e.Path)
		if !prot && len(entries) >= maxEntries {
			truncated = true
			return nil
		}
		info := e.Info
		en := entry{mode: info.Mode(), size: info.Size(), mtime: info.ModTime().UnixNano()}
		en.ino, en.ctime = statIDs(info)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			en.link, _ = e.Readlink()
		case info.Mode().IsRegular() && prot:
			var err error
			if en.sum, err = hashFile(e); err != nil {
				en.sum = []byte("unreadable: " + err.Error()) // differs from any hash
			}
		}
		entries[e.Path] = en
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("scan workspace: %w", err)
	}
	return entries, truncated, nil
}

// hashFile hashes a regular file opened through the door; anything else is an error.
func hashFile(e door.Entry) ([]byte, error) {
	f, err := e.Open()
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
