package kinds

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentrunner/runner/runner/bounded"
)

// NameClaudeCode is Claude Code's kind name.
const NameClaudeCode = "claude-code"

// claudeCodeKind is Anthropic's Claude Code (npm @anthropic-ai/claude-code), run headless
// with `claude -p`: the prompt on stdin, one JSON event a line on stdout (so a killed run
// keeps every finished event), no permission prompts (runner's sandbox is the boundary),
// no session files. It speaks Anthropic Messages to ANTHROPIC_BASE_URL. The flags and
// variables are the ones the wire capture showed to matter (see docs/agents.md).
var claudeCodeKind = Kind{
	Name:     NameClaudeCode,
	Help:     "Claude Code (npm @anthropic-ai/claude-code), headless: claude -p, Anthropic Messages to runner's endpoint",
	Program:  "claude",
	Package:  "@anthropic-ai/claude-code",
	Install:  "npm install -g @anthropic-ai/claude-code@" + claudeCodeTested,
	Protocol: ProtocolAnthropic,
	Args: func(in Invocation) []string {
		args := []string{"-p", "--output-format", "stream-json", "--verbose",
			"--dangerously-skip-permissions", "--no-session-persistence"}
		if in.ModelID != "" {
			args = append(args, "--model", in.ModelID)
		}
		if in.System != "" {
			// Appended, not replacing: the program's own prompt is part of what is tested.
			args = append(args, "--append-system-prompt", in.System)
		}
		return args
	},
	Env: func(in Invocation) map[string]string {
		return map[string]string{
			// As root it refuses --dangerously-skip-permissions unless told it is sandboxed,
			// which it is: by runner.
			"IS_SANDBOX": "1",
			// No telemetry, feature flags or connectivity probe (HEAD /api/hello): without
			// it the program looks up api.anthropic.com at start.
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
			"DISABLE_AUTOUPDATER":                      "1",
			"DISABLE_TELEMETRY":                        "1",
			"DISABLE_ERROR_REPORTING":                  "1",
			// Without it every HTTP 400 (max_steps, budget) is retried five more times with
			// beta features peeled off, and requests carry experimental betas.
			"CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "1",
			// runner's providers retry the real model; the program's own retries of a failing
			// endpoint (ten by default, with backoff) would only stretch the scenario.
			"CLAUDE_CODE_MAX_RETRIES": "1",
			// No auto-memory: its directory (under HOME) is named in the system prompt, so a
			// cassette recorded under one home would miss under another, and memories kept
			// across runs would let one scenario's run steer the next.
			"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
			// Any background call for a "small fast model" goes to the run's model too.
			"ANTHROPIC_SMALL_FAST_MODEL":    in.ModelID,
			"ANTHROPIC_DEFAULT_HAIKU_MODEL": in.ModelID,
		}
	},
	PromptOnStdin: true, // a prompt starting with "-" would be read as an option
	Outcome:       claudeCodeOutcome,
	VersionArgs:   []string{"--version"},
	Tested:        claudeCodeTested,
	ToolsVisible:  true,
}

// claudeCodeTested is the version tests/agents/package.json pins.
const claudeCodeTested = "2.1.332"

func init() { register(claudeCodeKind) }

// claudeCodeOutcome reads the run's last "result" event: exit 0 with is_error false is
// finished, and its result text is the summary; otherwise the reason is what it said
// (e.g. "API Error: 400 ...", a refused request past max_steps).
func claudeCodeOutcome(code int, stdout []byte) Verdict {
	var res struct {
		Type           string `json:"type"`
		Subtype        string `json:"subtype"`
		IsError        bool   `json:"is_error"`
		Result         string `json:"result"`
		TerminalReason string `json:"terminal_reason"`
	}
	found := false
	eachEvent(stdout, func(line []byte) bool {
		var ev struct {
			Type string `json:"type"`
		}
		found = json.Unmarshal(line, &ev) == nil && ev.Type == "result" && json.Unmarshal(line, &res) == nil
		return !found
	})
	switch {
	case !found && code == 0:
		return Verdict{Reason: "claude exited 0 without its result event"}
	case !found:
		return ExitCode(code, stdout)
	case code == 0 && !res.IsError:
		return Verdict{Finished: true, Summary: res.Result}
	}
	why := res.Result
	if why == "" {
		why = res.Subtype
	}
	if res.TerminalReason != "" {
		why += " (" + res.TerminalReason + ")"
	}
	return Verdict{Reason: fmt.Sprintf("claude exited with code %d: %s", code, why)}
}

// eachEvent calls f with stdout's lines that may be JSON events, last first, until f
// returns false. What an agent prints is the agent's: the lines are found in place (no
// slice of every line: 4 MiB of newlines made one of 96 MB, twice), and a line is handed
// on only once runner/bounded's scan, which allocates nothing, has found it within
// bounded.AgentOutput (no deeper than 64 levels), so no line costs the decoder more than
// its size.
func eachEvent(stdout []byte, f func(line []byte) bool) {
	for end := len(stdout); end > 0; {
		start := bytes.LastIndexByte(stdout[:end], '\n') + 1
		line := bytes.TrimSpace(stdout[start:end])
		end = max(start-1, 0)
		if len(line) == 0 || line[0] != '{' || bounded.JSON("stdout", line, bounded.AgentOutput) != nil {
			continue
		}
		if !f(line) {
			return
		}
	}
}
