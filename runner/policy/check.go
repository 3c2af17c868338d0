package policy

import (
	"fmt"

	"github.com/agentrunner/runner/tools"
)

// DeniedResult is the tool result the model receives for a denied call: code DENIED,
// who denied it and why, and what to try instead, e.g.
// "Error: run_in_terminal was denied by approval.rules[2] (nothing is deleted in this
// task). Try another approach that does not need this call." The metadata carries the
// decision's source and rule for the transcript.
func DeniedResult(d Decision, call *tools.Call) tools.Result {
	name := call.Name
	if name == "" {
		name = call.Tool
	}
	by := d.By
	if by == "" {
		by = "the approval policy"
	}
	msg := fmt.Sprintf("%s was denied by %s", name, by)
	if d.Reason != "" {
		msg += " (" + d.Reason + ")"
	}
	suggestion := d.Suggestion
	if suggestion == "" {
		suggestion = "Try another approach that does not need this call."
	}
	res := tools.Fail(&tools.Error{Code: tools.CodeDenied, Message: msg, Suggestion: suggestion}).
		WithMeta("policy_source", d.Source)
	if d.Rule != "" {
		res = res.WithMeta("policy_rule", d.Rule)
	}
	return res
}
