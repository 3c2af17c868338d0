package files

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentrunner/runner/tools"
)

// ReplaceString is the replace_string_in_file tool: an exact-text edit of one file.
type ReplaceString struct{}

// Spec implements tools.Tool.
func (ReplaceString) Spec() tools.Spec {
	return tools.Spec{
		Name: "replace_string_in_file",
		Description: "Edit a file by replacing exact text. old_string must match the file exactly, including " +
			"indentation and whitespace; include a few lines of context so it is unique. If it occurs several times " +
			"and replace_all is false, only the first occurrence is replaced and a warning lists the others. Line " +
			"endings are kept: LF text in old_string matches a file with CRLF endings. To create a file use create_file.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"path":        pathProp("File to edit."),
			"old_string":  tools.String("The exact text to find. Must not be empty.").WithMinLength(1),
			"new_string":  tools.String("The text to put in its place (may be empty to delete old_string)."),
			"replace_all": tools.Boolean("Replace every occurrence instead of only the first. Default false.").WithDefault(false),
		}, "path", "old_string", "new_string"),
		Risk: tools.RiskSafeWrite,
	}
}

// Validate implements tools.Tool.
func (ReplaceString) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	if _, err := resolveArg(ws, args, "path", true); err != nil {
		return err
	}
	if args.String("old_string") == "" {
		return tools.Errorf(tools.CodeInvalidArgument, "Give the exact text to replace; to write a whole file use write_file.",
			"old_string must not be empty")
	}
	if args.String("old_string") == args.String("new_string") {
		return tools.Errorf(tools.CodeInvalidArgument, "Give a new_string that differs from old_string.",
			"old_string and new_string are identical, so nothing would change")
	}
	return nil
}

// RequiresApproval implements tools.Tool: an edit of existing text is an ordinary write.
func (ReplaceString) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// Execute implements tools.Tool.
func (ReplaceString) Execute(_ context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	rel, perr := resolveArg(ws, args, "path", true)
	if perr != nil {
		return tools.Fail(perr)
	}
	target, perr := writeTarget(ws, rel)
	if perr != nil {
		return tools.Fail(perr)
	}
	content, mode, perr := readToEdit(ws, target, rel)
	if perr != nil {
		return tools.Fail(perr)
	}
	e := edit{old: args.String("old_string"), new: args.String("new_string")}
	if !e.locate(content) {
		return tools.Fail(notFound(rel, content, e.old))
	}
	e.replaced = e.positions
	if !args.Bool("replace_all") {
		e.replaced = e.positions[:1]
	}
	if err := writeAtomic(ws.Root(), target, []byte(e.apply(content)), mode); err != nil {
		return tools.Fail(tools.FileError(err, rel))
	}
	res := e.result(rel, lineNumbers(content, e.positions))
	res.FilesAffected = []string{target}
	return res
}

// readToEdit reads the file at target (rel as the agent named it) for an edit, with its
// permissions; a missing file, a directory or a file over MaxReadBytes is an error that
// says what to do instead.
func readToEdit(ws *tools.Workspace, target, rel string) (string, fs.FileMode, *tools.Error) {
	fi, err := ws.Root().Stat(target)
	if err != nil {
		res := tools.FileError(err, rel)
		if res.Code == tools.CodeFileNotFound {
			res = tools.Errorf(tools.CodeFileNotFound, "Check the path with list_dir, or use create_file to make a new file.",
				"File '%s' not found", rel)
		}
		return "", 0, res
	}
	if fi.IsDir() {
		return "", 0, tools.Errorf(tools.CodeIsADirectory, "Give the path of a file.", "'%s' is a directory", rel)
	}
	if fi.Size() > MaxReadBytes {
		return "", 0, tools.Errorf(tools.CodeTooLarge, "Use write_file or a terminal command for files this large.",
			"'%s' is %d bytes; replace_string_in_file edits files up to %d bytes", rel, fi.Size(), MaxReadBytes)
	}
	data, err := ws.Root().ReadFile(target)
	if err != nil {
		return "", 0, tools.FileError(err, rel)
	}
	return string(data), fi.Mode().Perm(), nil
}

// edit is one replace_string_in_file call's replacement.
type edit struct {
	old, new  string
	positions []int  // byte offsets of every occurrence of old
	replaced  []int  // those replaced: the first, or all
	adapted   string // the line endings old and new were converted to, if they were
}

// locate finds old's occurrences in content. Models write LF; the file may use CRLF (or
// the reverse): failing that, old and new are matched and written in the file's style,
// rather than the whole file being normalized. false: old is not in content either way.
func (e *edit) locate(content string) bool {
	e.positions = find(content, e.old)
	if len(e.positions) == 0 {
		if o, n, how := adaptLineEndings(content, e.old, e.new); how != "" {
			if p := find(content, o); len(p) > 0 {
				e.old, e.new, e.positions, e.adapted = o, n, p, how
			}
		}
	}
	return len(e.positions) > 0
}

// apply is content with the replaced occurrences of old replaced by new.
func (e *edit) apply(content string) string {
	var b strings.Builder
	b.Grow(len(content) + len(e.replaced)*(len(e.new)-len(e.old)))
	prev := 0
	for _, p := range e.replaced {
		b.WriteString(content[prev:p])
		b.WriteString(e.new)
		prev = p + len(e.old)
	}
	b.WriteString(content[prev:])
	return b.String()
}

// result reports the edit of rel: where it replaced (lines: each occurrence's line), a
// warning when it left occurrences alone, and the counts as metadata.
func (e *edit) result(rel string, lines []int) tools.Result {
	n := len(e.replaced)
	perEdit := max(strings.Count(e.old, "\n"), strings.Count(e.new, "\n")) + 1
	out := fmt.Sprintf("Replaced %s in '%s' (line %s)", plural(n, "occurrence"), rel, joinInts(lines[:n], 20))
	if n > 1 {
		out = fmt.Sprintf("Replaced %s in '%s' (lines %s)", plural(n, "occurrence"), rel, joinInts(lines, 20))
	}
	if e.adapted != "" {
		out += "; matched after converting line endings to " + e.adapted + ", the file's style"
	}
	res := tools.OK(out)
	if len(e.positions) > n {
		warning := fmt.Sprintf("old_string occurs %d times (lines %s); only the first, at line %d, was replaced. "+
			"Pass replace_all: true to replace them all, or add surrounding lines to old_string to pick one.",
			len(e.positions), joinInts(lines, 20), lines[0])
		res.Output += "\nWarning: " + warning
		res = res.WithMeta("warnings", []string{warning})
	}
	return res.WithMeta("occurrences_found", len(e.positions)).
		WithMeta("occurrences_replaced", n).
		WithMeta("lines_changed", perEdit*n).
		WithMeta("line_numbers", lines)
}

// find returns the byte offsets of the non-overlapping occurrences of s in content.
func find(content, s string) []int {
	var out []int
	for off := 0; ; {
		i := strings.Index(content[off:], s)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + len(s)
	}
}

// lineNumbers converts ascending byte offsets to 1-based line numbers.
func lineNumbers(content string, positions []int) []int {
	out := make([]int, len(positions))
	line, prev := 1, 0
	for i, p := range positions {
		line += strings.Count(content[prev:p], "\n")
		prev = p
		out[i] = line
	}
	return out
}

// adaptLineEndings rewrites old and new to the file's line-ending style when they differ:
// LF text against a CRLF file, or CRLF text against an LF file. how names the style used.
func adaptLineEndings(content, oldS, newS string) (string, string, string) {
	fileCRLF := strings.Contains(content, "\r\n")
	oldCRLF := strings.Contains(oldS, "\r\n")
	lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
	switch {
	case fileCRLF && !oldCRLF && strings.Contains(oldS, "\n"):
		crlf := func(s string) string { return strings.ReplaceAll(lf(s), "\n", "\r\n") }
		return crlf(oldS), crlf(newS), "CRLF"
	case !fileCRLF && oldCRLF:
		return lf(oldS), lf(newS), "LF"
	}
	return "", "", ""
}

// notFound explains a missing old_string, pointing at the usual culprits: whitespace,
// indentation and line endings that differ from the file.
func notFound(rel, content, oldS string) *tools.Error {
	suggestion := "Read the file with read_file and copy the exact text, including indentation and whitespace."
	if near := fuzzyLine(content, oldS); near > 0 {
		return tools.Errorf(tools.CodeInvalidArgument, suggestion,
			"old_string was not found in '%s', but it matches if whitespace is ignored (near line %d): indentation, "+
				"tabs versus spaces, trailing spaces or line endings differ", rel, near)
	}
	msg := fmt.Sprintf("old_string was not found in '%s'", rel)
	if strings.Contains(content, "\r\n") {
		msg += " (the file uses CRLF line endings)"
	}
	return tools.Errorf(tools.CodeInvalidArgument, suggestion, "%s", msg)
}

// fuzzyLine returns the line where old matches content with all whitespace collapsed, or
// 0 when it does not match even then.
func fuzzyLine(content, oldS string) int {
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	want := norm(oldS)
	if want == "" || !strings.Contains(norm(content), want) {
		return 0
	}
	first := strings.Fields(oldS)[0]
	lines := strings.Split(content, "\n")
	span := strings.Count(oldS, "\n") + 2 // old may start mid-line and end mid-line
	candidate := 0
	for i, line := range lines {
		if !strings.Contains(line, first) {
			continue
		}
		if strings.Contains(norm(strings.Join(lines[i:min(i+span, len(lines))], "\n")), want) {
			return i + 1
		}
		if candidate == 0 {
			candidate = i + 1
		}
	}
	return max(candidate, 1) // the text matches somewhere; a line number is only a hint
}

// joinInts lists up to limit numbers, then how many more there are.
func joinInts(ns []int, limit int) string {
	parts := make([]string, 0, min(len(ns), limit)+1)
	for i, n := range ns {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(ns)-limit))
			break
		}
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, ", ")
}
