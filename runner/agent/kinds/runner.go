package kinds

// runnerKind is runner's own loop (runner/agent.Run): the default.
var runnerKind = Kind{
	Name:         NameRunner,
	Help:         "runner's built-in loop: the task's tools, approval policy and task_complete (the default)",
	Builtin:      true,
	ToolsVisible: true,
}

// NameRunner is the built-in loop's name.
const NameRunner = "runner"
