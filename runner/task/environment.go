package task

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Environment runs the task's commands in a container instead of the host sandbox: the
// workspace is mounted at Workdir, and verify files are copied to VerifyDir only after
// the agent has finished.
type Environment struct {
	// Image names an image; Dockerfile (relative to the task file) is built instead, once
	// per run and cached by content. Exactly one is set.
	Image      string `json:"image,omitempty" jsonschema:"minLength=1,oneof_required=image" jsonschema_description:"An image name."`
	Dockerfile string `json:"dockerfile,omitempty" jsonschema:"minLength=1,oneof_required=dockerfile" jsonschema_description:"A Dockerfile, relative to the task file; its directory is the build context. Built once per run, cached by content hash."`
	// Workdir is the workspace's mount point inside the container (default /app).
	Workdir string `json:"workdir" jsonschema:"pattern=^/." jsonschema_description:"Where the workspace is mounted. Default: /app."`
	// VerifyDir receives the verify files after the agent finished (default /tests). When
	// it equals Workdir they go into the workspace, as without an environment.
	VerifyDir string `json:"verify_dir" jsonschema:"pattern=^/." jsonschema_description:"Where verify files go after the agent finished. Default: /tests; the workdir puts them in the workspace."`
	// Network gives the container the engine's default network (default: none).
	Network bool `json:"network,omitempty" jsonschema_description:"The engine's default network. Default: false (--network none)."`
	// CPUs and MemoryMB limit the container (0: no limit); User runs its processes.
	CPUs     float64 `json:"cpus,omitempty" jsonschema:"exclusiveMinimum=0" jsonschema_description:"CPUs (--cpus)."`
	MemoryMB int     `json:"memory_mb,omitempty" jsonschema:"minimum=6" jsonschema_description:"Memory in MiB (--memory)."`
	User     string  `json:"user,omitempty" jsonschema:"minLength=1" jsonschema_description:"User (and group) the commands run as (--user)."`
}

// Defaults of an environment.
const (
	DefaultWorkdir   = "/app"
	DefaultVerifyDir = "/tests"
)

// DockerfilePath is the Dockerfile's path, resolved against the task file's directory.
func (t *Task) DockerfilePath() string {
	if t.Environment == nil || t.Environment.Dockerfile == "" {
		return ""
	}
	p := filepath.FromSlash(t.Environment.Dockerfile)
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.Dir, p)
	}
	return p
}

var environmentFields = keysOf(Environment{})

func (l *loader) environment(n ast.Node, field string) {
	d := l.d
	env := &Environment{Workdir: DefaultWorkdir, VerifyDir: DefaultVerifyDir}
	present := d.object(n, field, environmentFields, func(e entry, f string) {
		v := e.value
		switch e.key {
		case "image":
			env.Image, _ = d.nonEmpty(v, f)
		case "dockerfile":
			if s, ok := d.nonEmpty(v, f); ok {
				env.Dockerfile = s
				full := filepath.FromSlash(s)
				if !filepath.IsAbs(full) {
					full = filepath.Join(l.t.Dir, full)
				}
				if fi, err := os.Stat(full); err != nil {
					d.failErr(v, f, err, "Dockerfile %q not found (looked for %s, relative to the task file)", s, full)
				} else if fi.IsDir() {
					d.fail(v, f, "%q is a directory; name the Dockerfile itself", s)
				}
			}
		case "workdir":
			env.Workdir, _ = l.containerDir(v, f)
		case "verify_dir":
			env.VerifyDir, _ = l.containerDir(v, f)
		case "network":
			env.Network, _ = d.boolean(v, f)
		case "cpus":
			if x, ok := d.number(v, f); ok {
				if x <= 0 {
					d.fail(v, f, "must be above 0, got %v", x)
				}
				env.CPUs = x
			}
		case "memory_mb":
			if x, ok := d.atLeast(v, f, 6); ok {
				env.MemoryMB = x
			}
		case "user":
			env.User, _ = d.nonEmpty(v, f)
		}
	})
	if present == nil {
		return
	}
	_, hasImage := present["image"]
	_, hasFile := present["dockerfile"]
	switch {
	case hasImage && hasFile:
		d.fail(present["dockerfile"].keyAt, join(field, "dockerfile"), "give image or dockerfile, not both")
	case !hasImage && !hasFile:
		d.fail(n, field, "needs image: NAME or dockerfile: PATH")
	}
	if env.Workdir != "" && env.VerifyDir != env.Workdir && strings.HasPrefix(env.VerifyDir+"/", env.Workdir+"/") {
		d.fail(n, join(field, "verify_dir"), "%s is inside the workspace %s: use the workdir itself or a directory outside it", env.VerifyDir, env.Workdir)
	}
	l.t.Environment = env
}

// containerDir decodes an absolute directory inside the container.
func (l *loader) containerDir(n ast.Node, f string) (string, bool) {
	s, ok := l.d.nonEmpty(n, f)
	if !ok {
		return "", false
	}
	if !strings.HasPrefix(s, "/") || path.Clean(s) == "/" {
		l.d.fail(n, f, "must be an absolute directory below / inside the container, like /app; got %q", s)
		return "", false
	}
	return path.Clean(s), true
}

// Score is how a task's score (0..1) is computed after its assertions: from a file the
// tests wrote (a reward file) or as the pass fraction of its per-test results.
type Score struct {
	// File holds a number between 0 and 1: a workspace path, or an absolute path inside
	// the environment's container.
	File string `json:"file,omitempty" jsonschema:"required,minLength=1" jsonschema_description:"A file holding a number between 0 and 1."`
	// PassFraction scores the task by the fraction of per-test results that passed
	// (written score: pass_fraction, not a key of the block).
	PassFraction bool `json:"pass_fraction,omitempty" jsonschema:"-"`
}

var scoreFields = keysOf(Score{})

// score decodes `score: pass_fraction` or `score: {file: PATH}`.
func (l *loader) score(n ast.Node, field string) {
	d := l.d
	r, _, ok := d.resolve(n, field)
	if !ok {
		return
	}
	switch r.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		s := &Score{}
		present := d.object(r, field, scoreFields, func(e entry, f string) {
			if p, ok := d.nonEmpty(e.value, f); ok {
				if !strings.HasPrefix(p, "/") && !localPath(p) {
					d.fail(e.value, f, "path %q must stay inside the workspace, or be absolute inside the container", p)
					return
				}
				s.File = p
				if strings.HasPrefix(p, "/") {
					l.absPaths = append(l.absPaths, absPath{e.value, f})
				}
			}
		})
		d.require(r, field, present, "file")
		l.t.Score = s
	default:
		v, ok := d.str(r, field)
		if !ok {
			return
		}
		if v != "pass_fraction" {
			d.fail(r, field, "expected pass_fraction or {file: PATH}, got %q", v)
			return
		}
		l.t.Score = &Score{PassFraction: true}
	}
}

// absPath is an absolute path in a field that allows one only with an environment.
type absPath struct {
	at    ast.Node
	field string
}

// checkAbsPaths reports absolute paths (inside a container) in a task without environment:.
func (l *loader) checkAbsPaths() {
	if l.t.Environment != nil {
		return
	}
	for _, a := range l.absPaths {
		l.d.fail(a.at, a.field, "an absolute path needs environment: (it names a path inside the container); use a workspace path")
	}
	if a := l.freshAt; a != nil {
		l.d.fail(a.at, a.field, "a fresh container needs environment: (verification runs in a new container of its image); without one, drop fresh_container")
	}
}
