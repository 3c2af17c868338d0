package providers

import (
	"fmt"
	"slices"
	"strings"
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
	return fmt.Errorf("model %q: unknown provider %q (providers: %s)", spec, provider, strings.Join(Known, ", "))
}
