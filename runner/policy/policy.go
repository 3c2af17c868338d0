// Package policy decides, call by call, whether the agent may use a tool. Nobody is at
// the keyboard in CI, so a decision never waits unless a terminal is attached and the
// mode is ask; every decision says which mode, rule or default made it, and a denied
// call reaches the model as a DENIED result with a reason and a suggestion.
//
// Modes (task file approval.mode):
//   - auto: every listed tool runs, except calls that need approval (below); rules are
//     consulted only for those.
//   - read-only: only tools whose risk is read_only run.
//   - rules: the first enabled, unexpired rule that matches decides; otherwise default.
//   - ask: like rules, but a call no rule decides is put to the user when a terminal is
//     attached (answers y, n, always); without one, default decides and nothing waits.
//
// A rule expires at the start of its expires date (as the task decoder parsed it):
// from then on it is skipped with a warning, like a disabled rule.
//
// Dynamic approval: a call for which call.RequiresApproval is true (an overwrite, a
// delete, an overwriting move) needs approval even when the mode allows the tool. In
// auto mode such a call goes to the rules and then to default; in rules and ask mode
// every call does anyway. default itself defaults to allow in auto mode, so plain auto
// still runs everything, and to deny in rules and ask mode; `mode: auto, default: deny`
// therefore means "everything except overwrites and deletes, unless a rule allows them".
//
// task_complete is always allowed, in every mode.
//
// Command rules (package command) come first for run_in_terminal and run_code (bash):
// a line they deny is denied in every mode, auto included.
package policy

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/policy/command"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/complete"
)

// Decision sources: what made a decision.
const (
	SourceMode               = "mode"
	SourceRule               = "rule"
	SourceDefault            = "default"
	SourceCommandRule        = command.SourceTaskRule
	SourceBuiltinCommandRule = command.SourceBuiltin
	SourceUser               = "user"
)

// Tool names whose command lines the command rules check.
const (
	toolTerminal = "run_in_terminal"
	toolRunCode  = "run_code"
)

// Decision is the outcome for one call, recorded in the transcript: a record, so it lives
// in runner/result, where the transcript's events can hold it.
type Decision = result.Decision

// Options configure a Policy.
type Options struct {
	// Now is the time rule expiry is judged against; zero means time.Now().
	Now time.Time
	// Asker puts calls to a person in ask mode; nil means no terminal.
	Asker Asker
	// WorkspaceDir is the workspace for command rules; empty means ws.Dir() of each call.
	WorkspaceDir string
	// Home is what ~ and $HOME mean to command rules; empty means the user's home.
	Home string
	// Resolve maps a rule's tool name (possibly an alias) to the canonical name.
	Resolve func(name string) (canonical string, ok bool)
	// NoBuiltinCommandRules turns the built-in command deny list off.
	NoBuiltinCommandRules bool
}

// Policy decides tool calls. It is safe for concurrent use.
type Policy struct {
	mode     string
	deflt    bool // default allows
	rules    []*rule
	cmdRules []command.Rule
	opts     Options
	warnings []string

	mu    sync.Mutex
	added []*rule // "always" answers, checked after the task's rules

	askMu sync.Mutex // one question on the terminal at a time
}

// New builds a policy from a task's approval block and command rules. Disabled and
// expired rules are skipped with a warning (see Warnings); bad modes, actions and
// regexes are errors.
func New(a task.Approval, commandRules []task.CommandRule, opts Options) (*Policy, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	p := &Policy{mode: a.Mode, opts: opts}
	var errs []error
	if a.Mode == "" {
		p.mode = task.ModeAuto
	}
	if err := task.CheckApprovalMode(a.Mode); err != nil {
		errs = append(errs, fmt.Errorf("approval.mode: %w", err))
	}
	switch a.Default {
	case "":
		p.deflt = p.mode == task.ModeAuto
	case "allow":
		p.deflt = true
	case "deny":
	default:
		errs = append(errs, fmt.Errorf("approval.default %q: want allow or deny", a.Default))
	}
	if p.mode == task.ModeReadOnly && len(a.Rules) > 0 {
		p.warnings = append(p.warnings, "approval.rules are ignored in read-only mode")
	}
	for i, r := range a.Rules {
		cr, warn, err := p.compile(i, r)
		if err != nil {
			errs = append(errs, err)
		}
		if warn != "" {
			p.warnings = append(p.warnings, warn)
		}
		if cr != nil {
			p.rules = append(p.rules, cr)
		}
	}
	cmdRules, err := command.CompileRules(commandRules)
	if err != nil {
		errs = append(errs, err)
	}
	p.cmdRules = cmdRules
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("approval policy: %w", err)
	}
	return p, nil
}

// compile checks one rule; a nil rule with no error means it is skipped.
func (p *Policy) compile(i int, r task.Rule) (*rule, string, error) {
	desc := describeRule(i, r)
	ref := fmt.Sprintf("approval.rules[%d]", i)
	cr := &rule{ref: ref, desc: desc, tool: r.Tool, reason: r.Reason}
	switch r.Action {
	case "allow":
		cr.allow = true
	case "deny":
	default:
		return nil, "", fmt.Errorf("%s: action %q: want allow or deny", ref, r.Action)
	}
	if r.Match != "" {
		re, err := regexp.Compile(r.Match)
		if err != nil {
			return nil, "", fmt.Errorf("%s: match %q: %w", ref, r.Match, err)
		}
		cr.match = re
	}
	if r.Disabled {
		return nil, desc + " is disabled; skipped", nil
	}
	if r.Expires != nil && !p.opts.Now.Before(*r.Expires) {
		return nil, fmt.Sprintf("%s expired on %s; skipped", desc, r.Expires.Format("2006-01-02")), nil
	}
	var warn string
	switch {
	case r.Tool == "":
	case isGlob(r.Tool):
		if _, err := path.Match(r.Tool, ""); err != nil {
			return nil, "", fmt.Errorf("%s: tool %q: %w", ref, r.Tool, err)
		}
		cr.glob = true
	case p.opts.Resolve != nil:
		if canonical, ok := p.opts.Resolve(r.Tool); ok {
			cr.tool = canonical
		} else {
			warn = fmt.Sprintf("%s: tool %q is not a known tool or alias; the rule matches nothing", desc, r.Tool)
		}
	}
	return cr, warn, nil
}

// Warnings lists what New skipped or found suspicious, for the console and transcript.
func (p *Policy) Warnings() []string { return append([]string(nil), p.warnings...) }

// Mode returns the approval mode in effect.
func (p *Policy) Mode() string { return p.mode }

// Decide decides one prepared call. It never blocks unless the mode is ask and an Asker
// is set, and then only until the user answers or ctx ends. ws may be nil (a dry check):
// a call whose tool cannot tell without a workspace counts as needing approval.
func (p *Policy) Decide(ctx context.Context, call *tools.Call, ws *tools.Workspace) Decision {
	if call.Tool == complete.Name {
		// Ending the run touches nothing; denying it would only turn a finished run into
		// a max_steps failure.
		return Decision{Allowed: true, Source: SourceMode, By: "the approval policy",
			Reason: complete.Name + " is always allowed"}
	}
	if d, ok := p.checkCommand(call, ws); ok {
		return d
	}
	switch p.mode {
	case task.ModeReadOnly:
		if call.Risk() == tools.RiskReadOnly {
			return Decision{Allowed: true, Source: SourceMode, By: "approval mode read-only",
				Reason: call.Tool + " is a read_only tool"}
		}
		return Decision{Source: SourceMode, By: "approval mode read-only",
			Reason:     fmt.Sprintf("%s is a %s tool and only read_only tools run in read-only mode", call.Tool, call.Risk()),
			Suggestion: "Use only tools that read, list or search; this task does not allow changes."}
	case task.ModeAuto:
		if !needsApproval(call, ws) {
			return Decision{Allowed: true, Source: SourceMode, By: "approval mode auto",
				Reason: "auto mode runs every listed tool"}
		}
		if d, ok := p.byRules(call, ws); ok {
			return d
		}
		return p.byDefault(call, true)
	}
	if d, ok := p.byRules(call, ws); ok {
		return d
	}
	if p.mode == task.ModeAsk && p.opts.Asker != nil {
		return p.ask(ctx, call, ws)
	}
	return p.byDefault(call, needsApproval(call, ws))
}

// checkCommand applies command rules to run_in_terminal and run_code (bash). It returns
// ok only for a denial.
func (p *Policy) checkCommand(call *tools.Call, ws *tools.Workspace) (Decision, bool) {
	var line, cwd string
	switch call.Tool {
	case toolTerminal:
		line, cwd = call.Args.String("command"), call.Args.String("cwd")
	case toolRunCode:
		switch strings.ToLower(call.Args.String("language")) {
		case "bash", "sh", "shell":
		default:
			return Decision{}, false // Python is not shell: there is nothing to parse.
		}
		line = call.Args.String("code")
	default:
		return Decision{}, false
	}
	wsDir := p.opts.WorkspaceDir
	if wsDir == "" && ws != nil {
		wsDir = ws.Dir()
		if ws.Mount != "" {
			wsDir = ws.Mount // in a task's container the commands see the workspace there
		}
	}
	v := command.Check(line, command.Options{Rules: p.cmdRules, Workspace: wsDir, Cwd: cwd,
		Home: p.opts.Home, NoBuiltins: p.opts.NoBuiltinCommandRules})
	if v.Allowed {
		return Decision{}, false
	}
	by := v.Name
	if v.Source == command.SourceBuiltin {
		by = "built-in command rule " + v.Name
	}
	return Decision{Source: v.Source, Rule: v.Rule, By: by, Reason: v.Reason, Suggestion: v.Suggestion}, true
}

// byRules returns the decision of the first rule that matches: the task's rules, then
// the ones the user added with "always". Rules see the arguments normalised (RuleArgs).
func (p *Policy) byRules(call *tools.Call, ws *tools.Workspace) (Decision, bool) {
	args := RuleArgs(call.Args, ws)
	p.mu.Lock()
	added := p.added
	p.mu.Unlock()
	for _, list := range [][]*rule{p.rules, added} {
		for _, r := range list {
			if r.matches(call, args) {
				return r.decision(), true
			}
		}
	}
	return Decision{}, false
}

func (r *rule) decision() Decision {
	d := Decision{Allowed: r.allow, Source: SourceRule, Rule: r.desc, By: r.ref, Reason: r.reason}
	if r.user {
		d.Source = SourceUser
	}
	if d.Reason == "" {
		d.Reason = "matched " + r.desc
		if r.allow {
			d.Reason = "allowed by " + r.desc
		}
	}
	if !r.allow {
		d.Suggestion = "Try another approach that does not need this call."
	}
	return d
}

func (p *Policy) byDefault(call *tools.Call, dynamic bool) Decision {
	if p.deflt {
		return Decision{Allowed: true, Source: SourceDefault, By: "the approval default (allow)",
			Reason: "no approval rule matched and the default is allow"}
	}
	d := Decision{Source: SourceDefault, By: "the approval default (deny)",
		Reason:     fmt.Sprintf("no approval rule allows %s and the default is deny", call.Tool),
		Suggestion: "Try another approach that does not need this call."}
	if dynamic {
		d.Reason = fmt.Sprintf("%s would overwrite, delete or replace existing files, which needs approval; no approval rule allows it and the default is deny", call.Tool)
		d.Suggestion = "Try an approach that does not overwrite or delete existing files, such as editing with replace_string_in_file or writing to a new path."
	}
	return d
}

// needsApproval asks the tool whether this call is destructive. Without a workspace a
// tool may not be able to tell (or may fail): then the call counts as needing approval.
func needsApproval(call *tools.Call, ws *tools.Workspace) (needs bool) {
	defer func() {
		if recover() != nil {
			needs = true
		}
	}()
	return call.RequiresApproval(ws)
}
