package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Workspace is the one directory a run's tools may touch. Every path a tool receives goes
// through Resolve, and every file operation goes through Root, an os.Root: the kernel, not
// string checks, stops symlinks that lead outside.
type Workspace struct {
	dir  string // absolute, symlinks evaluated
	orig string // absolute, as given (may differ from dir when it sits behind a symlink)
	root *os.Root

	// Env is the task's extra environment for commands.
	Env map[string]string
	// Network allows commands to reach the network when a sandbox would otherwise cut it.
	Network bool
	// Limits are resource limits for commands; zero fields take the sandbox's defaults.
	Limits Limits
	// Sandbox confines commands; nil runs them directly.
	Sandbox CommandWrapper
	// CacheDir, when set, is the run's shared build cache (Go's, pip's; --cache-dir). No
	// command writes it, unless CacheWritable: what an agent wrote there (a recompiled
	// testing package over the cached archive) would reach the verification, every other
	// scenario and later runs. Commands see it read-only, through the workspace's private
	// layer (CacheHome), which is thrown away with the workspace.
	CacheDir string
	// CacheWritable lets commands write CacheDir itself: for a task's setup commands only,
	// the task's own code run before any agent, which is what warms the shared cache.
	CacheWritable bool
	// CacheSkip names top-level entries of CacheDir the layer leaves out ("go-build" for a
	// task that does not build Go): the layer costs a link per cached file, and a
	// command that does use that toolchain then starts it cold in its own layer.
	CacheSkip []string
	// ReadOnly are directories outside the workspace that commands must be able to read
	// (an MCP server's task directory): bwrap binds each read-only over its private /tmp
	// and home; Landlock and none let commands read them anyway.
	ReadOnly []string
	// NoWorkspaceCode gives commands an environment that loads no code from the working
	// directory (the workspace) unless the command's own variables ask for it: for a
	// task's tools and MCP servers, whose context the agent must not enter by planting a
	// module (see tools/exec.WorkspaceEnv).
	NoWorkspaceCode bool
	// Writable are directories outside the workspace that commands may write: a fresh
	// results directory runner made for one verification command (bwrap binds each
	// read-write; Landlock grants writes).
	Writable []string
	// EndpointPort, when set, is the one TCP port commands may connect to without
	// Network: runner's model endpoint on the host's loopback, for an external agent under
	// Landlock (bwrap, which has a network of its own, reaches it through a Unix socket
	// bound in; see runner/endpoint).
	EndpointPort int
	// Mount, when set, is the absolute path the workspace has inside a task's container
	// (its workdir, /app): absolute paths under it name workspace paths, so /app/a.txt
	// is a.txt.
	Mount string

	mu      sync.Mutex
	cache   *cacheLayer // made on first use, see CacheHome
	values  map[any]any
	onClose []func()
	// parent is the workspace a View was made from: it owns the root and the values.
	parent *Workspace
}

// Limits are per-command resource limits. Zero means "use the default".
type Limits struct {
	CPUSeconds int `json:"cpu_seconds,omitempty" yaml:"cpu_seconds" jsonschema_description:"CPU time in seconds."`
	MemoryMB   int `json:"memory_mb,omitempty" yaml:"memory_mb" jsonschema_description:"Address space in MiB."`
	FileSizeMB int `json:"file_size_mb,omitempty" yaml:"file_size_mb" jsonschema_description:"Largest file a command may write, in MiB."`
	Processes  int `json:"processes,omitempty" yaml:"processes" jsonschema_description:"Number of processes."`
}

// CommandWrapper rewrites a prepared command so that it runs confined (a sandbox).
type CommandWrapper interface {
	// Name identifies the mechanism ("bwrap", "landlock", "none").
	Name() string
	// Wrap rewrites cmd in place. cmd.Dir is inside ws.
	Wrap(cmd *exec.Cmd, ws *Workspace) error
}

// OpenWorkspace opens dir (which must exist) as a workspace.
func OpenWorkspace(dir string) (*Workspace, error) {
	orig, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(orig)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	return &Workspace{dir: real, orig: orig, root: root, values: map[any]any{}}, nil
}

// Dir returns the workspace's absolute path with symlinks evaluated.
func (w *Workspace) Dir() string { return w.dir }

// Root returns the os.Root through which all file access must go.
func (w *Workspace) Root() *os.Root { return w.root }

// Close runs the functions registered with OnClose, latest first, and releases the
// workspace's root handle. Closing a View does nothing: the root is its parent's.
func (w *Workspace) Close() error {
	if w.parent != nil {
		return nil
	}
	w.mu.Lock()
	hooks := w.onClose
	w.onClose = nil
	w.mu.Unlock()
	for i := len(hooks) - 1; i >= 0; i-- {
		hooks[i]()
	}
	return w.root.Close()
}

// OnClose registers f to run when the workspace closes: what a sandbox keeps for a
// workspace's commands (their cgroups) lives as long as the workspace. On a View it
// registers with the View's parent.
func (w *Workspace) OnClose(f func()) {
	if w.parent != nil {
		w.parent.OnClose(f)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onClose = append(w.onClose, f)
}

// View returns the same workspace (directory, root, values, environment, sandbox, limits,
// mount) with readOnly added to ReadOnly, for commands that must read a directory the
// agent's commands need not (a task's tool whose script sits next to the task file). It is
// cheap: nothing is opened.
func (w *Workspace) View(readOnly ...string) *Workspace {
	owner := w
	if w.parent != nil {
		owner = w.parent
	}
	return &Workspace{
		dir: w.dir, orig: w.orig, root: w.root, parent: owner,
		Env: w.Env, Network: w.Network, Limits: w.Limits, Sandbox: w.Sandbox, CacheDir: w.CacheDir,
		CacheWritable: w.CacheWritable, CacheSkip: w.CacheSkip, Mount: w.Mount, NoWorkspaceCode: w.NoWorkspaceCode, EndpointPort: w.EndpointPort,
		ReadOnly: append(append([]string(nil), w.ReadOnly...), readOnly...),
		Writable: append([]string(nil), w.Writable...),
	}
}

// Abs returns the absolute path of a workspace-relative path from Resolve.
func (w *Workspace) Abs(rel string) string { return filepath.Join(w.dir, filepath.FromSlash(rel)) }

// Value returns per-run state stored under key (for tools such as terminal_last_command).
func (w *Workspace) Value(key any) any {
	if w.parent != nil {
		return w.parent.Value(key)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.values[key]
}

// SetValue stores per-run state under key.
func (w *Workspace) SetValue(key, value any) {
	if w.parent != nil {
		w.parent.SetValue(key, value)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.values[key] = value
}

// Resolve turns a path from the model into a clean, slash-separated path relative to the
// workspace root ("." for the root itself). It rejects NUL bytes, absolute paths outside the
// workspace, ".." escapes, and paths whose existing target (through symlinks) lies outside.
func (w *Workspace) Resolve(p string) (string, *Error) {
	rel, err := w.lexical(p)
	if err != nil {
		return "", err
	}
	// Follow the whole path, final symlink included: a link that leaves the workspace, or a
	// dangling one that points outside, must not be usable for reading or creating files.
	if _, serr := w.root.Stat(rel); serr != nil && isEscape(serr) {
		return "", outside(p)
	}
	return rel, nil
}

// ResolveNoFollow is Resolve for operations on a link itself (delete, move, list): the
// parent directories must stay inside, but the final component may be a link to anywhere.
func (w *Workspace) ResolveNoFollow(p string) (string, *Error) {
	rel, err := w.lexical(p)
	if err != nil {
		return "", err
	}
	if parent := path.Dir(rel); parent != "." {
		if _, serr := w.root.Stat(parent); serr != nil && isEscape(serr) {
			return "", outside(p)
		}
	}
	return rel, nil
}

func (w *Workspace) lexical(p string) (string, *Error) {
	if strings.ContainsRune(p, 0) {
		return "", Errorf(CodeInvalidPath, "Remove the NUL byte from the path.", "Path contains a NUL byte")
	}
	if strings.TrimSpace(p) == "" {
		return "", Errorf(CodeInvalidPath, "Give a path relative to the workspace root, such as \".\" or \"src/main.go\".", "Path is empty")
	}
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		rel, ok := within(w.dir, clean)
		if !ok {
			rel, ok = within(w.orig, clean)
		}
		if !ok && w.Mount != "" && w.Mount != "/" {
			rel, ok = within(filepath.Clean(w.Mount), clean)
		}
		if !ok {
			return "", outside(p)
		}
		return rel, nil
	}
	clean := path.Clean(filepath.ToSlash(p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", outside(p)
	}
	return clean, nil
}

// within reports whether abs is dir or below it, and if so the relative path. Comparing
// with a trailing separator keeps a sibling such as /w/ws2 out of /w/ws.
func within(dir, abs string) (string, bool) {
	if abs == dir {
		return ".", true
	}
	if strings.HasPrefix(abs, dir+string(filepath.Separator)) {
		return filepath.ToSlash(abs[len(dir)+1:]), true
	}
	return "", false
}

func outside(p string) *Error {
	return Errorf(CodeInvalidPath, "Use a path relative to the workspace root; files outside the workspace cannot be accessed.",
		"Path '%s' is outside the workspace", p)
}

// isEscape reports whether err is os.Root refusing a path that leaves the root. The
// sentinel is unexported, so the message is the only handle.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// FileError maps an error from a file operation on rel to a structured tool error.
func FileError(err error, rel string) *Error {
	switch {
	case isEscape(err):
		return outside(rel)
	case errors.Is(err, syscall.ENOTEMPTY): // before ErrExist, which ENOTEMPTY also matches
		return Errorf(CodeExecutionError, "Pass recursive: true to delete a non-empty directory.", "Directory '%s' is not empty", rel)
	case errors.Is(err, fs.ErrNotExist):
		return Errorf(CodeFileNotFound, "Check the path with list_dir or file_search.", "File '%s' not found", rel)
	case errors.Is(err, fs.ErrExist):
		return Errorf(CodeAlreadyExists, "Choose another path, or use write_file to overwrite it.", "'%s' already exists", rel)
	case errors.Is(err, syscall.ENOTDIR):
		return Errorf(CodeNotADirectory, "A component of the path is a file, not a directory.", "'%s': not a directory", rel)
	case errors.Is(err, syscall.EISDIR):
		return Errorf(CodeIsADirectory, "Use list_dir to see a directory's contents.", "'%s' is a directory", rel)
	case errors.Is(err, fs.ErrPermission):
		return Errorf(CodePermissionDenied, "", "Permission denied: '%s'", rel)
	case errors.Is(err, syscall.ELOOP):
		return Errorf(CodeInvalidPath, "", "'%s': too many levels of symbolic links", rel)
	}
	return Errorf(CodeExecutionError, "", "'%s': %v", rel, err)
}
