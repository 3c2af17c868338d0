package files

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/agentrunner/runner/tools"
)

// MaxListEntries caps a listing: past it a model learns more from listing a subdirectory.
const MaxListEntries = 1000

// Entry is one item of a list_dir listing, as it appears in the result's metadata.
type Entry struct {
	// Name is the path relative to the listed directory, slash-separated.
	Name string `json:"name"`
	// Type is "file", "directory", "symlink" or "other" (a FIFO, socket or device).
	Type string `json:"type"`
	// Size is the file size in bytes; for a symlink the length of its target; 0 for a directory.
	Size int64 `json:"size"`
	// Modified is the modification time in RFC 3339 (ISO 8601), UTC.
	Modified string `json:"modified"`
	// Target is where a symlink points, as written in the link.
	Target string `json:"target,omitempty"`
}

// ListDir is the list_dir tool.
type ListDir struct{}

// Spec implements tools.Tool.
func (ListDir) Spec() tools.Spec {
	return tools.Spec{
		Name: "list_dir",
		Description: "List a directory's entries with their type and size: directories end in \"/\", symlinks show " +
			"\"-> target\". With recursive true, subdirectories are listed too (symlinked directories are shown but " +
			"not entered). Hidden entries (names starting with \".\") are left out unless include_hidden is true. " +
			"At most 1000 entries are returned, shallowest first.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"path":           pathProp("Directory to list. Default \".\" (the workspace root).").WithDefault("."),
			"recursive":      tools.Boolean("Also list the contents of subdirectories, at every depth. Default false.").WithDefault(false),
			"include_hidden": tools.Boolean("Include entries whose names start with \".\" (such as .git). Default false.").WithDefault(false),
		}),
		Risk: tools.RiskReadOnly,
	}
}

// Validate implements tools.Tool.
func (ListDir) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	_, err := listPath(args, ws)
	return err
}

// listPath resolves the directory argument; an absent path means the workspace root.
func listPath(args tools.Args, ws *tools.Workspace) (string, *tools.Error) {
	if !args.Has("path") {
		return ".", nil
	}
	return resolveArg(ws, args, "path", true)
}

// RequiresApproval implements tools.Tool: listing never does.
func (ListDir) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// Execute implements tools.Tool.
func (ListDir) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	rel, perr := listPath(args, ws)
	if perr != nil {
		return tools.Fail(perr)
	}
	fi, err := ws.Root().Stat(rel)
	if err != nil {
		return tools.Fail(tools.FileError(err, rel))
	}
	if !fi.IsDir() {
		return tools.Failf(tools.CodeNotADirectory, "Use read_file to read a file.", "'%s' is a file, not a directory", rel)
	}
	l := lister{fsys: ws.Root().FS(), hidden: args.Bool("include_hidden")}
	if err := l.walk(ctx, rel, args.Bool("recursive")); err != nil {
		return tools.Fail(tools.FileError(err, rel))
	}
	// Collected breadth-first (so the cap keeps the shallow picture); shown as a tree, each
	// directory's contents right after it.
	sort.Slice(l.entries, func(i, j int) bool {
		return strings.ReplaceAll(l.entries[i].Name, "/", "\x00") < strings.ReplaceAll(l.entries[j].Name, "/", "\x00")
	})
	res := tools.OK(l.render(rel))
	return res.WithMeta("entries", l.entries).
		WithMeta("total_entries", len(l.entries)).
		WithMeta("truncated", l.truncated).
		WithMeta("hidden_skipped", l.hiddenSkipped)
}

type lister struct {
	fsys          fs.FS
	hidden        bool
	entries       []Entry
	truncated     bool
	hiddenSkipped int
}

// walk lists dir breadth-first. Entries come from the directory itself and are described
// with Lstat, so a symlink is reported as such and never entered.
func (l *lister) walk(ctx context.Context, dir string, recursive bool) error {
	queue := []string{""} // paths relative to dir
	for len(queue) > 0 {
		sub := queue[0]
		queue = queue[1:]
		if err := ctx.Err(); err != nil {
			return err
		}
		des, err := fs.ReadDir(l.fsys, path.Join(dir, sub))
		if err != nil {
			if sub == "" {
				return err
			}
			continue // a subdirectory that vanished or is unreadable does not spoil the listing
		}
		for _, de := range des {
			if !l.hidden && strings.HasPrefix(de.Name(), ".") {
				if sub == "" {
					l.hiddenSkipped++
				}
				continue
			}
			if len(l.entries) == MaxListEntries {
				l.truncated = true
				return nil
			}
			name := path.Join(sub, de.Name())
			e := l.describe(path.Join(dir, name), name, de)
			l.entries = append(l.entries, e)
			if recursive && e.Type == "directory" {
				queue = append(queue, name)
			}
		}
	}
	return nil
}

func (l *lister) describe(full, name string, de fs.DirEntry) Entry {
	e := Entry{Name: name, Type: "file"}
	switch {
	case de.Type()&fs.ModeSymlink != 0:
		e.Type = "symlink"
		e.Target, _ = fs.ReadLink(l.fsys, full)
	case de.IsDir():
		e.Type = "directory"
	case !de.Type().IsRegular():
		e.Type = "other"
	}
	if info, err := de.Info(); err == nil {
		e.Modified = modTime(info.ModTime())
		if e.Type != "directory" {
			e.Size = info.Size()
		}
	}
	return e
}

func (l *lister) render(rel string) string {
	var b strings.Builder
	if len(l.entries) == 0 {
		fmt.Fprintf(&b, "Directory '%s' is empty", rel)
	} else {
		fmt.Fprintf(&b, "Contents of '%s' (%s):\n", rel, plural(len(l.entries), "entry"))
	}
	for _, e := range l.entries {
		switch e.Type {
		case "directory":
			fmt.Fprintf(&b, "%s/\n", e.Name)
		case "symlink":
			fmt.Fprintf(&b, "%s -> %s (symlink)\n", e.Name, e.Target)
		case "other":
			fmt.Fprintf(&b, "%s (special file)\n", e.Name)
		default:
			fmt.Fprintf(&b, "%s (%s)\n", e.Name, plural(int(e.Size), "byte"))
		}
	}
	if l.hiddenSkipped > 0 {
		fmt.Fprintf(&b, "\n(%s not shown; pass include_hidden: true to see them)", plural(l.hiddenSkipped, "hidden entry"))
	}
	if l.truncated {
		fmt.Fprintf(&b, "\nNote: the listing stopped at %d entries. List a subdirectory, or leave out recursive, to see the rest.", MaxListEntries)
	}
	return strings.TrimRight(b.String(), "\n")
}
