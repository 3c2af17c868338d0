//go:build linux && !amd64 && !arm64

package confine

import "golang.org/x/sys/unix"

// chmodCall is a chmod-like call and the index of its mode argument.
type chmodCall struct {
	nr      uint32
	modeArg int
}

// No filter here: auditArch 0 makes SeccompSupported false and the sandbox says so.
const (
	auditArch = 0
	x32Bit    = 0
)

var (
	xattrCalls []uint32
	chmodCalls []chmodCall
)

// kernelRules: there is no filter on this architecture.
func kernelRules() []unix.SockFilter { return nil }
