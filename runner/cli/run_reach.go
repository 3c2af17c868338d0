package cli

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
)

// ReachOptions are the flags of `runner run` that change how models are reached: record
// and replay cassettes, and the parser of tool calls written as text.
type ReachOptions struct {
	// Record and Replay are cassette directories (--record, --replay).
	Record, Replay string
	// ToolCallParser overrides every task's tool_call_parser.
	ToolCallParser string
}

func (o *ReachOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "record", Destination: &o.Record, Usage: "store every model response in the cassette `DIR`"},
		&cli.StringFlag{Name: "replay", Destination: &o.Replay, Usage: "answer every model request from the cassette `DIR` (no server)"},
		&cli.StringFlag{Name: "tool-call-parser", Destination: &o.ToolCallParser, Usage: "read tool calls written as text: `MODE` " + session.ParserChoices(), DefaultText: "the task's, else auto for ollama"},
	}
}

// check reports a flag value that cannot work with the run's --model, as a usage error.
func (o ReachOptions) check(model string) error {
	if err := session.CheckParser(o.ToolCallParser); err != nil {
		return usageError("run: --tool-call-parser: %v", err)
	}
	if o.Record != "" && (o.Replay != "" || strings.HasPrefix(strings.ToLower(model), "replay:")) {
		return usageError("run: --record cannot be combined with a replay")
	}
	return nil
}

// open adds the options to the ones models are opened with.
func (o ReachOptions) open(p session.ModelOptions) session.ModelOptions {
	p.Record, p.Replay, p.ToolCallParser = o.Record, o.Replay, o.ToolCallParser
	return p
}
