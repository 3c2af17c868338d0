//go:build linux

package confine

import "golang.org/x/sys/unix"

// chmodCall is a chmod-like call and the index of its mode argument.
type chmodCall struct {
	nr      uint32
	modeArg int
}

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000 // __X32_SYSCALL_BIT
)

var (
	xattrCalls = []uint32{unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
		unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR}
	chmodCalls = []chmodCall{{unix.SYS_CHMOD, 1}, {unix.SYS_FCHMOD, 1}, {unix.SYS_FCHMODAT, 2}}
)

// archKernelCalls are the amd64 calls Seccomp.Kernel denies beyond kernelCalls' (see
// KernelDenied): port I/O and calls long obsolete.
var archKernelCalls = []uint32{
	unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_SYSFS, unix.SYS__SYSCTL,
	unix.SYS_CREATE_MODULE, unix.SYS_GET_KERNEL_SYMS, unix.SYS_QUERY_MODULE,
}
