// Package container runs a task's commands inside a container of the Docker CLI or the
// Podman CLI (Docker-compatible), behind the same tools.CommandWrapper interface as the
// host sandbox: run_in_terminal, run_code, setup commands and command assertions become
// `<engine> exec` calls into one long-lived container per scenario, whose workdir is a
// bind mount of the scenario's workspace. No daemon API client and no runtime of our own:
// only the engine's command line.
//
// Every container carries the label runner.run=<run id>, so cleanup and tests find exactly
// their own (`podman ps -a --filter label=runner.run=ID`).
package container

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Engines are the command-line engines looked for on PATH, in order, when none is named.
// Podman first: it needs no daemon, where a docker CLI without one is common.
var Engines = []string{"podman", "docker"}

// LabelRun is the label holding the run id of every container runner starts.
const LabelRun = "runner.run"

// ErrNoEngine marks a missing engine.
var ErrNoEngine = errors.New("no container engine")

// Engine is a container engine's command-line client.
type Engine struct {
	// Path is the client's absolute path.
	Path string
	// Flavor is "podman" or "docker": the few flags that differ follow it.
	Flavor string

	mu     sync.Mutex
	builds map[string]*sync.Mutex // per image tag, so a run builds each image once
}

// Find returns the engine named by name (a program name or path, e.g. "docker" or
// "/usr/bin/podman"), or the first of Engines on PATH when name is empty.
func Find(name string) (*Engine, error) {
	candidates := Engines
	if name != "" {
		candidates = []string{name}
	}
	for _, c := range candidates {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		flavor := "docker"
		if strings.Contains(filepath.Base(c), "podman") {
			flavor = "podman"
		}
		return &Engine{Path: p, Flavor: flavor, builds: map[string]*sync.Mutex{}}, nil
	}
	if name != "" {
		return nil, fmt.Errorf("%w: %q not found on PATH", ErrNoEngine, name)
	}
	return nil, fmt.Errorf("%w: neither podman nor docker is on PATH; install one, or name one with --engine", ErrNoEngine)
}

// Name is the engine's program name ("podman").
func (e *Engine) Name() string { return filepath.Base(e.Path) }

// command runs the engine client with args and returns its stdout; a failure carries the
// engine's own message (stderr).
func (e *Engine) command(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, e.Path, args...)
	// A group of its own: the terminal's Ctrl-C goes to the runner, which stops the run
	// and still needs the engine to remove its containers; ctx ends the client instead.
	cmd.SysProcAttr = ownGroup()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &stdout, &stderr, stdin
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", e.Name(), args[0], err, msg)
	}
	return stdout.String(), nil
}

// ImageExists reports whether the engine has the image locally.
func (e *Engine) ImageExists(ctx context.Context, image string) bool {
	_, err := e.command(ctx, nil, "image", "inspect", image)
	return err == nil
}

// Build builds dockerfile with its directory as the context, unless an image of the same
// content was built before, and returns the image's tag. The tag is a hash of the
// Dockerfile and every file of the context, so a changed file means a new build, and
// repeated scenarios, repeats and runs share one image.
func (e *Engine) Build(ctx context.Context, dockerfile string) (string, error) {
	sum, err := contextHash(dockerfile)
	if err != nil {
		return "", err
	}
	tag := "localhost/runner-env:" + sum[:16]
	e.mu.Lock()
	lock := e.builds[tag]
	if lock == nil {
		lock = &sync.Mutex{}
		e.builds[tag] = lock
	}
	e.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()
	if e.ImageExists(ctx, tag) {
		return tag, nil
	}
	if _, err := e.command(ctx, nil, "build", "-q", "-t", tag, "-f", dockerfile, filepath.Dir(dockerfile)); err != nil {
		return "", fmt.Errorf("build %s: %w", dockerfile, err)
	}
	return tag, nil
}

// contextHash hashes a Dockerfile and its directory (paths, modes, contents, link targets).
func contextHash(dockerfile string) (string, error) {
	h := sha256.New()
	df, err := os.ReadFile(dockerfile)
	if err != nil {
		return "", fmt.Errorf("dockerfile: %w", err)
	}
	fmt.Fprintf(h, "dockerfile %d\n", len(df))
	h.Write(df)
	dir := filepath.Dir(dockerfile)
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("build context %s: %w", dir, err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := hashEntry(h, dir, p); err != nil {
			return "", fmt.Errorf("build context: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashEntry writes one path of the build context dir into h: its name, mode, and link
// target or content.
func hashEntry(h hash.Hash, dir, p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(dir, p)
	fmt.Fprintf(h, "%s %o\n", rel, fi.Mode())
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		link, _ := os.Readlink(p)
		fmt.Fprintf(h, "-> %s\n", link)
	case fi.Mode().IsRegular():
		f, err := os.Open(p)
		if err == nil {
			_, err = io.Copy(h, f)
			_ = f.Close() // read only: Close loses no data
		}
		return err
	}
	return nil
}

// RemoveRun force-removes every container labelled with the run id (what a killed runner
// left behind). It returns how many it removed.
func (e *Engine) RemoveRun(ctx context.Context, runID string) (int, error) {
	ids, err := e.List(ctx, runID)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	_, err = e.command(ctx, nil, append(e.rmArgs(), ids...)...)
	return len(ids), err
}

// List returns the ids of the containers, running or not, labelled with the run id.
func (e *Engine) List(ctx context.Context, runID string) ([]string, error) {
	out, err := e.command(ctx, nil, "ps", "-a", "-q", "--filter", "label="+LabelRun+"="+runID)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// rmArgs removes containers at once: podman otherwise waits 10 s for PID 1 to stop, and
// the sleep loop that is our PID 1 ignores SIGTERM, as an init does.
func (e *Engine) rmArgs() []string {
	if e.Flavor == "podman" {
		return []string{"rm", "-f", "-t", "0"}
	}
	return []string{"rm", "-f"}
}
