package task

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/agentrunner/runner/tools"
)

// ToolDef is a tool the task file brings (tools_defined): a shell command the agent can
// call like any built-in tool. The runtime runs it through tools/command (runner/scenario's
// Registry).
type ToolDef struct {
	Name        string         `json:"name" jsonschema:"required,pattern=^[a-zA-Z0-9_-]{1\\,64}$" jsonschema_description:"The tool's name as the model sees it: letters, digits, _ and -, at most 64; it must not clash with a built-in tool or contain __ (reserved for MCP tools)."`
	Description string         `json:"description,omitempty" jsonschema_description:"What the tool does and when to use it, written for the model."`
	Parameters  map[string]any `json:"parameters,omitempty" jsonschema_description:"The JSON Schema of the arguments (type: object). Default: no parameters." jsonschema_extras:"use=parameters"`
	Command     string         `json:"command" jsonschema:"required,minLength=1" jsonschema_description:"A shell command line, run with sh -c at the workspace root under the task's sandbox, env and limits."`
	// Risk is read_only, safe_write or dangerous (the default).
	Risk    string        `json:"risk,omitempty" jsonschema_description:"What the approval policy sees (read-only mode runs only read_only tools). Default: dangerous." jsonschema_extras:"use=risk"`
	Timeout time.Duration `json:"timeout,omitempty" jsonschema_description:"Time limit of each call, at most 300s; the command and everything it started are killed. Default: 30s."`
	// Dir is the task file's directory (absolute): the command finds it in TASK_DIR.
	Dir string `json:"dir" jsonschema:"-"`
	// Files are what the command may read of Dir (absolute): files: and the
	// $TASK_DIR/PATH its command names. Nothing else of Dir is there for it.
	Files []string `json:"files,omitempty" jsonschema_description:"Paths of files or directories beside the task file that the command may read (under TASK_DIR); besides them it sees only the $TASK_DIR/PATH its command names. Never the task file or its verify files." jsonschema_extras:"use=texts"`
	Pos   Position `json:"pos" jsonschema:"-"`
}

// Spec is the tool's spec as the model sees it, built as tools/command builds it
// (tools.DefinedSpec). Load has checked the definition, so an error here means the
// ToolDef was built by hand.
func (d ToolDef) Spec() (tools.Spec, error) {
	return tools.DefinedSpec(d.Name, d.Description, d.Parameters, tools.Risk(d.Risk))
}

// declared is a defined tool as the loader checks it: its spec, against which the
// reference solution's calls are checked, and nothing that runs (format only: the
// runtime builds the tool that runs).
type declared struct{ spec tools.Spec }

func (d declared) Spec() tools.Spec                                 { return d.spec }
func (declared) Validate(tools.Args, *tools.Workspace) *tools.Error { return nil }
func (declared) RequiresApproval(tools.Args, *tools.Workspace) bool { return true }
func (d declared) Execute(context.Context, tools.Args, *tools.Workspace) tools.Result {
	return tools.Failf(tools.CodeExecutionError, "", "%s is checked at load time, not run", d.spec.Name)
}

var (
	toolDefFields = keysOf(ToolDef{})
	risks         = []string{string(tools.RiskReadOnly), string(tools.RiskSafeWrite), string(tools.RiskDangerous)}
)

// maxToolTimeout is run_in_terminal's longest timeout.
const maxToolTimeout = 300 * time.Second

// predecode decodes the keys that others depend on, whatever their order in the file:
// tools_defined and mcp, whose tools tools:, rules, assertions and the reference may use.
func (l *loader) predecode(root ast.Node) {
	n := len(l.d.errs)
	es, _ := l.d.entries(root, "")
	l.d.errs = l.d.errs[:n] // decode reports a root that is not a mapping
	for _, e := range es {
		switch e.key {
		case "tools_defined":
			l.toolsDefined(e.value, e.key)
		case "mcp":
			l.mcpServers(e.value, e.key)
		case "agent": // before assertions: tool_called names an external agent's own tools
			l.agent(e.value, e.key)
		}
	}
}

// toolsDefined decodes tools_defined and checks each tool as the runner will build it.
func (l *loader) toolsDefined(n ast.Node, field string) {
	d := l.d
	items, _ := d.items(n, field)
	l.defined = tools.NewRegistry()
	dir, err := filepath.Abs(l.t.Dir)
	if err != nil {
		dir = l.t.Dir
	}
	for i, it := range items {
		f := index(field, i)
		def := ToolDef{Pos: d.posOf(it), Dir: dir}
		var nameAt, paramsAt ast.Node
		ok := true
		present := d.object(it, f, toolDefFields, func(e entry, f string) {
			var fine bool
			switch e.key {
			case "name":
				nameAt = e.value
				if def.Name, fine = d.nonEmpty(e.value, f); fine {
					if fine = l.definedName(e.value, f, def.Name); fine {
						// Known from here on, even if the rest is broken: one mistake,
						// one message, not a second "unknown tool" wherever it is used.
						l.definedNames = append(l.definedNames, def.Name)
					}
				}
			case "description":
				def.Description, fine = d.str(e.value, f)
			case "parameters":
				paramsAt = e.value
				var v any
				if v, fine = d.toAny(e.value, f); fine {
					def.Parameters, fine = v.(map[string]any)
					if !fine || def.Parameters["type"] != "object" {
						d.fail(e.value, f, "must be a JSON Schema object with type: object, like {type: object, properties: {path: {type: string}}}")
						fine = false
					}
				}
			case "command":
				if def.Command, fine = d.nonEmpty(e.value, f); fine {
					def.Files = append(def.Files, l.commandFiles(e.value, f, dir, def.Command)...)
				}
			case "files":
				def.Files = append(def.Files, l.declaredFiles(e.value, f, dir)...)
				fine = true
			case "risk":
				def.Risk, fine = d.enum(e.value, f, risks)
			case "timeout":
				if def.Timeout, fine = d.duration(e.value, f); fine && def.Timeout > maxToolTimeout {
					d.fail(e.value, f, "at most %s, got %s", maxToolTimeout, def.Timeout)
					fine = false
				}
			}
			ok = ok && fine
		})
		d.require(it, f, present, "name", "command")
		if present == nil || !ok || def.Name == "" || def.Command == "" {
			continue
		}
		l.addDefined(def, f, nameAt, paramsAt)
	}
}

// addDefined builds a decoded tool's spec as the runner will and adds the tool to the
// task, or reports why it cannot be built at the entry's name or parameters.
func (l *loader) addDefined(def ToolDef, f string, nameAt, paramsAt ast.Node) {
	d := l.d
	spec, err := def.Spec()
	if err != nil {
		d.failErr(nameAt, join(f, "name"), err, "%v", err)
		return
	}
	tl := declared{spec}
	// Compile the schema now: a broken one is the author's error, not the model's.
	one := tools.NewRegistry()
	if err := one.Register(tl); err == nil {
		err = one.CheckSchemas()
		if err != nil {
			d.failErr(paramsAt, join(f, "parameters"), err, "invalid JSON Schema: %s", schemaProblem(err))
			return
		}
	}
	_ = l.defined.Register(tl) // a duplicate name was reported above
	l.t.ToolsDefined = append(l.t.ToolsDefined, def)
}

// definedName checks a defined tool's name: what every provider accepts, and no clash
// with a built-in tool, an alias, task_complete or another defined tool.
func (l *loader) definedName(n ast.Node, field, name string) bool {
	switch {
	case !tools.ValidName(name):
		l.d.fail(n, field, "invalid tool name %q: use letters, digits, _ and -, at most 64 characters (what model providers accept)", name)
	case strings.Contains(name, "__"):
		l.d.fail(n, field, "invalid tool name %q: \"__\" is reserved for MCP servers' tools (server__tool)", name)
	case name == TaskComplete:
		l.d.fail(n, field, "%q is built in; pick another name", name)
	case contains(l.definedNames, name):
		l.d.fail(n, field, "tool %q is defined twice", name)
	default:
		if l.known != nil {
			if canonical, clash := l.known(name); clash {
				l.d.fail(n, field, "tool %q clashes with the built-in tool %q; pick another name", name, canonical)
				return false
			}
		}
		return true
	}
	return false
}

// schemaProblem condenses a schema error, which may span lines, into one line.
func schemaProblem(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
