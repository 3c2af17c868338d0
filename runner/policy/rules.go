package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
)

// rule is a compiled approval rule.
type rule struct {
	// ref is the short name: approval.rules[2], or "ask: always" for a rule the user added.
	ref string
	// desc is the printable rule with its position.
	desc string
	// tool is a canonical name or a glob; "" matches every tool.
	tool   string
	glob   bool
	match  *regexp.Regexp
	allow  bool
	reason string
	// user marks a rule added by an "always" answer: its decisions are the user's.
	user bool
}

// matches reports whether the rule applies to call, whose arguments are args (canonical).
func (r *rule) matches(call *tools.Call, args string) bool {
	if r.tool != "" {
		if r.glob {
			okTool, _ := path.Match(r.tool, call.Tool)
			okName, _ := path.Match(r.tool, call.Name)
			if !okTool && !okName {
				return false
			}
		} else if r.tool != call.Tool && r.tool != call.Name {
			return false
		}
	}
	return r.match == nil || r.match.MatchString(args)
}

// describeRule prints a rule the way a task file would write it:
// approval.rules[1] {tool: run_in_terminal, match: '...', action: allow} (task.yaml:12:7).
func describeRule(i int, r task.Rule) string {
	var parts []string
	if r.Tool != "" {
		parts = append(parts, "tool: "+r.Tool)
	}
	if r.Match != "" {
		parts = append(parts, "match: '"+strings.ReplaceAll(r.Match, "'", "''")+"'")
	}
	parts = append(parts, "action: "+r.Action)
	s := fmt.Sprintf("approval.rules[%d] {%s}", i, strings.Join(parts, ", "))
	if r.Pos.Line > 0 {
		s += fmt.Sprintf(" (%s:%d:%d)", r.Pos.File, r.Pos.Line, r.Pos.Column)
	}
	return s
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// CanonicalArgs renders arguments the way approval rules and tool_called assertions
// match them: compact JSON, keys sorted at every level, no HTML escaping (so < > & stay
// as they are), no trailing newline.
func CanonicalArgs(args tools.Args) string {
	if args == nil {
		return "{}"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any(args)); err != nil {
		// Arguments decoded from JSON always encode; anything else is shown, not lost.
		return fmt.Sprintf("%v", map[string]any(args))
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// CanonicalRaw is CanonicalArgs of a call's arguments as sent, or the text as it came
// when it does not decode to arguments (what result.Call.Args records, for tool_called).
func CanonicalRaw(raw json.RawMessage) string {
	if args, err := tools.DecodeArgs(raw); err == nil {
		return CanonicalArgs(args)
	}
	return string(raw)
}
