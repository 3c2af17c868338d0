package workspace

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Clone copies an agent's final workspace src into the empty directory dst, for
// verification to work on without touching the original. Nothing in src can make the copy
// cost more disk than src does: a file linked several times is linked again (10,000 links
// to one file are one file), and the holes of a sparse file stay holes (a 1 TB
// `truncate -s` takes no space). Symlinks are copied as links, special files (FIFOs,
// sockets, devices) left out, modes and modification times kept (a make-based check then
// sees what the agent left). ctx ends the copy between files.
func Clone(ctx context.Context, src, dst string) error {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return fmt.Errorf("clone %s: %w", src, err)
	}
	defer func() { _ = root.Close() }() // a directory handle: nothing to flush
	linked := map[fileID]string{}       // the first path of each file linked more than once
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("clone %s: %w", src, err)
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return fmt.Errorf("clone %s: %w", path, err)
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("clone %s: %w", path, err)
		}
		switch {
		case d.IsDir():
			if rel != "." {
				err = makeDir(root, rel, info.Mode().Perm()|0o700)
			}
		case d.Type()&fs.ModeSymlink != 0:
			var link string
			if link, err = os.Readlink(path); err == nil {
				err = root.Symlink(link, rel)
			}
		case d.Type().IsRegular():
			if id, ok := idOf(info); ok {
				if first, seen := linked[id]; seen {
					err = root.Link(first, rel)
					break
				}
				linked[id] = rel
			}
			err = cloneFile(root, rel, path, info)
		}
		if err != nil {
			return fmt.Errorf("clone %s: %w", path, err)
		}
		return nil
	})
}

// cloneFile copies the regular file path to rel inside root, holes as holes.
func cloneFile(root *os.Root, rel, path string, info fs.FileInfo) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read only
	out, err := root.OpenFile(rel, os.O_CREATE|os.O_EXCL|os.O_WRONLY, info.Mode().Perm())
	if err != nil {
		return err
	}
	if err := copySparse(out, in, info.Size()); err != nil {
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
