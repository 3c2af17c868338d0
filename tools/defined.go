package tools

import "fmt"

// ServerSeparator joins a tool server's name and its tool's name into the name the agent
// calls (weather__forecast: an MCP server's tool, tools/mcp). It is reserved for them: no
// other tool's name may contain it.
const ServerSeparator = "__"

// DefinedSpec is the spec of a tool defined by data rather than code (a task file's
// tools_defined, which tools/command runs): no parameters unless given, dangerous unless
// a risk is given. It refuses a name providers do not accept, parameters that are not a
// JSON Schema object or do not convert to one, and an unknown risk. The loader of task
// files checks a definition with it, and tools/command builds its tool's spec with it, so
// what loads is what runs.
func DefinedSpec(name, description string, params map[string]any, risk Risk) (Spec, error) {
	if !ValidName(name) {
		return Spec{}, fmt.Errorf("tool name %q: want letters, digits, _ and -, at most 64", name)
	}
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if params["type"] != "object" {
		return Spec{}, fmt.Errorf("tool %s: parameters must be a JSON Schema with type object", name)
	}
	schema, err := RawSchema(params)
	if err != nil {
		return Spec{}, fmt.Errorf("tool %s: %w", name, err)
	}
	switch risk {
	case "":
		risk = RiskDangerous
	case RiskReadOnly, RiskSafeWrite, RiskDangerous:
	default:
		return Spec{}, fmt.Errorf("tool %s: unknown risk %q", name, risk)
	}
	return Spec{Name: name, Description: description, Parameters: schema, Risk: risk}, nil
}
