// Package complete provides task_complete, the tool an agent calls to say it is done.
// The agent loop recognises completion by the tool's name, so the tool itself only
// echoes the summary back; it never touches the workspace.
package complete

import (
	"context"
	"strings"

	"github.com/agentrunner/runner/tools"
)

// Name is the tool's canonical name; the agent loop compares call names against it.
const Name = "task_complete"

type tool struct{}

// New returns the task_complete tool.
func New() tools.Tool { return tool{} }

func (tool) Spec() tools.Spec {
	return tools.Spec{
		Name: Name,
		Description: "Mark the task as complete. Call this once, after the work is done and verified, " +
			"with a short summary of what you changed and how you checked it. Do not call other tools after it.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"summary": tools.String("What was done, which files changed, and how the result was verified."),
		}, "summary"),
		Risk: tools.RiskReadOnly,
	}
}

func (tool) Validate(args tools.Args, _ *tools.Workspace) *tools.Error {
	if strings.TrimSpace(args.String("summary")) == "" {
		return tools.Errorf(tools.CodeInvalidArgument,
			"Call task_complete again with a one or two sentence summary of the work.",
			"The summary is empty")
	}
	return nil
}

func (tool) Execute(_ context.Context, args tools.Args, _ *tools.Workspace) tools.Result {
	return tools.OK("Task marked complete.").WithMeta("summary", args.String("summary"))
}

func (tool) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }
