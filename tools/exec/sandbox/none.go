package sandbox

import (
	"context"
	"os/exec"

	"github.com/agentrunner/runner/tools"
)

// None returns the wrapper that runs commands unconfined.
func None() tools.CommandWrapper { return none{} }

// none is the none mode: commands run as they are, and auto's last resort.
type none struct{}

func (none) Name() string                           { return ModeNone }
func (none) Wrap(*exec.Cmd, *tools.Workspace) error { return nil }

func (none) gaps(bool) []string {
	return []string{"no confinement: commands read and write whatever the runner can, reach the network and host sockets, and have no resource limits"}
}

// probeNone works everywhere: there is nothing to test.
func probeNone(context.Context) (tools.CommandWrapper, string, error) {
	return none{}, "sandbox none: commands run unconfined", nil
}
