package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentrunner/runner/tools"
)

// MaxFileResults caps how many paths file_search lists.
const MaxFileResults = 1000

// FileSearch is file_search: list the files whose path matches a glob.
type FileSearch struct{}

// Spec implements tools.Tool.
func (FileSearch) Spec() tools.Spec {
	return tools.Spec{
		Name: "file_search",
		Description: "Find files by glob pattern. Returns matching file paths (relative to the workspace root), one per line, sorted. " +
			"Supports ** for any number of directories and {a,b} alternatives, e.g. \"**/*_test.go\", \"src/**/*.{ts,tsx}\". " +
			"A pattern without a slash matches file names at any depth (\"*.md\"). Lists files, not directories; " +
			ignoredNote + fmt.Sprintf("; at most %d results.", MaxFileResults),
		Parameters: tools.Object(map[string]*tools.Schema{
			"pattern":   tools.String("Glob pattern, relative to base_path.").WithMinLength(1),
			"base_path": pathProp("Directory to search in."),
		}, "pattern"),
		Risk: tools.RiskReadOnly,
	}
}

// RequiresApproval implements tools.Tool: searching changes nothing.
func (FileSearch) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// Validate implements tools.Tool.
func (FileSearch) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	_, err := planFileSearch(args, ws)
	return err
}

// fileSearchPlan is where a file_search walks and what it matches there.
type fileSearchPlan struct {
	base  string // base_path, resolved
	start string // the directory walked: base plus the pattern's literal leading directories
	glob  *glob
	depth int
}

func planFileSearch(args tools.Args, ws *tools.Workspace) (*fileSearchPlan, *tools.Error) {
	base, err := ws.Resolve(args.String("base_path"))
	if err != nil {
		return nil, err
	}
	pattern, err := normalizeGlob(args.String("pattern"), base)
	if err != nil {
		return nil, err
	}
	if pattern == "" {
		return nil, tools.Errorf(tools.CodeInvalidArgument, "Pass a glob such as \"**/*.go\".", "The pattern is empty")
	}
	plan := &fileSearchPlan{base: base, start: base, depth: walkDepth}
	if strings.Contains(pattern, "/") {
		// Walk only below the pattern's literal directories ("src/**/*.go" walks src).
		dir, rest := doublestar.SplitPattern(pattern)
		if dir != "." {
			start, err := ws.Resolve(path.Join(base, dir))
			if err != nil {
				return nil, err
			}
			plan.start, pattern = start, rest
		}
		if !strings.Contains(pattern, "**") {
			plan.depth = min(plan.depth, strings.Count(pattern, "/")) // deeper files cannot match
		}
	}
	if plan.glob, err = compileGlob(pattern); err != nil {
		return nil, err
	}
	return plan, nil
}

// Execute implements tools.Tool.
func (FileSearch) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	plan, terr := planFileSearch(args, ws)
	if terr != nil {
		return tools.Fail(terr)
	}
	pattern := args.String("pattern")
	if terr := checkDir(ws, plan.base); terr != nil {
		return tools.Fail(terr)
	}
	w := &walker{ws: ws, maxDepth: plan.depth, cutReported: plan.depth == walkDepth, keep: func(rel, name string) bool {
		return plan.glob.match(relBelow(plan.start, rel), name)
	}}
	var found []string
	total := 0
	err := w.walk(ctx, plan.start, ancestorIgnores(ws, plan.start), func(f fileRef) bool {
		total++
		if len(found) < MaxFileResults {
			found = append(found, f.rel())
		}
		return true
	})
	w.finish()
	switch {
	case ctx.Err() != nil:
		return tools.Failf(tools.CodeTimeout, "Narrow the search with base_path or a more specific pattern.",
			"file_search for '%s' was interrupted: %v", pattern, ctx.Err())
	case plan.start != plan.base && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)):
		// The pattern's leading directories do not exist: nothing can match.
	case err != nil:
		return tools.Fail(tools.FileError(err, plan.start))
	}
	truncated := total > len(found)
	var out string
	if total == 0 {
		out = fmt.Sprintf("No files matching '%s' found in '%s' (%s).", pattern, plan.base, ignoredNote)
	} else {
		out = strings.Join(found, "\n")
		if truncated {
			out += fmt.Sprintf("\n\n(Results truncated: showing the first %d of %d matching files. Use a more specific pattern or base_path to see the rest.)",
				len(found), total)
		}
	}
	cut := w.depthCut.Load()
	if cut {
		out += "\n\n(" + depthNote() + ")"
	}
	return tools.OK(out).WithMeta("total_matches", total).WithMeta("truncated", truncated).WithMeta("depth_limited", cut)
}

// checkDir fails unless rel is an existing directory.
func checkDir(ws *tools.Workspace, rel string) *tools.Error {
	fi, err := ws.Root().Stat(rel)
	if err != nil {
		return tools.FileError(err, rel)
	}
	if !fi.IsDir() {
		return tools.Errorf(tools.CodeNotADirectory, "Give a directory as base_path, or use read_file to read a file.",
			"'%s' is a file, not a directory", rel)
	}
	return nil
}
