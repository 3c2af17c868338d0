package providers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentrunner/runner/runner/task"
)

// CheckName reports a PROVIDER:MODEL name whose provider is missing or unknown, without
// opening the model (no client is built, no file read): what a command checks of every
// name before it runs anything. Open reports the rest (a replay's cassette, the oracle's
// empty model name).
func CheckName(spec string) error {
	provider, _ := Split(spec)
	switch {
	case provider == "":
		return fmt.Errorf("no model given: use PROVIDER:MODEL, e.g. ollama:qwen3:4b (providers: %s)", strings.Join(Known, ", "))
	case slices.Contains(Known, provider):
		return nil
	case !strings.Contains(spec, ":"):
		return fmt.Errorf("model %q has no provider: use PROVIDER:MODEL, e.g. ollama:%s (providers: %s)",
			spec, spec, strings.Join(Known, ", "))
	}
	return unknownProvider(spec, provider)
}

// unknownProvider is the error for a name whose provider is not known, with a "did you
// mean": a misspelt provider (olama:) or an Ollama tag given bare (qwen3:4b).
func unknownProvider(spec, provider string) error {
	hint := ""
	if best := task.Closest(provider, Known); best != "" {
		hint = fmt.Sprintf("; did you mean %q?", best+strings.TrimPrefix(spec, provider))
	} else if _, model := Split(spec); model != "" && !strings.ContainsAny(model, ":/") {
		hint = fmt.Sprintf("; did you mean %q (an Ollama model NAME:TAG)?", "ollama:"+spec)
	}
	return fmt.Errorf("model %q: unknown provider %q%s (providers: %s)", spec, provider, hint, strings.Join(Known, ", "))
}
