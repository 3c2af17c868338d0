package workspace

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/agentrunner/runner/runner/workspace/door"
)

// KeptMarker is the file runner writes at the top of every workspace it keeps
// (--keep-workspaces), after the agent and everything it started are gone. merge,
// --resume and --rerun-failed never read a results manifest in a directory holding one,
// or below it: a kept workspace downloaded beside the output directory cannot pass off
// the agent's own manifest and result files as runner's. Its name has no leading dot,
// because artifact uploads leave hidden files out.
const KeptMarker = "runner-kept-workspace.txt"

const keptText = "This directory is a workspace runner kept (--keep-workspaces) after the agent finished.\n" +
	"runner merge, --resume and --rerun-failed never read results from it or from below it.\n"

// MarkKept writes KeptMarker into the kept workspace dir, replacing whatever the agent left
// under that name, and gives the directory its owner's write permission back first. An
// error whose cause is the workspace (the agent made its top unwritable to runner, as a
// container's root can) is a *KeptError with ByAgent set.
func MarkKept(dir string) error {
	if err := markKept(dir); err != nil {
		return &KeptError{Err: err, ByAgent: !outsideFault(err)}
	}
	return nil
}

func markKept(dir string) error {
	if info, err := os.Lstat(dir); err == nil && info.IsDir() && info.Mode().Perm()&0o700 != 0o700 {
		_ = os.Chmod(dir, info.Mode().Perm()|0o700) // we own it: a chmod by the agent is undone
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }() // a directory handle: Close loses no data
	if err := root.RemoveAll(KeptMarker); err != nil {
		return err
	}
	f, err := door.Create(root, KeptMarker, 0o644) // new, exclusive: nothing the agent left is followed
	if err != nil {
		return err
	}
	_, werr := f.WriteString(keptText)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// outsideFault says whether err is the machine's (disk full, read-only or failing file
// system), not something the agent left.
func outsideFault(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// KeptError is a kept workspace runner could not mark.
type KeptError struct {
	Err error
	// ByAgent: the workspace's content or permissions are the cause, not the machine.
	ByAgent bool
}

func (e *KeptError) Error() string {
	return fmt.Sprintf("cannot mark the kept workspace as one (%s): %v", KeptMarker, e.Err)
}

func (e *KeptError) Unwrap() error { return e.Err }
