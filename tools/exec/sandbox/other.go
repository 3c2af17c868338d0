//go:build !linux

package sandbox

import (
	"context"
	"errors"

	"github.com/agentrunner/runner/tools"
)

var errNotLinux = errors.New("needs Linux")

// The modes that need Linux keep their rows everywhere (a task file names its mode on any
// machine), and probe to errNotLinux elsewhere.
func probeBwrap(context.Context) (tools.CommandWrapper, string, error) { return nil, "", errNotLinux }
func probeLandlock(context.Context) (tools.CommandWrapper, string, error) {
	return nil, "", errNotLinux
}
func runHelper([]string) error  { return errNotLinux }
func sealDescriptors(int) error { return nil }
