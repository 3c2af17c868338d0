//go:build linux && (amd64 || arm64)

package confine

import "golang.org/x/sys/unix"

// KernelDenied names the system calls Seccomp.Kernel denies with EPERM, as SECURITY.md
// lists them. Compared with Docker's default profile (moby profiles/seccomp/default.json):
// the same, except that ptrace, process_vm_readv/writev, personality and the NUMA calls
// stay allowed, as Docker allows them too on kernels since 4.8 or for their harmless
// arguments: debuggers and strace on the command's own processes work, while Landlock
// (its domain) and bwrap (its PID namespace) keep other processes out of reach. clone3
// answers ENOSYS, which makes the C library fall back to clone, whose namespace flags the
// filter can see (clone3 passes them in memory a filter cannot read), as Docker does.
var KernelDenied = []string{
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"unshare", "setns", "clone with CLONE_NEW* flags",
	"mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"bpf", "perf_event_open", "userfaultfd",
	"name_to_handle_at", "open_by_handle_at", "kcmp",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "syslog",
	"settimeofday", "clock_settime", "clock_adjtime",
	"lookup_dcookie", "nfsservctl",
	// amd64 only:
	"iopl", "ioperm", "uselib", "ustat", "sysfs", "_sysctl", "create_module", "get_kernel_syms", "query_module",
}

// kernelCalls are KernelDenied's numbers, without clone's flag rule; archKernelCalls adds
// the architecture's own (iopl on amd64).
var kernelCalls = append([]uint32{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_KCMP,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_SYSLOG,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME,
	unix.SYS_LOOKUP_DCOOKIE, unix.SYS_NFSSERVCTL,
}, archKernelCalls...)

// cloneNewFlags are clone's namespace flags (CLONE_NEWTIME is clone3's and unshare's only).
const cloneNewFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// kernelRules is the part of the filter for Seccomp.Kernel; the accumulator holds the
// call's number on entry and on the way past.
func kernelRules() []unix.SockFilter {
	var prog []unix.SockFilter
	for _, nr := range kernelCalls {
		prog = append(prog, ifEq(nr, unix.SockFilter{Code: ret, K: errno(unix.EPERM)})...)
	}
	prog = append(prog, ifEq(unix.SYS_CLONE3, unix.SockFilter{Code: ret, K: errno(unix.ENOSYS)})...)
	// clone's flags are its first argument on amd64 and arm64 alike.
	return append(prog, ifEq(unix.SYS_CLONE,
		load(argOff(0)),
		unix.SockFilter{Code: jset, Jt: 0, Jf: 1, K: cloneNewFlags},
		unix.SockFilter{Code: ret, K: errno(unix.EPERM)},
		unix.SockFilter{Code: ret, K: allow},
	)...)
}
