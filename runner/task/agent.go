package task

import (
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/agentrunner/runner/runner/agent/kinds"
)

var agentFields = keysOf(Agent{})

// agent decodes agent:, a kind's name (agent: codex) or a block (agent: {command: ...}).
func (l *loader) agent(n ast.Node, field string) {
	d, a := l.d, &l.t.Agent
	l.agentAt = n
	r, _, ok := d.resolve(n, field)
	if !ok {
		return
	}
	switch r.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	case *ast.SequenceNode:
		d.fail(r, field, "expected an agent (%s) or a mapping with command, got a list", strings.Join(kinds.Names(), ", "))
		return
	default:
		if k, ok := d.enum(r, field, kinds.Names()); ok {
			if k == kinds.NameCommand {
				d.fail(r, field, "the command agent needs its command line: write agent: {command: \"./my-agent.sh\"}")
				return
			}
			a.Kind = k
		}
		return
	}
	var commandAt ast.Node
	// The files an agent's command names are beside the file that names them: a suite
	// file's agent: (inherited) brings its own, so one agent script serves the suite.
	from := l.d.posOf(r).File
	base, noun := l.t.Dir, "task file"
	if from != l.d.file {
		base, noun = filepath.Dir(from), "suite file"
	}
	dir, err := filepath.Abs(base)
	if err != nil {
		dir = base
	}
	a.Dir = dir
	present := d.object(r, field, agentFields, func(e entry, f string) {
		switch e.key {
		case "kind":
			a.Kind, _ = d.enum(e.value, f, kinds.Names())
		case "command":
			commandAt = e.value
			if a.Command, _ = d.nonEmpty(e.value, f); a.Command != "" {
				a.Files = append(a.Files, l.commandFiles(e.value, f, dir, a.Command)...)
			}
		case "files":
			a.Files = append(a.Files, l.declaredFilesOf(e.value, f, dir, base, noun)...)
		}
	})
	_, hasKind := present["kind"]
	switch {
	case !hasKind && commandAt != nil:
		a.Kind = kinds.NameCommand
	case a.Kind == kinds.NameCommand:
		d.require(r, field, present, "command")
	case commandAt != nil && a.Kind != "":
		d.fail(commandAt, field+".command", "only the command agent takes a command, not %s: leave kind out, or drop command", a.Kind)
	}
}

// checkAgent warns at the keys an external agent does not use.
func (l *loader) checkAgent() {
	if l.agentAt == nil || !l.t.Agent.External() {
		return
	}
	for _, key := range loopOnlyKeys {
		if n := l.keyNodes[key]; n != nil {
			l.d.warn(n, key, "applies to runner's own loop only: the %s agent brings its own tools and runs them without runner's approval policy", l.t.Agent.Kind)
		}
	}
}

// loopOnlyKeys are what an external agent does not use: the loop's tools and policy.
var loopOnlyKeys = []string{"tools", "tools_defined", "mcp", "approval", "command_rules"}
