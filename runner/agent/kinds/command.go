package kinds

// commandKind is any program the task names (agent: {command: "..."}), run by /bin/sh in
// the workspace: the prompt on stdin and in $RUNNER_PROMPT, the endpoint in
// OPENAI_BASE_URL and ANTHROPIC_BASE_URL, a per-run token in OPENAI_API_KEY and
// ANTHROPIC_API_KEY, the model in RUNNER_MODEL; exit 0 finished, anything else gave up.
var commandKind = Kind{
	Name:          NameCommand,
	Help:          "any program, as agent: {command: \"...\"}: run by sh in the workspace, the prompt on stdin, the endpoint in OPENAI_BASE_URL and ANTHROPIC_BASE_URL; exit 0 finished",
	Program:       "sh",
	Protocol:      ProtocolAny,
	Args:          func(in Invocation) []string { return []string{"-c", in.Command} },
	PromptOnStdin: true,
	ToolsVisible:  true,
}

// NameCommand is the command kind's name.
const NameCommand = "command"
