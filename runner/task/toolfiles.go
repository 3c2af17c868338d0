package task

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"
)

// A task's tools and MCP servers see, of the task file's directory, only the files they
// declare (files:), plus those their command names: $TASK_DIR/PATH in a tool's command, a
// path next to the task file in a server's command or args. Never the task file itself
// (its reference, its assertions) nor the verify files: a tool runs code the agent may
// have written (anything it starts in the workspace), so what the tool can read, the
// agent can.

// toolFile is one file a tool or server declared, for the checks that need every key.
type toolFile struct {
	node  ast.Node
	field string
	abs   string
}

// taskDirRef finds $TASK_DIR/PATH and ${TASK_DIR}/PATH in a tool's command.
var taskDirRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(?:TASK_DIR\b|\{TASK_DIR\})/([^\s"'$;|&()<>\x60\\]+)`)
})

// declaredFiles decodes a files: list: paths relative to the task file's directory that
// exist.
func (l *loader) declaredFiles(n ast.Node, field, dir string) []string {
	return l.declaredFilesOf(n, field, dir, l.t.Dir, "task file")
}

// declaredFilesOf is declaredFiles for the files beside another file (noun: "suite
// file"), which dir holds (shown: dir as messages name it).
func (l *loader) declaredFilesOf(n ast.Node, field, dir, shown, noun string) []string {
	var out []string
	items, _ := l.d.items(n, field)
	for i, it := range items {
		f := index(field, i)
		p, ok := l.d.nonEmpty(it, f)
		if !ok {
			continue
		}
		if !localPath(p) {
			l.d.fail(it, f, "%q must be relative to the %s and stay inside its directory", p, noun)
			continue
		}
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if _, err := os.Stat(abs); err != nil {
			l.d.failErr(it, f, err, "%q not found next to the %s (looked for %s)", p, noun, filepath.Join(shown, filepath.FromSlash(p)))
			continue
		}
		out = appendNew(out, abs)
		l.toolFiles = append(l.toolFiles, toolFile{it, f, abs})
	}
	return out
}

// commandFiles are the existing files a tool's command names through TASK_DIR.
func (l *loader) commandFiles(n ast.Node, field, dir, command string) []string {
	var out []string
	for _, m := range taskDirRef().FindAllStringSubmatch(command, -1) {
		rel := filepath.Clean(m[1])
		if !localPath(filepath.ToSlash(rel)) {
			continue
		}
		abs := filepath.Join(dir, rel)
		if _, err := os.Stat(abs); err == nil {
			out = appendNew(out, abs)
			l.toolFiles = append(l.toolFiles, toolFile{n, field, abs})
		}
	}
	return out
}

// argvFiles are the arguments of a server resolved to paths inside dir.
func (l *loader) argvFiles(n ast.Node, field, dir string, argv []string) []string {
	var out []string
	for _, a := range argv {
		if !filepath.IsAbs(a) {
			continue
		}
		if rel, err := filepath.Rel(dir, a); err != nil || !filepath.IsLocal(rel) {
			continue
		}
		if _, err := os.Stat(a); err == nil {
			out = appendNew(out, a)
			l.toolFiles = append(l.toolFiles, toolFile{n, field, a})
		}
	}
	return out
}

// checkToolFiles refuses a declared file that is, or holds, the task file or the verify
// files; run once every key is decoded.
func (l *loader) checkToolFiles() {
	if len(l.toolFiles) == 0 {
		return
	}
	taskFile, _ := filepath.Abs(l.t.Path)
	dir, _ := filepath.Abs(l.t.Dir)
	var verify string
	if l.t.Verify.Copy != "" {
		verify = filepath.Join(dir, filepath.FromSlash(l.t.Verify.Copy))
	}
	for _, tf := range l.toolFiles {
		switch {
		case holds(tf.abs, taskFile):
			l.d.fail(tf.node, tf.field, "%s is or holds the task file itself (its reference and assertions): name the tool's own files", rel(dir, tf.abs))
		case verify != "" && (holds(tf.abs, verify) || holds(verify, tf.abs)):
			l.d.fail(tf.node, tf.field, "%s is or holds verify.copy's %s, which the agent must never see: name the tool's own files", rel(dir, tf.abs), l.t.Verify.Copy)
		}
	}
}

// holds reports whether p is dir or lies inside it.
func holds(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && (r == "." || filepath.IsLocal(r))
}

func rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil {
		return strings.ReplaceAll(r, string(filepath.Separator), "/")
	}
	return p
}

func appendNew(list []string, p string) []string {
	for _, q := range list {
		if q == p {
			return list
		}
	}
	return append(list, p)
}
