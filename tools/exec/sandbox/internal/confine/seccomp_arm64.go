//go:build linux

package confine

import "golang.org/x/sys/unix"

// chmodCall is a chmod-like call and the index of its mode argument.
type chmodCall struct {
	nr      uint32
	modeArg int
}

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
)

var (
	xattrCalls = []uint32{unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
		unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR}
	chmodCalls = []chmodCall{{unix.SYS_FCHMOD, 1}, {unix.SYS_FCHMODAT, 2}}
)

// archKernelCalls: arm64 has none of amd64's extra calls.
var archKernelCalls []uint32
