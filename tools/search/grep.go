package search

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentrunner/runner/tools"
)

// Limits of grep_search.
const (
	// MaxGrepResults is the most matching lines one call can return.
	MaxGrepResults = 1000
	// DefaultGrepResults is max_results when the model does not say.
	DefaultGrepResults = 100
	// maxLineBytes is how much of a long line (minified code, data) is shown.
	maxLineBytes = 300
	// maxGrepFileBytes skips files too large to be source code, bounding memory.
	maxGrepFileBytes = 64 << 20
	// binaryProbe is how much of a file is checked for a NUL byte, as git and ripgrep do.
	binaryProbe = 8 << 10
)

// GrepSearch is grep_search: find the lines that contain a text or match a regexp.
type GrepSearch struct{}

// Spec implements tools.Tool.
func (GrepSearch) Spec() tools.Spec {
	return tools.Spec{
		Name: "grep_search",
		Description: "Search file contents for a text or a regular expression. Returns matching lines as \"path:line: text\", " +
			"sorted by path and line number. Case-insensitive unless case_sensitive is true. is_regex selects Go RE2 syntax " +
			"(no lookaround or backreferences); each line is matched on its own. Binary files, " + ignoredNote + ".",
		Parameters: tools.Object(map[string]*tools.Schema{
			"pattern":        tools.String("Text to find, or a regular expression when is_regex is true.").WithMinLength(1),
			"is_regex":       tools.Boolean("Treat pattern as a regular expression.").WithDefault(false),
			"case_sensitive": tools.Boolean("Match letter case exactly.").WithDefault(false),
			"file_pattern":   tools.String("Only search files matching this glob, e.g. \"*.go\" or \"src/**/*.ts\" (relative to path)."),
			"path":           pathProp("Directory (or single file) to search."),
			"max_results": tools.Integer(fmt.Sprintf("Maximum number of matching lines to return (1-%d).", MaxGrepResults)).
				WithRange(1, MaxGrepResults).WithDefault(float64(DefaultGrepResults)),
		}, "pattern"),
		Risk: tools.RiskReadOnly,
	}
}

// RequiresApproval implements tools.Tool: searching changes nothing.
func (GrepSearch) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// Validate implements tools.Tool.
func (GrepSearch) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	_, err := planGrep(args, ws)
	return err
}

// grepPlan is a checked grep_search call.
type grepPlan struct {
	pattern string
	target  string // workspace-relative file or directory
	m       *matcher
	glob    *glob
	max     int
}

func planGrep(args tools.Args, ws *tools.Workspace) (*grepPlan, *tools.Error) {
	p := &grepPlan{pattern: args.String("pattern"), max: args.Int("max_results")}
	if p.pattern == "" {
		return nil, tools.Errorf(tools.CodeInvalidArgument, "Pass the text to search for.", "The pattern is empty")
	}
	if p.max < 1 || p.max > MaxGrepResults {
		return nil, tools.Errorf(tools.CodeInvalidArgument, "", "max_results must be between 1 and %d, got %d", MaxGrepResults, p.max)
	}
	isRegex := args.Bool("is_regex")
	if !isRegex && strings.ContainsAny(p.pattern, "\r\n") {
		return nil, tools.Errorf(tools.CodeInvalidArgument, "Search for one line of the text at a time.",
			"The pattern contains a line break, but lines are matched one at a time")
	}
	if isRegex {
		// Compile the pattern as given first, so the parser's message quotes the model's text.
		if _, err := regexp.Compile(p.pattern); err != nil {
			return nil, tools.Errorf(tools.CodeInvalidArgument,
				"Fix the regular expression (Go RE2 syntax: no lookahead, lookbehind or backreferences), or pass is_regex: false to search for the literal text.",
				"Invalid regular expression '%s': %v", p.pattern, err)
		}
	}
	m, err := newMatcher(p.pattern, isRegex, args.Bool("case_sensitive"))
	if err != nil {
		return nil, tools.Errorf(tools.CodeInvalidArgument, "", "Invalid regular expression: %v", err)
	}
	p.m = m
	target, terr := ws.Resolve(args.String("path"))
	if terr != nil {
		return nil, terr
	}
	p.target = target
	if args.Has("file_pattern") && strings.TrimSpace(args.String("file_pattern")) != "" {
		fp, terr := normalizeGlob(args.String("file_pattern"), target)
		if terr != nil {
			return nil, terr
		}
		if p.glob, terr = compileGlob(fp); terr != nil {
			return nil, terr
		}
	}
	return p, nil
}

// Execute implements tools.Tool.
func (GrepSearch) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	plan, terr := planGrep(args, ws)
	if terr != nil {
		return tools.Fail(terr)
	}
	fi, err := ws.Root().Stat(plan.target)
	if err != nil {
		return tools.Fail(tools.FileError(err, plan.target))
	}
	var sum grepSummary
	switch {
	case fi.Mode().IsRegular():
		sum, terr = grepFile(ws, plan)
	case fi.IsDir():
		sum, terr = grepTree(ctx, ws, plan)
	default:
		terr = tools.Errorf(tools.CodeInvalidArgument, "Give a directory or a regular file as path.",
			"'%s' is neither a regular file nor a directory", plan.target)
	}
	if terr != nil {
		return tools.Fail(terr)
	}
	if ctx.Err() != nil {
		return tools.Failf(tools.CodeTimeout, "Narrow the search with path or file_pattern.",
			"grep_search for '%s' was interrupted: %v", plan.pattern, ctx.Err())
	}
	return sum.result(plan, args.Bool("is_regex"))
}

// grepSummary is the outcome of a search, ready to be rendered.
type grepSummary struct {
	lines     []string
	searched  int
	matched   int // files with at least one shown match
	truncated bool
	binary    bool // the single file searched is binary
	depthCut  bool // directories below walkDepth were skipped
}

func (s grepSummary) result(plan *grepPlan, isRegex bool) tools.Result {
	var out string
	switch {
	case s.binary:
		out = fmt.Sprintf("'%s' is a binary file; grep_search only searches text.", plan.target)
	case len(s.lines) == 0:
		out = fmt.Sprintf("No matches found for '%s' in %d files under '%s' (binary files, %s).",
			plan.pattern, s.searched, plan.target, ignoredNote)
		if !isRegex && looksLikeRegex(plan.pattern) {
			out += " The pattern was searched as plain text; pass is_regex: true to use it as a regular expression."
		}
	default:
		out = strings.Join(s.lines, "\n")
		if s.truncated {
			out += fmt.Sprintf("\n\n(Results truncated: showing the first %d matching lines, and there are more. "+
				"Narrow the search with path or file_pattern", len(s.lines))
			if plan.max < MaxGrepResults {
				out += fmt.Sprintf(", or raise max_results (up to %d)", MaxGrepResults)
			}
			out += ".)"
		}
	}
	if s.depthCut {
		out += "\n\n(" + depthNote() + ")"
	}
	return tools.OK(out).
		WithMeta("matches", len(s.lines)).
		WithMeta("files_searched", s.searched).
		WithMeta("files_matched", s.matched).
		WithMeta("truncated", s.truncated).
		WithMeta("depth_limited", s.depthCut)
}

// looksLikeRegex spots regexp syntax in a pattern that was given as plain text.
func looksLikeRegex(p string) bool {
	for _, tell := range []string{`\w`, `\d`, `\s`, `\b`, `.*`, `.+`, `|`, `^`, `$`, `[`} {
		if strings.Contains(p, tell) {
			return true
		}
	}
	return false
}

// grepFile searches one named file. Being named explicitly, it is searched even when
// .gitignore would skip it.
func grepFile(ws *tools.Workspace, plan *grepPlan) (grepSummary, *tools.Error) {
	f, err := ws.Root().Open(plan.target)
	if err != nil {
		return grepSummary{}, tools.FileError(err, plan.target)
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	lines, _, err := plan.m.scan(f, ".", plan.target, nil, readOpts{limit: maxGrepFileBytes, textOnly: true}, plan.max+1)
	switch {
	case errors.Is(err, errBinary):
		return grepSummary{binary: true}, nil
	case errors.Is(err, errTooLarge):
		return grepSummary{}, tools.Errorf(tools.CodeTooLarge, "Search a smaller file, or use run_in_terminal with grep.",
			"'%s' is larger than %d MiB", plan.target, maxGrepFileBytes>>20)
	case err != nil:
		return grepSummary{}, tools.FileError(err, plan.target)
	}
	sum := grepSummary{searched: 1, lines: lines}
	if len(lines) > plan.max {
		sum.lines, sum.truncated = lines[:plan.max], true
	}
	if len(sum.lines) > 0 {
		sum.matched = 1
	}
	return sum, nil
}
