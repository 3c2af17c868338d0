package session

import (
	"sort"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
	"github.com/agentrunner/runner/tools/format"
)

// Tool is one tool of the catalog as `runner tools` shows it: its JSON form is
// --format json's.
type Tool struct {
	Name        string `json:"name"`
	Risk        string `json:"risk"`
	Description string `json:"description"`
	Parameters  any    `json:"parameters"`
	// Params are the parameters' names, sorted, a required one marked "*"; Aliases the
	// other names a model may call it by.
	Params  []string `json:"-"`
	Aliases []string `json:"-"`
}

// Tools lists the catalog's tools, or the named ones (a name that is no tool is the
// error), in the catalog's order.
func Tools(names []string) ([]Tool, error) {
	reg, err := toolset(names)
	if err != nil {
		return nil, err
	}
	byTarget := map[string][]string{}
	for _, a := range reg.Aliases() {
		byTarget[a.Target] = append(byTarget[a.Target], a.Name)
	}
	specs := reg.Specs()
	out := make([]Tool, 0, len(specs))
	for _, s := range specs {
		t := Tool{Name: s.Name, Risk: string(s.Risk), Description: s.Description, Parameters: s.Parameters, Aliases: byTarget[s.Name]}
		for name := range s.Parameters.Properties {
			if contains(s.Parameters.Required, name) {
				name += "*"
			}
			t.Params = append(t.Params, name)
		}
		sort.Strings(t.Params)
		out = append(out, t)
	}
	return out, nil
}

// RenderTools is the catalog's tools, or the named ones, as a provider's tool definitions
// (format: openai, anthropic, gemini or ollama; another is the error).
func RenderTools(provider string, names []string) (any, error) {
	reg, err := toolset(names)
	if err != nil {
		return nil, err
	}
	return format.Render(provider, reg.Specs())
}

func toolset(names []string) (*tools.Registry, error) {
	reg := catalog.Default()
	if len(names) == 0 {
		return reg, nil
	}
	return reg.Subset(names...)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
