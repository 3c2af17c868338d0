// Package workspace builds a scenario's workspace in a fresh temporary directory from the
// task's inline files, copied directory and setup commands, and adds the hidden verify
// files once the agent has finished.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/workspace/door"
)

// CommandFunc runs one shell command in dir with the task's extra environment and returns
// its combined output and exit code; err is for failures to run at all (timeouts too).
type CommandFunc func(ctx context.Context, dir, command string, env map[string]string) (output string, exitCode int, err error)

// SetupError is a failed setup command: a scenario error, not an agent failure.
type SetupError struct {
	Command  string
	ExitCode int
	Output   string
	Err      error
}

func (e *SetupError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("setup command %q: %v", e.Command, e.Err)
	}
	return fmt.Sprintf("setup command %q exited %d: %s", e.Command, e.ExitCode, lastLines(e.Output, 5))
}

func (e *SetupError) Unwrap() error { return e.Err }

// Step is the record of one setup command, for the transcript (it lives in runner/result,
// with the other records).
type Step = result.SetupStep

// Create makes a fresh temporary directory under parent ("" for the system temp dir) named
// after the scenario, never inside the repository.
func Create(parent, name string) (string, error) {
	dir, err := os.MkdirTemp(parent, "runner-"+sanitize(name)+"-")
	if err != nil {
		return "", fmt.Errorf("create workspace: %w", err)
	}
	return dir, nil
}

// Remove deletes a workspace. Directories the agent made unwritable or unreadable
// (chmod 000) are given their permissions back first, through the door, so that a run
// as an ordinary user leaves nothing behind in the temp directory.
func Remove(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = os.Chmod(dir, 0o700)
	if d, err := door.Open(dir); err == nil {
		// Each directory before it is entered: the walk then lists it.
		_ = d.Walk(context.Background(), door.Limits{MaxEntries: -1}, func(e door.Entry) error {
			if e.Info.IsDir() && e.Err == nil {
				_ = e.Chmod(0o700)
			}
			return nil
		})
		_ = d.Close() // a directory handle: Close loses no data
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove workspace: %w", err)
	}
	return nil
}

// Populate writes the task's inline files and copied directory into dir, then runs the
// setup commands in order. Each finished setup command is reported to onStep.
func Populate(ctx context.Context, t *task.Task, dir string, run CommandFunc, onStep func(Step)) error {
	if err := addFiles(t.Dir, t.Workspace.Copy, t.Workspace.Files, dir); err != nil {
		return err
	}
	for _, command := range t.Workspace.Setup {
		out, code, err := run(ctx, dir, command, t.Env)
		if onStep != nil {
			onStep(Step{Command: command, ExitCode: code, Output: out})
		}
		if err != nil || code != 0 {
			return &SetupError{Command: command, ExitCode: code, Output: out, Err: err}
		}
	}
	return nil
}

// AddVerify copies the task's verify files in after the agent has finished. When the
// agent left something in the way that the runner will not remove (a directory or a
// special file at a verify file's path, a file where a directory must be), the error is
// a *BrokenError: the agent's doing, not the infrastructure's.
func AddVerify(t *task.Task, dir string) error {
	if err := addFiles(t.Dir, t.Verify.Copy, t.Verify.Files, dir); err != nil {
		return fmt.Errorf("verify files: %w", err)
	}
	return nil
}

// BrokenError reports something in the workspace where a file or directory must go. After
// the agent, it means the agent broke the workspace so that the verify files cannot go in.
type BrokenError struct {
	// Path is the workspace-relative path in the way.
	Path string
	// Found says what is there ("a directory", "a FIFO (named pipe)").
	Found string
	// Want says what the runner needed there.
	Want string
	// Err, when set, is why the runner could not write there (permission denied: the
	// agent took write permission away) and replaces Found and Want in the message.
	Err error
}

func (e *BrokenError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s cannot be written (permission denied)", filepath.ToSlash(e.Path))
	}
	return fmt.Sprintf("%s is %s where %s must go", filepath.ToSlash(e.Path), e.Found, e.Want)
}

func (e *BrokenError) Unwrap() error { return e.Err }

// noPermission turns a permission error on rel into a *BrokenError: inside the workspace
// only the agent can have taken the permission away (chmod 555 on a directory).
func noPermission(rel string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return &BrokenError{Path: rel, Err: err}
	}
	return err
}

// DescribeMode names a file's type for messages: "a directory", "a FIFO (named pipe)".
func DescribeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device file"
	case m.IsRegular():
		return "a file"
	}
	return "a special file"
}

// addFiles writes a copied tree and inline files into dir. Every write goes through an
// os.Root and replaces a symlink instead of following it: verify files are added after the
// untrusted agent ran, and a link it left (main_test.go -> /etc/passwd, tests -> /) must
// not turn the runner's own write into one outside the workspace.
func addFiles(taskDir, copyFrom string, files map[string]string, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open workspace: %w", err)
	}
	defer func() { _ = root.Close() }() // a directory handle: Close loses no data
	if copyFrom != "" {
		src := copyFrom
		if !filepath.IsAbs(src) {
			src = filepath.Join(taskDir, src)
		}
		if err := copyTree(src, root); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rel := filepath.Clean(filepath.FromSlash(name))
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("file %q: outside the workspace", name)
		}
		if err := writeFile(root, rel, strings.NewReader(files[name]), fileMode(name)); err != nil {
			return fmt.Errorf("file %q: %w", name, err)
		}
	}
	return nil
}

// fileMode makes inline scripts executable, as a shebang would suggest.
func fileMode(name string) os.FileMode {
	if strings.HasSuffix(name, ".sh") {
		return 0o755
	}
	return 0o644
}

// CopyDir copies the tree at src into dst, keeping file modes. Symlinks are copied as
// links; existing links in dst are replaced, never followed.
func CopyDir(src, dst string) error {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer func() { _ = root.Close() }() // a directory handle: Close loses no data
	return copyTree(src, root)
}

// copyTree copies the task's tree src (the task author's, read through the door like
// everything else) into root. An error reading src is runner's or the task's, never the
// agent's (see notTheAgents); an error writing into root is kept (a *BrokenError there is
// the agent's doing).
func copyTree(src string, root *os.Root) error {
	from, err := door.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, notTheAgents(err))
	}
	defer func() { _ = from.Close() }() // a directory handle: Close loses no data
	var werr error
	err = from.Walk(context.Background(), door.Limits{MaxEntries: -1}, func(e door.Entry) error {
		if e.Err != nil {
			return e.Err
		}
		rel, info := filepath.FromSlash(e.Path), e.Info
		var err error
		switch {
		case info.IsDir():
			err = noPermission(rel, makeDir(root, rel, info.Mode().Perm()|0o700))
		case info.Mode()&fs.ModeSymlink != 0:
			var link string
			if link, err = e.Readlink(); err != nil {
				return err
			}
			if err = prepare(root, rel); err == nil {
				err = root.Symlink(link, rel)
			}
		case info.Mode().IsRegular():
			in, err := e.Open()
			if err != nil {
				return err
			}
			werr = writeFile(root, rel, in, info.Mode().Perm())
			_ = in.Close() // read only: Close loses no data
		}
		if err != nil {
			werr = err
		}
		if werr != nil {
			return fs.SkipAll
		}
		return nil
	})
	switch {
	case werr != nil:
		return fmt.Errorf("copy %s: %w", src, werr)
	case err != nil:
		return fmt.Errorf("copy %s: %w", src, notTheAgents(err))
	}
	return nil
}

// notTheAgents is err with any *door.Error in it flattened to its message: what the
// task's own files hold is not the agent's doing.
func notTheAgents(err error) error {
	var de *door.Error
	if errors.As(err, &de) {
		return errors.New(err.Error())
	}
	return err
}

// writeFile writes r to a new file at rel inside root, replacing a file or link that is
// there. The file is always created afresh (O_EXCL): opening the agent's file instead
// would write through a hard link it made to another file, and block for ever on a FIFO.
func writeFile(root *os.Root, rel string, r io.Reader, mode os.FileMode) error {
	if err := prepare(root, rel); err != nil {
		return noPermission(rel, err)
	}
	f, err := door.Create(root, rel, mode)
	if err != nil {
		return noPermission(rel, err)
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close() // the error above is the one returned
		return err
	}
	return f.Close()
}

// prepare makes rel's parent directories real directories and removes a file or symlink
// at rel itself, so that the write that follows creates a new file inside the root. A
// directory or special file there is left alone and reported as a *BrokenError.
func prepare(root *os.Root, rel string) error {
	if parent := filepath.Dir(rel); parent != "." {
		if err := makeDir(root, parent, 0o755); err != nil {
			return err
		}
	}
	fi, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0:
		return root.Remove(rel)
	}
	return &BrokenError{Path: rel, Found: DescribeMode(fi.Mode()), Want: "a regular file"}
}

// makeDir is MkdirAll that replaces symlinks along the way with real directories.
func makeDir(root *os.Root, rel string, mode os.FileMode) error {
	parts := strings.Split(rel, string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		fi, err := root.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			if err := root.Remove(p); err != nil {
				return err
			}
		case err == nil:
			return &BrokenError{Path: p, Found: DescribeMode(fi.Mode()), Want: "a directory"}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := root.Mkdir(p, mode); err != nil {
			return err
		}
	}
	return nil
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
