package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentrunner/runner/tools"
)

// tempPool keeps a workspace's private temp directories (see landlockSandbox.Wrap) between
// its commands, emptied: making and removing a directory and its home cost milliseconds on
// a slow disk (4 ms per command on the 2-core VM's ext4), where emptying one that a
// command left empty costs two reads. A directory goes back only once nothing of its
// command can still write there (its cgroups were swept) and it was emptied; then the next
// command finds it as new. Commands running at once in a workspace get one each.
type tempPool struct {
	mu     sync.Mutex
	idle   []string
	closed bool
}

// tempKey finds a launcher's temp pool among a workspace's values.
type tempKey struct{ l *launcher }

// privateTemp returns a private temp directory for a command in ws, an emptied one of the
// workspace's or a new one, and the pool it goes back to.
func (l *launcher) privateTemp(ws *tools.Workspace) (string, *tempPool, error) {
	l.poolMu.Lock()
	p, ok := ws.Value(tempKey{l}).(*tempPool)
	if !ok {
		p = &tempPool{}
		ws.SetValue(tempKey{l}, p)
		ws.OnClose(p.close)
	}
	l.poolMu.Unlock()
	if dir := p.take(); dir != "" {
		return dir, p, nil
	}
	dir, err := os.MkdirTemp("", "runner-sandbox-")
	return dir, p, err
}

// take returns an idle directory that is still the private directory it was (not replaced
// by a symlink, say), removing those that are not, or "".
func (p *tempPool) take() string {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return ""
		}
		dir := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() && fi.Mode().Perm() == 0o700 {
			return dir
		}
		_ = os.RemoveAll(dir)
	}
}

// release ends a command's use of dir: emptied and kept for the next command if reuse
// (nothing of the command is left to write there) and the pool has room, else removed.
func (p *tempPool) release(dir string, reuse bool) {
	if p != nil && reuse && emptyTemp(dir) == nil {
		p.mu.Lock()
		keep := !p.closed && len(p.idle) < maxIdlePerWorkspace
		if keep {
			p.idle = append(p.idle, dir)
		}
		p.mu.Unlock()
		if keep {
			return
		}
	}
	_ = os.RemoveAll(dir)
}

// close removes the idle directories; those in use are removed on release.
func (p *tempPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, dir := range idle {
		_ = os.RemoveAll(dir)
	}
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
