package toolbox

import (
	"fmt"

	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/command"
)

// Registry returns catalog plus the task's defined tools (tools_defined), each a shell
// command run through tools/command, or catalog itself when the task defines none. The
// task format only declares them (runner/task checks their specs with the same
// tools.DefinedSpec that command.New builds them with). Entries are shared with catalog
// (see tools.Registry.With): call it once per scenario.
func Registry(catalog *tools.Registry, t *task.Task) (*tools.Registry, error) {
	if len(t.ToolsDefined) == 0 {
		return catalog, nil
	}
	extra := make([]tools.Tool, 0, len(t.ToolsDefined))
	for _, d := range t.ToolsDefined {
		tl, err := command.New(command.Def{Name: d.Name, Description: d.Description, Parameters: d.Parameters,
			Command: d.Command, Risk: tools.Risk(d.Risk), Timeout: d.Timeout, Dir: d.Dir, Files: d.Files})
		if err != nil {
			return nil, fmt.Errorf("%s: tools_defined: %w", d.Pos, err)
		}
		extra = append(extra, tl)
	}
	reg, err := catalog.With(extra...)
	if err != nil {
		return nil, fmt.Errorf("tools_defined: %w", err)
	}
	return reg, nil
}
