package kinds

import (
	"encoding/json"
	"fmt"
	"strings"
)

// NameCodex is Codex CLI's kind name.
const NameCodex = "codex"

// codexKind is OpenAI's Codex CLI (npm @openai/codex), run headless with `codex exec`: the
// prompt on stdin ("-"), JSON events on stdout, no approvals and no sandbox of its own
// (runner's is the boundary; Codex's own bwrap would nest inside it). It speaks only the
// Responses API, and only to a model provider defined in its configuration: the built-in
// one ignores OPENAI_BASE_URL for a Responses WebSocket to OpenAI's hosts, so the endpoint
// is passed as a provider in -c. The flags switching off analytics, plugins, apps, web
// search and the goal and sub-agent tools are the ones the wire capture showed to open
// connections or to add tools runner cannot serve (see docs/agents.md).
var codexKind = Kind{
	Name:     NameCodex,
	Help:     "Codex CLI (npm @openai/codex), headless: codex exec, OpenAI Responses to runner's endpoint",
	Program:  "codex",
	Package:  "@openai/codex",
	Install:  "npm install -g @openai/codex@" + codexTested,
	Protocol: ProtocolOpenAIResponses,
	Args: func(in Invocation) []string {
		provider := "{name=\"runner\",base_url=" + tomlString(strings.TrimSuffix(in.BaseURL, "/")+"/v1") +
			",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\",request_max_retries=1,stream_max_retries=1}"
		args := []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--ephemeral",
			"-c", `model_provider="runner"`,
			"-c", "model_providers.runner=" + provider,
			"-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false",
			"-c", "web_search=\"disabled\"",
			// The bundled skills' instructions name their directory under CODEX_HOME: a
			// cassette recorded under one home would miss under another. The task's own
			// skills (the workspace's .codex/skills) still load.
			"-c", "skills.bundled.enabled=false",
			"--disable", "plugins", "--disable", "apps", "--disable", "multi_agent", "--disable", "goals",
		}
		if in.ModelID != "" {
			args = append(args, "--model", in.ModelID)
		}
		if in.System != "" {
			args = append(args, "-c", "developer_instructions="+tomlString(in.System))
		}
		return append(args, "-") // the prompt on stdin
	},
	PromptOnStdin: true,
	Outcome:       codexOutcome,
	VersionArgs:   []string{"--version"},
	Tested:        codexTested,
	ToolsVisible:  true,
}

// codexTested is the version tests/agents/package.json pins.
const codexTested = "0.171.0"

func init() { register(codexKind) }

// tomlString quotes s as a TOML basic string (Codex parses -c values as TOML). JSON's
// string escapes (\" \\ \n \t \uXXXX ...) are all TOML escapes too.
func tomlString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// codexOutcome reads the JSON events: exit 0 ending in turn.completed is finished, with
// the last agent message as the summary; otherwise the reason is turn.failed's message.
func codexOutcome(code int, stdout []byte) Verdict {
	var ended, summary, failed string // ended: the last turn's end event
	eachEvent(stdout, func(line []byte) bool {
		var ev struct {
			Type  string `json:"type"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
			Item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
		}
		if json.Unmarshal(line, &ev) != nil {
			return true
		}
		switch {
		case (ev.Type == "turn.completed" || ev.Type == "turn.failed") && ended == "":
			ended, failed = ev.Type, ev.Error.Message
		case ev.Type == "item.completed" && ev.Item.Type == "agent_message" && summary == "":
			summary = ev.Item.Text
		}
		return ended == "" || summary == ""
	})
	switch {
	case code == 0 && ended == "turn.completed":
		return Verdict{Finished: true, Summary: summary}
	case ended == "turn.failed":
		return Verdict{Reason: fmt.Sprintf("codex exited with code %d: %s", code, strings.TrimSpace(failed))}
	case code == 0:
		return Verdict{Reason: "codex exited 0 without completing its turn"}
	}
	return ExitCode(code, stdout)
}
