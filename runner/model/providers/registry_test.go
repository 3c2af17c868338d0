package providers

import (
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/scrub"
)

// TestRegistryRows checks what every row must give: a help line, a parser the textcall
// registry knows, and a constructor; Ollama's small models get the text parser, and only
// replay's answers are a recording's.
func TestRegistryRows(t *testing.T) {
	assert.Assert(t, slices.IsSortedFunc(Registry, func(a, b Provider) int { return strings.Compare(a.Name, b.Name) }))
	for _, p := range Registry {
		assert.Assert(t, p.Help != "", p.Name)
		assert.NilError(t, textcall.Check(p.Parser), p.Name)
		assert.Assert(t, p.Parser != "", p.Name)
		assert.Assert(t, p.New != nil, p.Name)
		assert.Equal(t, p.Recorded, p.Name == "replay", p.Name)
		for _, e := range p.Env {
			assert.Assert(t, strings.Contains(EnvHelp(""), e.Name), "%s: %s", p.Name, e.Name)
		}
		for _, v := range p.variables() {
			assert.Assert(t, slices.Contains(scrub.ProviderVariables(), v), "%s: %s is not scrubbed", p.Name, v)
		}
	}
	ollama, _ := Lookup("ollama")
	assert.Equal(t, ollama.Parser, textcall.Auto)
	openai, _ := Lookup("openai")
	assert.Equal(t, openai.Parser, textcall.Native)
	assert.Check(t, slices.Contains(scrub.ProviderVariables(), "GOOGLE_API_KEY"), "Gemini's other name for its key")
}
