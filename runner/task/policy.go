package task

import (
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/agentrunner/runner/tools"
)

// Values of the enumerated keys.
var (
	approvalModes = ApprovalModeNames()
	actions       = []string{"allow", "deny"}
)

var (
	approvalFields    = keysOf(Approval{})
	ruleFields        = keysOf(Rule{})
	commandRuleFields = keysOf(CommandRule{})
	limitFields       = keysOf(tools.Limits{})
	// limitMax bounds each limit: Linux's PID_MAX_LIMIT for processes, 2^40 MiB (1 EiB)
	// for sizes, whose conversion to bytes must fit an int64, and a century of CPU time.
	limitMax = map[string]int{"processes": 4194304, "memory_mb": 1 << 40, "file_size_mb": 1 << 40, "cpu_seconds": 100 * 365 * 24 * 3600}
)

// enum decodes a string that must be one of allowed.
func (d *decoder) enum(n ast.Node, field string, allowed []string) (string, bool) {
	s, ok := d.str(n, field)
	if !ok {
		return "", false
	}
	if !contains(allowed, s) {
		d.fail(n, field, "invalid value %q%s", s, hintAndList(s, allowed, "want one of"))
		return "", false
	}
	return s, true
}

// choice decodes a string that must be one of allowed, a list the runtime gives
// (LoadOptions); nil allows any string.
func (d *decoder) choice(n ast.Node, field string, allowed []string) (string, bool) {
	if allowed == nil {
		return d.str(n, field)
	}
	return d.enum(n, field, allowed)
}

// regex decodes a non-empty Go regular expression, reporting the parser's message.
func (d *decoder) regex(n ast.Node, field string) (string, bool) {
	s, ok := d.nonEmpty(n, field)
	if !ok {
		return "", false
	}
	if _, err := regexp.Compile(s); err != nil {
		d.failErr(n, field, err, "invalid regex: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return "", false
	}
	return s, true
}

// approval decodes the shorthand (approval: rules) or the block {mode, default, rules}.
func (l *loader) approval(n ast.Node, field string) {
	d, a := l.d, &l.t.Approval
	l.approvalAt = n
	r, _, ok := d.resolve(n, field)
	if !ok {
		return
	}
	switch r.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	case *ast.SequenceNode:
		d.fail(r, field, "expected a mode (%s) or a mapping with mode, default and rules, got a list", strings.Join(approvalModes, ", "))
		return
	default:
		if m, ok := d.enum(r, field, approvalModes); ok {
			a.Mode = m
		}
		return
	}
	d.object(r, field, approvalFields, func(e entry, f string) {
		switch e.key {
		case "mode":
			if m, ok := d.enum(e.value, f, approvalModes); ok {
				a.Mode = m
			}
		case "default":
			a.Default, _ = d.enum(e.value, f, actions)
		case "rules":
			l.approvalAt = e.keyAt
			items, _ := d.items(e.value, f)
			for i, it := range items {
				a.Rules = append(a.Rules, l.rule(it, index(f, i)))
			}
		}
	})
}

func (l *loader) rule(n ast.Node, field string) Rule {
	d := l.d
	r := Rule{Pos: d.posOf(n)}
	var expiresText string
	present := d.object(n, field, ruleFields, func(e entry, f string) {
		switch e.key {
		case "tool":
			if s, ok := d.nonEmpty(e.value, f); ok {
				r.Tool = s
				l.ruleTool(e.value, f, s)
			}
		case "match":
			r.Match, _ = d.regex(e.value, f)
		case "action":
			r.Action, _ = d.enum(e.value, f, actions)
		case "reason":
			r.Reason, _ = d.str(e.value, f)
		case "expires":
			if s, ok := d.str(e.value, f); ok {
				if at, ok := parseDate(s); ok {
					r.Expires, expiresText = &at, s
				} else {
					d.fail(e.value, f, "invalid date %q: want YYYY-MM-DD or RFC 3339 like 2027-01-01T12:00:00Z", s)
				}
			}
		case "disabled":
			r.Disabled, _ = d.boolean(e.value, f)
		}
	})
	d.require(n, field, present, "action")
	switch {
	case r.Disabled:
		d.warn(n, field, "rule disabled, skipped")
	case r.Expires != nil && !l.opts.Now.Before(*r.Expires):
		d.warn(n, field, "rule expired on %s, skipped", expiresText)
	}
	return r
}

// ruleTool checks a rule's tool: a glob must be well formed (and should match some known
// tool), a plain name must be a known tool or alias. The name is kept as written, since
// the policy matches names, aliases and globs.
func (l *loader) ruleTool(n ast.Node, field, name string) {
	if !strings.ContainsAny(name, "*?[") {
		l.tool(n, field, name)
		return
	}
	if _, err := path.Match(name, ""); err != nil {
		l.d.failErr(n, field, err, "invalid glob %q: %v", name, err)
		return
	}
	if len(l.opts.ToolNames) == 0 {
		return
	}
	for _, t := range l.toolNames() {
		if ok, _ := path.Match(name, t); ok {
			return
		}
	}
	l.d.warn(n, field, "pattern %q matches no known tool", name)
}

// parseDate accepts a date (midnight UTC: the rule is expired from that day on) or an
// RFC 3339 time.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// approvalDefaults fills the default action and warns about rules that no mode reads.
func (l *loader) approvalDefaults() {
	a := &l.t.Approval
	switch a.Mode {
	case ModeRules, ModeAsk:
		if a.Default == "" {
			a.Default = "deny"
		}
	default:
		if len(a.Rules) > 0 {
			l.d.warn(l.approvalAt, "approval.rules", "rules apply only when the mode is rules or ask (in the file or by an override); mode is %s", a.Mode)
		}
	}
}

func (l *loader) commandRules(n ast.Node, field string) {
	d := l.d
	items, _ := d.items(n, field)
	for i, it := range items {
		f := index(field, i)
		r := CommandRule{Pos: d.posOf(it)}
		present := d.object(it, f, commandRuleFields, func(e entry, f string) {
			switch e.key {
			case "match":
				r.Match, _ = d.regex(e.value, f)
			case "action":
				r.Action, _ = d.enum(e.value, f, actions)
			case "reason":
				r.Reason, _ = d.str(e.value, f)
			}
		})
		d.require(it, f, present, "match", "action")
		l.t.CommandRules = append(l.t.CommandRules, r)
	}
}

func (l *loader) sandbox(n ast.Node, field string) {
	if s, ok := l.d.choice(n, field, l.opts.SandboxModes); ok {
		l.t.Sandbox = s
	}
}

func (l *loader) limits(n ast.Node, field string) {
	d, lim := l.d, &l.t.Limits
	d.object(n, field, limitFields, func(e entry, f string) {
		v, ok := d.atLeast(e.value, f, 0)
		if max := limitMax[e.key]; ok && v > max {
			// Past the kernel's own bounds every command would fail (pids.max refuses the
			// value; MiB to bytes overflows): say so here, at the line, not at run time.
			d.fail(e.value, f, "must be at most %d, got %d", max, v)
			return
		}
		switch e.key {
		case "cpu_seconds":
			lim.CPUSeconds = v
		case "memory_mb":
			lim.MemoryMB = v
		case "file_size_mb":
			lim.FileSizeMB = v
		case "processes":
			lim.Processes = v
		}
	})
}
