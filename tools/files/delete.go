package files

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/agentrunner/runner/tools"
)

// DeleteFile is the delete_file tool: remove a file, a symlink, or a directory.
type DeleteFile struct{}

// Spec implements tools.Tool.
func (DeleteFile) Spec() tools.Spec {
	return tools.Spec{
		Name: "delete_file",
		Description: "Delete a file, a symlink or a directory. A symlink is removed as a link; its target is never " +
			"touched. A directory must be empty unless recursive is true, which deletes everything in it. The " +
			"workspace root itself cannot be deleted.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"path":      pathProp("File, symlink or directory to delete."),
			"recursive": tools.Boolean("Delete a non-empty directory with everything in it. Default false.").WithDefault(false),
		}, "path"),
		Risk: tools.RiskDangerous,
	}
}

// Validate implements tools.Tool.
func (DeleteFile) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	rel, err := resolveArg(ws, args, "path", false)
	if err != nil {
		return err
	}
	if rel == "." {
		return tools.Errorf(tools.CodeInvalidPath, "Delete the files inside it instead.", "Refusing to delete the workspace root")
	}
	return nil
}

// RequiresApproval implements tools.Tool: every delete does.
func (DeleteFile) RequiresApproval(tools.Args, *tools.Workspace) bool { return true }

// Execute implements tools.Tool.
func (d DeleteFile) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	if err := d.Validate(args, ws); err != nil {
		return tools.Fail(err) // the root check guards RemoveAll even when called directly
	}
	rel, _ := resolveArg(ws, args, "path", false)
	root := ws.Root()
	fi, err := root.Lstat(rel)
	if err != nil {
		return tools.Fail(tools.FileError(err, rel))
	}
	kind, removed := "file", 1
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		kind = "symlink"
	case fi.IsDir():
		kind = "directory"
		entries, err := fs.ReadDir(root.FS(), rel)
		if err != nil {
			return tools.Fail(tools.FileError(err, rel))
		}
		if len(entries) > 0 && !args.Bool("recursive") {
			return tools.Failf(tools.CodeInvalidArgument, "Pass recursive: true to delete it and everything in it.",
				"Directory '%s' is not empty (%s)", rel, plural(len(entries), "entry"))
		}
		// Count what will go, for the model's record; WalkDir does not follow symlinks.
		removed = 0
		_ = fs.WalkDir(root.FS(), rel, func(string, fs.DirEntry, error) error {
			removed++
			return ctx.Err()
		})
	}
	if kind == "directory" && removed > 1 {
		err = root.RemoveAll(rel)
	} else {
		err = root.Remove(rel)
	}
	if err != nil {
		return tools.Fail(tools.FileError(err, rel))
	}
	out := fmt.Sprintf("Deleted %s '%s'", kind, rel)
	switch {
	case kind == "symlink":
		out += " (the link only; its target was not touched)"
	case kind == "directory" && removed > 1:
		out += fmt.Sprintf(" and the %s in it", plural(removed-1, "entry"))
	}
	res := tools.OK(out)
	res.FilesAffected = []string{rel}
	return res.WithMeta("type", kind).WithMeta("entries_removed", removed)
}
