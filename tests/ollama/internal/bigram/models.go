package bigram

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// Variant is one Ollama model made from a GGUF of the shared model: a name, a template,
// the GGUF's shape ("" is tiny, else a key of Shapes) and Modelfile parameters.
type Variant struct {
	Name     string
	Template string
	Shape    string
	Params   map[string]string
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
	{Name: "bigram", Template: chatTemplate(true, true, MarkerUser)},
	// No .ToolCalls block: Ollama returns the call as text; runner's text parser reads it.
	{Name: "bigram-text", Template: chatTemplate(false, true, MarkerUser)},
	// No .Tools: a model without the tools capability.
	{Name: "bigram-notools", Template: chatTemplate(false, false, MarkerNone)},
	// Calls a tool the request does not offer: Ollama drops the call and answers "".
	{Name: "bigram-badtool", Template: chatTemplate(true, true, MarkerBad)},
	// Runs `sleep 3` first: time to stop the server between two steps.
	{Name: "bigram-sleep", Template: chatTemplate(true, true, MarkerSleep)},
	// The native model with a real model's structure and a 32k vocabulary (Shapes).
	Shaped("small"),
	// The native model forced onto the CPU (num_gpu 0): flagged by runner bench on a
	// machine with a GPU.
	{Name: "bigram-cpu", Template: chatTemplate(true, true, MarkerUser), Params: map[string]string{"num_gpu": "0"}},
}

// Shaped is the native model in a named shape (a key of Shapes), named bigram-SHAPE.
func Shaped(shape string) Variant {
	return Variant{Name: "bigram-" + shape, Template: chatTemplate(true, true, MarkerUser), Shape: shape}
}

// GGUFName is the tiny model file's name in the directory Write fills; a shaped one is
// bigram-SHAPE.gguf.
const GGUFName = "bigram.gguf"

// GGUFFile is the file name of a shape's GGUF.
func GGUFFile(shape string) string {
	if shape == "" || shape == "tiny" {
		return GGUFName
	}
	return "bigram-" + shape + ".gguf"
}

// Write writes the GGUF of each shape the variants use, once, and one Modelfile per
// variant (NAME.Modelfile) into dir.
func Write(dir string, variants []Variant) error {
	written := map[string]bool{}
	for _, v := range variants {
		gguf := filepath.Join(dir, GGUFFile(v.Shape))
		if !written[gguf] {
			shape, ok := Shapes[v.Shape]
			if !ok && v.Shape != "" {
				return fmt.Errorf("bigram: no shape %q (known: %s)", v.Shape, strings.Join(ShapeNames(), ", "))
			}
			if err := Default.WriteShapedGGUF(gguf, shape); err != nil {
				return err
			}
			written[gguf] = true
		}
		var params strings.Builder
		for _, k := range slices.Sorted(maps.Keys(v.Params)) {
			fmt.Fprintf(&params, "PARAMETER %s %s\n", k, v.Params[k])
		}
		mf := fmt.Sprintf("FROM %s\nTEMPLATE \"\"\"%s\"\"\"\n%s", gguf, v.Template, params.String())
		if err := os.WriteFile(filepath.Join(dir, v.Name+".Modelfile"), []byte(mf), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ShapeNames lists the named shapes, sorted.
func ShapeNames() []string { return slices.Sorted(maps.Keys(Shapes)) }
