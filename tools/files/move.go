package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/agentrunner/runner/tools"
)

// MoveFile is the move_file tool: rename or move a file, symlink or directory.
type MoveFile struct{}

// Spec implements tools.Tool.
func (MoveFile) Spec() tools.Spec {
	return tools.Spec{
		Name: "move_file",
		Description: "Move or rename a file, symlink or directory inside the workspace. Missing parent directories " +
			"of the destination are created. Fails if the destination exists unless overwrite is true; an existing " +
			"directory is never overwritten. A symlink is moved as a link.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"from":      pathProp("Existing file, symlink or directory to move."),
			"to":        pathProp("New path, including the file name (not just the target directory)."),
			"overwrite": tools.Boolean("Replace an existing file at the destination. Default false.").WithDefault(false),
		}, "from", "to"),
		Risk: tools.RiskSafeWrite,
	}
}

// Validate implements tools.Tool.
func (MoveFile) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	_, _, err := moveEnds(args, ws)
	return err
}

// moveEnds resolves and checks the two paths of a move.
func moveEnds(args tools.Args, ws *tools.Workspace) (string, string, *tools.Error) {
	from, err := resolveArg(ws, args, "from", false)
	if err != nil {
		return "", "", err
	}
	to, err := resolveArg(ws, args, "to", true)
	if err != nil {
		return "", "", err
	}
	switch {
	case from == "." || to == ".":
		return "", "", tools.Errorf(tools.CodeInvalidPath, "Move the files inside it instead.", "The workspace root cannot be moved or replaced")
	case from == to:
		return "", "", tools.Errorf(tools.CodeInvalidArgument, "Give a destination that differs from the source.", "'from' and 'to' are the same path '%s'", from)
	case strings.HasPrefix(to, from+"/"):
		return "", "", tools.Errorf(tools.CodeInvalidArgument, "Choose a destination outside the directory being moved.",
			"Cannot move '%s' into itself ('%s')", from, to)
	}
	return from, to, nil
}

// RequiresApproval implements tools.Tool: replacing an existing destination does.
func (MoveFile) RequiresApproval(args tools.Args, ws *tools.Workspace) bool {
	if !args.Bool("overwrite") {
		return false
	}
	_, to, err := moveEnds(args, ws)
	if err != nil {
		return false
	}
	_, serr := ws.Root().Lstat(to)
	return serr == nil
}

// Execute implements tools.Tool.
func (MoveFile) Execute(_ context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	from, to, perr := moveEnds(args, ws)
	if perr != nil {
		return tools.Fail(perr)
	}
	root := ws.Root()
	src, err := root.Lstat(from)
	if err != nil {
		return tools.Fail(tools.FileError(err, from))
	}
	replaced := false
	dst, err := root.Lstat(to)
	switch {
	case err == nil && dst.IsDir():
		return tools.Failf(tools.CodeAlreadyExists, fmt.Sprintf("To move into it, give the full new path, e.g. '%s'.", path.Join(to, path.Base(from))),
			"Destination '%s' is an existing directory", to)
	case err == nil && !args.Bool("overwrite"):
		return tools.Failf(tools.CodeAlreadyExists, "Pass overwrite: true to replace it, or choose another destination.",
			"Destination '%s' already exists", to)
	case err == nil && src.IsDir():
		return tools.Failf(tools.CodeAlreadyExists, "Delete the file first, or choose another destination.",
			"Cannot replace the file '%s' with the directory '%s'", to, from)
	case err == nil:
		replaced = true
	case !errors.Is(err, fs.ErrNotExist):
		return tools.Fail(tools.FileError(err, to))
	}
	if perr := ensureParent(root, to, true); perr != nil {
		return tools.Fail(perr)
	}
	if err := root.Rename(from, to); err != nil {
		return tools.Fail(tools.FileError(err, from))
	}
	out := fmt.Sprintf("Moved '%s' to '%s'", from, to)
	if replaced {
		out += fmt.Sprintf(" (replaced the existing '%s')", to)
	}
	res := tools.OK(out)
	res.FilesAffected = []string{from, to}
	return res.WithMeta("overwritten", replaced)
}

// CreateDirectory is the create_directory tool: mkdir -p.
type CreateDirectory struct{}

// Spec implements tools.Tool.
func (CreateDirectory) Spec() tools.Spec {
	return tools.Spec{
		Name: "create_directory",
		Description: "Create a directory and any missing parent directories (like mkdir -p). Succeeds if the " +
			"directory already exists; fails if a file is in the way.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"path": pathProp("Directory to create."),
		}, "path"),
		Risk: tools.RiskSafeWrite,
	}
}

// Validate implements tools.Tool.
func (CreateDirectory) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	_, err := resolveArg(ws, args, "path", true)
	return err
}

// RequiresApproval implements tools.Tool: creating a directory never does.
func (CreateDirectory) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// Execute implements tools.Tool.
func (CreateDirectory) Execute(_ context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	rel, perr := resolveArg(ws, args, "path", true)
	if perr != nil {
		return tools.Fail(perr)
	}
	fi, err := ws.Root().Stat(rel)
	switch {
	case err == nil && fi.IsDir():
		res := tools.OK(fmt.Sprintf("Directory '%s' already exists", rel))
		return res.WithMeta("created", false)
	case err == nil:
		return tools.Failf(tools.CodeAlreadyExists, "Choose another name, or delete the file first.", "'%s' already exists and is a file", rel)
	case !errors.Is(err, fs.ErrNotExist):
		return tools.Fail(parentError(err, rel))
	}
	if err := ws.Root().MkdirAll(rel, 0o755); err != nil {
		return tools.Fail(parentError(err, rel))
	}
	res := tools.OK(fmt.Sprintf("Created directory '%s'", rel))
	res.FilesAffected = []string{rel}
	return res.WithMeta("created", true)
}
