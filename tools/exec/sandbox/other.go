//go:build !linux

package sandbox

import (
	"context"
	"errors"

	"github.com/agentrunner/runner/tools"
)

var errNotLinux = errors.New("needs Linux")

func probeBwrap(context.Context) (tools.CommandWrapper, string, error) { return nil, "", errNotLinux }
func probeLandlock(context.Context) (tools.CommandWrapper, string, error) {
	return nil, "", errNotLinux
}
func runHelper([]string) error  { return errNotLinux }
func sealDescriptors(int) error { return nil }
