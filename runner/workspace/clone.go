package workspace

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentrunner/runner/runner/workspace/door"
)

// Clone copies an agent's final workspace src into the empty directory dst, for
// verification to work on without touching the original. Nothing in src can make the copy
// cost more disk than src does: a file linked several times is linked again (10,000 links
// to one file are one file), and the holes of a sparse file stay holes (a 1 TB
// `truncate -s` takes no space). Symlinks are copied as links, special files (FIFOs,
// sockets, devices) left out, modes and modification times kept (a make-based check then
// sees what the agent left). ctx ends the copy between files.
func Clone(ctx context.Context, src, dst string) error {
	from, err := door.Open(src)
	if err != nil {
		return fmt.Errorf("clone %s: %w", src, err)
	}
	defer func() { _ = from.Close() }() // a directory handle: nothing to flush
	root, err := os.OpenRoot(dst)
	if err != nil {
		return fmt.Errorf("clone %s: %w", src, err)
	}
	defer func() { _ = root.Close() }() // a directory handle: nothing to flush
	linked := map[fileID]string{}       // the first path of each file linked more than once
	// The source is walked by handles (its paths may be longer than any system call
	// takes); the copy is written through an os.Root, which takes them a name at a time.
	return from.Walk(ctx, WalkLimits, func(e door.Entry) error {
		if e.Err != nil {
			return fmt.Errorf("clone: %w", e.Err)
		}
		rel, info := filepath.FromSlash(e.Path), e.Info
		var err error
		switch {
		case info.IsDir():
			err = root.Mkdir(rel, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			var link string
			if link, err = e.Readlink(); err == nil {
				err = root.Symlink(link, rel)
			}
		case info.Mode().IsRegular():
			if id, ok := idOf(info); ok {
				if first, seen := linked[id]; seen {
					err = root.Link(first, rel)
					break
				}
				linked[id] = rel
			}
			err = cloneFile(root, rel, e)
		}
		if err != nil {
			return fmt.Errorf("clone: %w", err)
		}
		return nil
	})
}

// cloneFile copies the regular file e to rel inside root, holes as holes.
func cloneFile(root *os.Root, rel string, e door.Entry) error {
	in, err := e.Open()
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read only
	info := in.Info()
	out, err := door.Create(root, rel, info.Mode().Perm())
	if err != nil {
		return err
	}
	if err := copySparse(out, in.File, info.Size()); err != nil {
		_ = out.Close() // the copy already failed; that error is the one to report
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return root.Chtimes(rel, info.ModTime(), info.ModTime())
}

// copyAll is copySparse where holes cannot be found: every byte is copied.
func copyAll(out, in *os.File, size int64) error {
	_, err := io.CopyN(out, in, size)
	if err == io.EOF {
		err = nil // the file shrank: nothing runs in the agent's container any more, but be lenient
	}
	return err
}
