package bigram

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Markers: the template ends the prompt with one, chosen by the conversation's state.
const (
	MarkerNone   = "<|m_none|>"   // no tools offered
	MarkerUser   = "<|m_user|>"   // tools, a user turn last: write hello.txt
	MarkerResult = "<|m_result|>" // a tool result last: task_complete
	MarkerBad    = "<|m_bad|>"    // a call to a tool no request offers
	MarkerSleep  = "<|m_sleep|>"  // a 3-second command, to stop the server meanwhile
)

// The file the answer writes, and the summary it completes with.
const (
	File        = "hello.txt"
	FileContent = "hello, world\n"
	Summary     = "Wrote hello.txt with hello."
	// NoToolsAnswer is the text answer when the request offers no tools.
	NoToolsAnswer = "I have no tools, so I cannot do this task."
	// BadTool is the tool MarkerBad's answer calls.
	BadTool = "deploy_to_production"
)

// Default is the model every variant shares. Each piece is one token, so a token limit of
// 1 (num_predict) stops the model inside a call. Pieces differ in whitespace where two
// chains would otherwise share a token (a token has one successor).
var Default = Model{Chains: []Chain{
	{MarkerNone, []string{NoToolsAnswer}},
	{MarkerUser, []string{"<tool_call>", "\n" + `{"name": "write_file", "arguments": {"path": "hello.txt", "content": "hello, world\n"}}`, "\n</tool_call>"}},
	{MarkerResult, []string{"<tool_call>\n", `{"name": "task_complete", "arguments": {"summary": "Wrote hello.txt with hello."}}`, "</tool_call>"}},
	{MarkerBad, []string{"<tool_call> ", `{"name": "` + BadTool + `", "arguments": {}}`, " </tool_call>"}},
	{MarkerSleep, []string{"<tool_call>  ", `{"name": "run_in_terminal", "arguments": {"command": "sleep 3"}}`, "  </tool_call>"}},
}}

// Variant is one Ollama model made from the shared GGUF: a name and a template.
type Variant struct {
	Name     string
	Template string
}

// chatTemplate builds a chat template: the conversation as text, then the marker for its
// state. native renders assistant calls in a .ToolCalls block (from which Ollama learns
// the <tool_call> tag and parses calls); tools makes the template use .Tools (Ollama's
// "tools" capability); user is the marker when a user turn is last.
func chatTemplate(native, tools bool, user string) string {
	var b strings.Builder
	b.WriteString(`{{- $last := "" }}{{- range .Messages }}{{ $last = .Role }}<|{{ .Role }}|>{{ .Content }}`)
	if native {
		b.WriteString(`{{- if .ToolCalls }}<tool_call>{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}{{ end }}</tool_call>{{ end }}`)
	}
	b.WriteString("\n{{ end }}")
	if tools {
		fmt.Fprintf(&b, `{{- if not .Tools }}%s{{ else if eq $last "tool" }}%s{{ else }}%s{{ end }}`, MarkerNone, MarkerResult, user)
	} else {
		b.WriteString(MarkerNone)
	}
	return b.String()
}

// Variants are the models the suite creates.
var Variants = []Variant{
	// Native tool calls: Ollama parses them into tool_calls.
	{"bigram", chatTemplate(true, true, MarkerUser)},
	// No .ToolCalls block: Ollama returns the call as text; runner's text parser reads it.
	{"bigram-text", chatTemplate(false, true, MarkerUser)},
	// No .Tools: a model without the tools capability.
	{"bigram-notools", chatTemplate(false, false, MarkerNone)},
	// Calls a tool the request does not offer: Ollama drops the call and answers "".
	{"bigram-badtool", chatTemplate(true, true, MarkerBad)},
	// Runs `sleep 3` first: time to stop the server between two steps.
	{"bigram-sleep", chatTemplate(true, true, MarkerSleep)},
}

// GGUFName is the model file's name in the directory Write fills.
const GGUFName = "bigram.gguf"

// Write writes the GGUF and one Modelfile per variant (NAME.Modelfile) into dir.
func Write(dir string) error {
	gguf := filepath.Join(dir, GGUFName)
	if err := Default.WriteGGUF(gguf); err != nil {
		return err
	}
	for _, v := range Variants {
		mf := fmt.Sprintf("FROM %s\nTEMPLATE \"\"\"%s\"\"\"\n", gguf, v.Template)
		if err := os.WriteFile(filepath.Join(dir, v.Name+".Modelfile"), []byte(mf), 0o644); err != nil {
			return err
		}
	}
	return nil
}
