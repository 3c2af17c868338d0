package task

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/agentrunner/runner/tools"
)

// MCPServer is a stdio MCP server the scenario starts (mcp:); its tools are offered as
// NAME__TOOL. runner/scenario starts it through tools/mcp.
type MCPServer struct {
	Name    string            `json:"name" jsonschema:"required,pattern=^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$,maxLength=30" jsonschema_description:"Prefixes the server's tools: NAME__TOOL. Letters, digits, - and single _."`
	Command string            `json:"command" jsonschema:"required,minLength=1" jsonschema_description:"The program: a name on PATH, or a path (relative ones resolve against the task file's directory, which the server may read)."`
	Args    []string          `json:"args,omitempty" jsonschema_description:"Its arguments; a relative one that names a file next to the task file is made absolute." jsonschema_extras:"use=texts"`
	Env     map[string]string `json:"env,omitempty" jsonschema_description:"Environment variables for the server, on top of the task's env." jsonschema_extras:"use=env"`
	// Timeout bounds each call of the server's tools (default 60s).
	Timeout time.Duration `json:"timeout,omitempty" jsonschema_description:"Time limit of each tool call, at most 10m. Default: 60s."`
	// Argv is Command and Args with relative paths that exist next to the task file made
	// absolute; Dir is that directory, the server's TASK_DIR.
	Argv []string `json:"argv" jsonschema:"-"`
	Dir  string   `json:"dir" jsonschema:"-"`
	// Files are what the server may read of Dir (absolute), read-only: files: and the
	// paths of Argv inside Dir. Nothing else of Dir is there for it.
	Files []string `json:"files,omitempty" jsonschema_description:"Paths of files or directories beside the task file the server may read (read-only); besides them it sees only the paths its command and args name. Never the task file or its verify files." jsonschema_extras:"use=texts"`
	Pos   Position `json:"pos" jsonschema:"-"`
}

var (
	mcpFields      = keysOf(MCPServer{})
	mcpServerName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$`) })
	maxMCPNameLen  = 30 // leaves room for the tool's name within providers' 64
	maxMCPCallTime = 10 * time.Minute
)

// mcpServers decodes mcp:.
func (l *loader) mcpServers(n ast.Node, field string) {
	d := l.d
	items, _ := d.items(n, field)
	dir, err := filepath.Abs(l.t.Dir)
	if err != nil {
		dir = l.t.Dir
	}
	for i, it := range items {
		f := index(field, i)
		s := MCPServer{Pos: d.posOf(it), Dir: dir}
		ok := true
		present := d.object(it, f, mcpFields, func(e entry, f string) {
			var fine bool
			switch e.key {
			case "name":
				if s.Name, fine = d.nonEmpty(e.value, f); fine {
					fine = l.mcpName(e.value, f, s.Name)
				}
			case "command":
				if s.Command, fine = d.nonEmpty(e.value, f); fine && strings.Contains(s.Command, "/") && !filepath.IsAbs(s.Command) {
					if _, err := os.Stat(filepath.Join(dir, s.Command)); err != nil {
						d.failErr(e.value, f, err, "%q not found next to the task file (looked for %s)", s.Command, filepath.Join(l.t.Dir, s.Command))
						fine = false
					}
				}
			case "args":
				s.Args = d.stringList(e.value, f)
				fine = true
			case "env":
				s.Env = l.env(e.value, f)
				fine = true
			case "timeout":
				if s.Timeout, fine = d.duration(e.value, f); fine && s.Timeout > maxMCPCallTime {
					d.fail(e.value, f, "at most %s, got %s", maxMCPCallTime, s.Timeout)
					fine = false
				}
			case "files":
				s.Files = append(s.Files, l.declaredFiles(e.value, f, dir)...)
				fine = true
			}
			ok = ok && fine
		})
		d.require(it, f, present, "name", "command")
		if present == nil || !ok || s.Name == "" || s.Command == "" {
			continue
		}
		s.Argv = []string{resolveNextTo(dir, s.Command, true)}
		for _, a := range s.Args {
			s.Argv = append(s.Argv, resolveNextTo(dir, a, false))
		}
		for _, p := range l.argvFiles(it, f, dir, s.Argv) {
			s.Files = appendNew(s.Files, p)
		}
		l.t.MCP = append(l.t.MCP, s)
	}
}

// resolveNextTo makes a relative path absolute against the task file's directory: the
// command when it holds a slash (a bare name is looked up on PATH), an argument when it
// names something that exists there (anything else, a flag or a word, is left alone).
//
// "." (or anything that cleans to the directory itself, or leaves it) stays as written: it
// names the server's working directory, the workspace, and the task's directory holds
// the task file, which no server may be given.
func resolveNextTo(dir, p string, isCommand bool) string {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "-") || filepath.Clean(p) == "." || !filepath.IsLocal(filepath.Clean(p)) {
		return p
	}
	if isCommand {
		if strings.Contains(p, "/") {
			return filepath.Join(dir, p)
		}
		return p
	}
	full := filepath.Join(dir, p)
	if _, err := os.Stat(full); err == nil {
		return full
	}
	return p
}

// mcpName checks a server's name: it prefixes its tools' names, so it must fit what
// providers accept and must not contain the separator.
func (l *loader) mcpName(n ast.Node, field, name string) bool {
	switch {
	case !mcpServerName().MatchString(name) || len(name) > maxMCPNameLen:
		l.d.fail(n, field, "invalid server name %q: letters, digits, - and single _, at most %d characters (it prefixes the tools' names: %s%stool)", name, maxMCPNameLen, name, tools.ServerSeparator)
	case contains(l.mcpNames, name):
		l.d.fail(n, field, "server %q is declared twice", name)
	default:
		l.mcpNames = append(l.mcpNames, name)
		return true
	}
	return false
}

// mcpTool reports whether name is a tool of a declared MCP server (SERVER__TOOL), or
// SERVER__* for all of them. Their tools are known only once the server runs.
func (l *loader) mcpTool(name string) bool {
	server, tool, ok := strings.Cut(name, tools.ServerSeparator)
	return ok && tool != "" && contains(l.mcpNames, server)
}

// MCPTool reports whether name is SERVER__TOOL (or SERVER__*) for one of the task's servers.
func (t *Task) MCPTool(name string) bool {
	server, tool, ok := strings.Cut(name, tools.ServerSeparator)
	if !ok || tool == "" {
		return false
	}
	for _, s := range t.MCP {
		if s.Name == server {
			return true
		}
	}
	return false
}
