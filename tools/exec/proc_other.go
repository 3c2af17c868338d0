//go:build !linux

package exec

import (
	"os"
	osexec "os/exec"
)

// awaitLeader reaps cmd's process where waitid's WNOWAIT is missing: the caller kills
// the rest of its group after, with the (remote) chance of its pid having been reused.
// The caller's own cmd.Wait then returns at once.
func awaitLeader(cmd *osexec.Cmd, _ int) { _ = cmd.Wait() }

// growPipe leaves the pipe as it is.
func growPipe(*os.File) {}

// startTracked starts the command: there is no subreaper outside Linux.
func startTracked(start func() error, _ func() int, _ string) error { return start() }

// newMark returns no mark: nothing reads it outside Linux.
func newMark() string { return "" }

// markVar names the mark's variable.
const markVar = "RUNNER_COMMAND_MARK"

// finished does nothing outside Linux.
func finished(int) {}

// forget does nothing outside Linux.
func forget(int) {}
