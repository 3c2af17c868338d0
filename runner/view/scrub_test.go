package view

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/transcript"
)

// TestPagesHoldNoKnownSecret: a transcript written by an older runner (or before the
// secret was known) holds a credential this process knows; the pages runner view writes
// show [REDACTED] instead (SECURITY.md §6: the pages go through scrub.Output).
func TestPagesHoldNoKnownSecret(t *testing.T) {
	const secret = "sk-view-page-0123456789abcdef"
	out := t.TempDir()
	writeScenario(t, out, "leaky", result.Scenario{Name: "leaky", Status: result.Passed, Steps: 1}, [][2]any{
		{transcript.TypeStart, transcript.Start{Task: "leaky", Prompt: "the key is " + secret, MaxSteps: 5}},
		{transcript.TypeResponse, transcript.Response{Content: "I found " + secret}},
		{transcript.TypeEnd, transcript.End{Status: result.Passed}},
	})
	scrub.Add(secret)
	_, err := Write(out)
	assert.NilError(t, err)
	page, err := os.ReadFile(filepath.Join(out, "leaky", Page))
	assert.NilError(t, err)
	assert.Assert(t, !strings.Contains(string(page), secret), "the secret reached the page")
	assert.Assert(t, strings.Contains(string(page), scrub.Redacted))
}
