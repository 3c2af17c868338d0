package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentrunner/runner/tools"
)

// A workspace keeps its Landlock commands' private temp directories (see
// landlockSandbox.Wrap) between them, emptied (see idlePool): making and removing a
// directory and its home cost milliseconds on a slow disk (4 ms per command on the 2-core
// VM's ext4), where emptying one that a command left empty costs two reads. A directory
// goes back only once nothing of its command can still write there (its cgroups were
// swept) and it was emptied; then the next command finds it as new. Commands running at
// once in a workspace get one each.

// tempKey finds a launcher's temp directory pool among a workspace's values.
type tempKey struct{ l *launcher }

// privateTemp returns a private temp directory for a command in ws, an emptied one of the
// workspace's that is still as it was made (not replaced, its mode 0700) or a new one,
// and the pool it goes back to.
func (l *launcher) privateTemp(ws *tools.Workspace) (string, *idlePool[string], error) {
	p := workspacePool(l, ws, tempKey{l}, func(dir string) { _ = os.RemoveAll(dir) })
	dir, ok := p.take(func(dir string) bool {
		fi, err := os.Lstat(dir)
		return err == nil && fi.IsDir() && fi.Mode().Perm() == 0o700
	})
	if ok {
		return dir, p, nil
	}
	dir, err := os.MkdirTemp("", "runner-sandbox-")
	return dir, p, err
}

// releaseTemp ends a command's use of dir: emptied and kept in p for the next command if
// reuse (nothing of the command is left to write there), else removed.
func releaseTemp(p *idlePool[string], dir string, reuse bool) {
	if p != nil && reuse && emptyTemp(dir) == nil {
		p.put(dir)
		return
	}
	_ = os.RemoveAll(dir)
}

// emptyTemp removes everything in a private temp directory but its home directory, which
// it empties, and gives both back the mode 0700 if the command changed it (it may: chmod
// is one of Landlock's gaps). A home that is no longer a directory is removed.
func emptyTemp(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Name() == "home" && e.IsDir() {
			err = emptyDir(p)
		} else {
			err = os.RemoveAll(p)
		}
		if err != nil {
			return err
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "home")} {
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm() != 0o700 {
			if err := os.Chmod(d, 0o700); err != nil {
				return err
			}
		}
	}
	return nil
}

// emptyDir removes everything in dir.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
