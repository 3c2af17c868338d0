// Package files holds the agent's file tools: reading, writing, creating, editing,
// deleting, moving and listing files inside the workspace. Every path goes through the
// workspace resolver and every operation through the workspace's os.Root, so a path or a
// symlink that leads outside the workspace is refused by the kernel, not just by string
// checks.
package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentrunner/runner/tools"
)

// Tools returns the file tools in the order they are offered to a model.
func Tools() []tools.Tool {
	return []tools.Tool{
		ReadFile{},
		WriteFile{},
		CreateFile{},
		ReplaceString{},
		DeleteFile{},
		MoveFile{},
		CreateDirectory{},
		ListDir{},
	}
}

// MaxReadBytes caps how much of a file read_file returns, and how large a file
// replace_string_in_file will edit: beyond it a model's context is the limit, not the disk.
const MaxReadBytes = 10 << 20

// defaultFileMode is the mode of files the tools create; overwrites keep the old mode.
const defaultFileMode fs.FileMode = 0o644

// maxLinkHops bounds symlink chains the same way the kernel does (ELOOP after 40).
const maxLinkHops = 40

// pathProp is the schema of a path parameter, shared so that every tool words it alike.
func pathProp(what string) *tools.Schema {
	return tools.String(what + " Relative to the workspace root (e.g. \"src/main.go\"); an absolute path must lie inside the workspace.")
}

// resolveArg resolves the path argument key. follow selects Resolve (the final symlink is
// followed and must stay inside) over ResolveNoFollow (the link itself is the subject).
func resolveArg(ws *tools.Workspace, args tools.Args, key string, follow bool) (string, *tools.Error) {
	p := args.String(key)
	if follow {
		return ws.Resolve(p)
	}
	return ws.ResolveNoFollow(p)
}

// writeTarget returns where a write to rel must land: when rel is a symlink (or a chain of
// them) inside the workspace, its final target, so that writing through a link updates the
// file it points at instead of replacing the link with a regular file.
func writeTarget(ws *tools.Workspace, rel string) (string, *tools.Error) {
	cur := rel
	for range maxLinkHops {
		fi, err := ws.Root().Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return cur, nil
		}
		if err != nil {
			return "", tools.FileError(err, rel)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return cur, nil
		}
		target, err := ws.Root().Readlink(cur)
		if err != nil {
			return "", tools.FileError(err, rel)
		}
		if !filepath.IsAbs(target) {
			// A relative target is relative to the link's real directory, which differs from
			// the lexical one when a parent is itself a link.
			dir := ws.Abs(path.Dir(cur))
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			target = filepath.Join(dir, target)
		}
		next, terr := ws.Resolve(target)
		if terr != nil {
			return "", tools.Errorf(tools.CodeInvalidPath, "Use a path whose symlinks stay inside the workspace.",
				"Path '%s' is a symlink that leads outside the workspace", rel)
		}
		cur = next
	}
	return "", tools.Errorf(tools.CodeInvalidPath, "", "'%s': too many levels of symbolic links", rel)
}

// writeAtomic replaces rel with data: the bytes go to a temporary file in the same
// directory, are synced, and the file is renamed over rel, so a crash leaves either the
// old file or the new one, never half of either. rel must not be a symlink (see writeTarget).
func writeAtomic(root *os.Root, rel string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(root, rel, data, perm)
	if err != nil {
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

// createAtomic is writeAtomic for a path that must not exist yet: the temporary file is
// hard-linked into place, which fails if anything (even a dangling link) holds the name.
// It returns an error matching fs.ErrExist in that case.
func createAtomic(root *os.Root, rel string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(root, rel, data, perm)
	if err != nil {
		return err
	}
	defer func() { _ = root.Remove(tmp) }()
	lerr := root.Link(tmp, rel)
	if lerr == nil || errors.Is(lerr, fs.ErrExist) {
		return lerr
	}
	// Some file systems have no hard links; fall back to check-then-rename.
	if _, err := root.Lstat(rel); err == nil {
		return &fs.PathError{Op: "create", Path: rel, Err: fs.ErrExist}
	}
	if err := root.Rename(tmp, rel); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

// writeTemp writes data to a new hidden file next to rel and returns its name.
func writeTemp(root *os.Root, rel string, data []byte, perm fs.FileMode) (string, error) {
	base := path.Base(rel)
	if len(base) > 100 {
		base = base[:100] // keep the temporary name under NAME_MAX
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(rel), "."+base+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(perm) // explicit, so the umask does not change a preserved mode
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("write temporary file: %w", werr)
	}
	return tmp, nil
}

// ensureParent creates rel's parent directories when create is set, and otherwise reports
// a missing parent in words a model can act on.
func ensureParent(root *os.Root, rel string, create bool) *tools.Error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	if create {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return parentError(err, dir)
		}
		return nil
	}
	fi, err := root.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return tools.Errorf(tools.CodeFileNotFound, "Create it with create_directory, or pass create_directories: true.",
				"Directory '%s' does not exist", dir)
		}
		return parentError(err, dir)
	}
	if !fi.IsDir() {
		return tools.Errorf(tools.CodeNotADirectory, "Choose a path whose parent is a directory.", "'%s' is not a directory", dir)
	}
	return nil
}

func parentError(err error, dir string) *tools.Error {
	if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
		return tools.Errorf(tools.CodeNotADirectory, "Choose a path whose parent directories are not files.",
			"Cannot create directory '%s': a file is in the way", dir)
	}
	return tools.FileError(err, dir)
}

// modTime formats a modification time the way every tool reports it.
func modTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// plural returns "1 line" or "3 lines", "1 entry" or "3 entries".
func plural(n int, word string) string {
	switch {
	case n == 1:
		return fmt.Sprintf("%d %s", n, word)
	case strings.HasSuffix(word, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}
