package task

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentrunner/runner/runner/bounded"
)

// Expand turns command-line arguments into task files:
//   - a file is taken as is, whatever its extension;
//   - a directory gives the *.yaml and *.yml files directly inside it, not in its
//     subdirectories (they usually hold fixtures, which may be YAML too); use a glob such
//     as dir/**/*.yaml to recurse;
//   - anything else is a glob (doublestar syntax: *, ?, [..], {a,b} and ** for any depth);
//     the .yaml/.yml files it matches are taken; directories it matches are not entered
//     (scenarios/* must not pick up scenarios/fixtures/config.yaml).
//
// Hidden files (starting with ".") found inside directories are skipped. The result is
// sorted and without duplicates, so a suite always runs in the same order. An argument
// that yields no task file is an error; all such errors are reported together.
func Expand(args []string) ([]string, error) {
	seen := map[string]bool{}
	var files []string
	var errs []error
	add := func(p string) {
		key := p
		if abs, err := filepath.Abs(p); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			files = append(files, p)
		}
	}
	for _, arg := range args {
		found, err := expandOne(arg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range found {
			add(filepath.Clean(f))
		}
	}
	sort.Strings(files)
	return files, combine(errs)
}

func expandOne(arg string) ([]string, error) {
	info, err := os.Stat(arg)
	switch {
	case err == nil && info.IsDir():
		found, err := yamlFilesIn(arg)
		if err == nil && len(found) == 0 {
			err = argError(arg, nil, "directory holds no .yaml or .yml task file"+deeperHint(arg))
		}
		return found, err
	case err == nil && isSuiteFile(arg):
		return nil, argError(arg, nil, "is a suite file (the defaults of the task files beside and below it), not a task file: give the task files or their directory")
	case err == nil:
		return []string{arg}, nil
	case !hasMeta(arg):
		return nil, argError(arg, err, "no such file or directory")
	}
	if !doublestar.ValidatePathPattern(filepath.ToSlash(arg)) {
		return nil, argError(arg, nil, "invalid glob pattern")
	}
	matches, err := doublestar.FilepathGlob(arg)
	if err != nil {
		return nil, argError(arg, err, err.Error())
	}
	var found []string
	for _, m := range matches {
		// A dangling symlink or a directory named x.yaml is not a task file.
		if info, err := os.Stat(m); err == nil && info.Mode().IsRegular() && isYAML(m) && !isSuiteFile(m) {
			found = append(found, m)
		}
	}
	if len(found) == 0 {
		return nil, argError(arg, nil, "no .yaml or .yml task file matches")
	}
	return found, nil
}

// maxHintEntries bounds the walk deeperHint makes: a hint is not worth a whole disk.
const maxHintEntries = 10000

// deeperHint suggests the glob that recurses when a directory holds task files only in
// its subdirectories (a directory is not searched below its top, see Expand), quoted so
// the shell leaves ** to runner: "; 3 below it: try 'nested/**/*.yaml'".
func deeperHint(dir string) string {
	n, seen := 0, 0
	exts := map[string]bool{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if seen++; err != nil || seen > maxHintEntries {
			return fs.SkipAll
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && isYAML(d.Name()) {
			n++
			exts[filepath.Ext(d.Name())] = true
		}
		return nil
	})
	if n == 0 {
		return ""
	}
	pattern := "*.yaml"
	switch {
	case len(exts) == 2:
		pattern = "*.{yaml,yml}"
	case exts[".yml"]:
		pattern = "*.yml"
	}
	glob := strings.TrimRight(filepath.ToSlash(dir), "/") + "/**/" + pattern
	return fmt.Sprintf(" directly inside it; %d below it: try '%s'", n, glob)
}

// yamlFilesIn lists the visible *.yaml and *.yml regular files directly inside dir.
func yamlFilesIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, argError(dir, err, err.Error())
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !isYAML(name) || isSuiteFile(name) {
			continue
		}
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out, nil
}

// argError is a problem with a command-line argument, as an *Error without a line.
func argError(arg string, err error, msg string) error {
	return &Error{Pos: Position{File: arg}, Msg: msg, Err: err}
}

func isYAML(name string) bool {
	ext := filepath.Ext(name)
	return ext == ".yaml" || ext == ".yml"
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[{") }

// LoadAll expands paths (see Expand) and loads every task file. It reports every problem
// of every file at once, one per line, and refuses two tasks with the same name, naming
// both files. Tasks come back in Expand's order: with an error, those of the files that
// loaded.
func LoadAll(paths []string, opts LoadOptions) ([]*Task, error) {
	files, expandErr := Expand(paths)
	errs := Problems(expandErr)
	var tasks []*Task
	byName := map[string]Position{}
	suites := newSuites(opts)
	for _, f := range files {
		data, err := bounded.ReadFile(f, bounded.TaskFile)
		if err != nil {
			errs = append(errs, readError(f, err))
			continue
		}
		suite, fresh := suites.forTask(f)
		if suite != nil && len(suite.errs) > 0 {
			if fresh {
				errs = append(errs, suite.errs...)
			}
			suite = nil // reported once; the task's own problems are still checked
		}
		cases, problems := parse(f, data, opts, suite)
		if len(problems) > 0 {
			errs = append(errs, problems...)
			continue
		}
		for _, c := range cases {
			t := c.t
			if first, dup := byName[t.Name]; dup {
				errs = append(errs, &Error{Pos: c.namePos, Field: "name",
					Msg: fmt.Sprintf("duplicate scenario name %q, already used by %s; set a different name:", t.Name, first)})
				continue
			}
			byName[t.Name] = c.namePos
			tasks = append(tasks, t)
		}
	}
	if len(errs) == 0 {
		errs = append(errs, undeclaredVars(tasks, opts.Vars)...)
	}
	// The tasks of the files that loaded come back with the others' problems, for a
	// caller that runs what it can (run, bench); every other caller stops at the error.
	return tasks, combine(dedupe(errs))
}

// dedupe drops repeated problems: an inherited value's problem is found with every task
// under the suite file, at the same place.
func dedupe(errs []error) []error {
	seen := map[string]bool{}
	out := errs[:0]
	for _, e := range errs {
		if k := e.Error(); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// undeclaredVars reports variables set from outside that no loaded task declares: a typo
// there would otherwise be ignored.
func undeclaredVars(tasks []*Task, vars map[string]any) []error {
	declared := map[string]any{}
	for _, t := range tasks {
		if t.Case == nil {
			continue
		}
		for _, k := range t.Case.Declared {
			declared[k] = true
		}
	}
	var errs []error
	for _, k := range sortedKeys(vars) {
		if _, ok := declared[k]; !ok {
			names := sortedKeys(declared)
			hint := "no task declares any variable (vars:, matrix: or dataset:)"
			if len(names) > 0 {
				hint = strings.TrimPrefix(hintAndList(k, names, "declared"), "; ")
			}
			errs = append(errs, &UnknownVarError{Name: k, Hint: hint})
		}
	}
	return errs
}

// UnknownVarError is a variable set from outside (the command line) that no task declares.
type UnknownVarError struct {
	Name string
	Hint string
}

func (e *UnknownVarError) Error() string {
	return fmt.Sprintf("variable %q is set but no task declares it; %s", e.Name, e.Hint)
}
