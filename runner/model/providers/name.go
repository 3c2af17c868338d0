package providers

import (
	"fmt"
	"strings"

	"github.com/agentrunner/runner/runner/task"
)

// SplitList splits a comma-separated list of PROVIDER:MODEL names (--models a,b). A piece
// holding "=" but no ":" continues the name before it, so the options of
// oracle:fail=0.3,seed=1 stay one name. Blanks and repeats are dropped.
func SplitList(values ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range values {
		var names []string
		for _, piece := range strings.Split(v, ",") {
			piece = strings.TrimSpace(piece)
			if len(names) > 0 && strings.Contains(piece, "=") && !strings.Contains(piece, ":") {
				names[len(names)-1] += "," + piece
				continue
			}
			names = append(names, piece)
		}
		for _, n := range names {
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// CheckName reports a PROVIDER:MODEL name whose provider is missing or unknown, without
// opening the model (no client is built, no file read): what a command checks of every
// name before it runs anything. Open reports the rest (a replay's cassette, the oracle's
// reference).
func CheckName(spec string) error {
	provider, name := Split(spec)
	if err := checkProvider(spec, provider); err != nil {
		return err
	}
	if row, _ := Lookup(provider); row.CheckName != nil {
		if err := row.CheckName(name); err != nil {
			return fmt.Errorf("model %q: %w", spec, err)
		}
	}
	return nil
}

// checkProvider reports a name whose provider is missing or unknown.
func checkProvider(spec, provider string) error {
	_, known := Lookup(provider)
	switch {
	case provider == "":
		return fmt.Errorf("no model given: use PROVIDER:MODEL, e.g. ollama:qwen3:4b (providers: %s)", strings.Join(Names(), ", "))
	case known:
		return nil
	case !strings.Contains(spec, ":"):
		return fmt.Errorf("model %q has no provider: use PROVIDER:MODEL, e.g. ollama:%s (providers: %s)",
			spec, spec, strings.Join(Names(), ", "))
	}
	return unknownProvider(spec, provider)
}

// unknownProvider is the error for a name whose provider is not known, with a "did you
// mean": a misspelt provider (olama:) or an Ollama tag given bare (qwen3:4b).
func unknownProvider(spec, provider string) error {
	hint := ""
	if best := task.Closest(provider, Names()); best != "" {
		hint = fmt.Sprintf("; did you mean %q?", best+strings.TrimPrefix(spec, provider))
	} else if _, model := Split(spec); model != "" && !strings.ContainsAny(model, ":/") {
		hint = fmt.Sprintf("; did you mean %q (an Ollama model NAME:TAG)?", "ollama:"+spec)
	}
	return fmt.Errorf("model %q: unknown provider %q%s (providers: %s)", spec, provider, hint, strings.Join(Names(), ", "))
}
