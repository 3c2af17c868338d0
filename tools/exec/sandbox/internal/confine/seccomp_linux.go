package confine

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SeccompSupported reports whether the helper has a seccomp filter for this architecture.
func SeccompSupported() bool { return auditArch != 0 }

// Classic BPF opcodes, and where seccomp_data keeps the call's number, architecture and
// arguments (the low 32 bits of argument i, on a little-endian machine).
const (
	ldAbs    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq      = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge      = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jset     = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	and      = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	ret      = unix.BPF_RET | unix.BPF_K
	offNr    = 0
	offArch  = 4
	offArg0  = 16
	allow    = unix.SECCOMP_RET_ALLOW
	sockMask = 0xf // SOCK_TYPE_MASK: the type without SOCK_NONBLOCK and SOCK_CLOEXEC
	// setxattrat and removexattrat (Linux 6.13), numbered alike on every architecture.
	sysSetxattrat    = 463
	sysRemovexattrat = 466
	// fchmodat2 (Linux 6.6).
	sysFchmodat2 = 452
)

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

func load(off uint32) unix.SockFilter { return unix.SockFilter{Code: ldAbs, K: off} }
func argOff(i int) uint32             { return offArg0 + 8*uint32(i) }

// ifEq runs body when the accumulator equals k and skips it otherwise. body must end in a
// return; the accumulator is unchanged on the way past.
func ifEq(k uint32, body ...unix.SockFilter) []unix.SockFilter {
	return append([]unix.SockFilter{{Code: jeq, Jt: 0, Jf: uint8(len(body)), K: k}}, body...)
}

// filter assembles the program for s.
func filter(s Seccomp) []unix.SockFilter {
	prog := []unix.SockFilter{
		load(offArch),
		// A call through another ABI (int 0x80 on amd64) has other numbers: kill it.
		{Code: jeq, Jt: 1, Jf: 0, K: auditArch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		load(offNr),
	}
	if x32Bit != 0 {
		// x32 calls reuse the kernel's implementations under other numbers.
		prog = append(prog, unix.SockFilter{Code: jge, Jt: 0, Jf: 1, K: x32Bit}, unix.SockFilter{Code: ret, K: errno(unix.EPERM)})
	}
	if s.Kernel {
		prog = append(prog, kernelRules()...)
	}
	if s.Metadata {
		for _, nr := range append(xattrCalls, sysSetxattrat, sysRemovexattrat) {
			// ENOTSUP, as on a file system without extended attributes: cp -a and tar go on.
			prog = append(prog, ifEq(nr, unix.SockFilter{Code: ret, K: errno(unix.ENOTSUP)})...)
		}
		for _, c := range append(chmodCalls, chmodCall{sysFchmodat2, 2}) {
			prog = append(prog, ifEq(c.nr,
				load(argOff(c.modeArg)),
				unix.SockFilter{Code: jset, Jt: 0, Jf: 1, K: unix.S_ISUID | unix.S_ISGID},
				unix.SockFilter{Code: ret, K: errno(unix.EPERM)},
				unix.SockFilter{Code: ret, K: allow},
			)...)
		}
	}
	if s.Sockets {
		prog = append(prog, socketRules(s.NoNetwork)...)
	}
	return append(prog, unix.SockFilter{Code: ret, K: allow})
}

// socketRules is the part of the filter for Seccomp.Sockets: an allow-list of what
// socket(2) and socketpair(2) may create, so that a protocol family the list does not name
// (vsock, which no network namespace holds; AF_ALG, AF_PACKET, Bluetooth, ...) is closed
// by default, answering EAFNOSUPPORT as on a kernel built without it. Allowed: unix,
// internet and routing netlink sockets (getaddrinfo and getifaddrs ask the kernel's
// routing tables), and socketpair of unix sockets. Without network (noNetwork), for
// Landlock, whose rules see connect(2) and bind(2) and nothing else: no unix sockets (a
// host service's socket; socketpair stays), only TCP among internet sockets, and no TCP
// Fast Open, which connects inside sendto, sendmsg or sendmmsg (MSG_FASTOPEN in their
// flags, which are in registers the filter can read) where Landlock's hook on connect
// never runs; TCP_FASTOPEN_CONNECT is denied too, which defers connect's work to the
// first write.
func socketRules(noNetwork bool) []unix.SockFilter {
	allowed := unix.SockFilter{Code: ret, K: allow}
	denied := unix.SockFilter{Code: ret, K: errno(unix.EACCES)}
	unsupported := unix.SockFilter{Code: ret, K: errno(unix.EAFNOSUPPORT)}
	inet := []unix.SockFilter{allowed}
	unixSocket := []unix.SockFilter{allowed}
	if noNetwork {
		inet = []unix.SockFilter{
			load(argOff(1)),
			{Code: and, K: sockMask},
			{Code: jeq, Jt: 1, Jf: 0, K: unix.SOCK_STREAM},
			denied,
			load(argOff(2)),
			{Code: jeq, Jt: 1, Jf: 0, K: 0},
			{Code: jeq, Jt: 0, Jf: 1, K: unix.IPPROTO_TCP},
			allowed,
			denied,
		}
		unixSocket = []unix.SockFilter{denied}
	}
	netlink := []unix.SockFilter{
		load(argOff(2)),
		{Code: jeq, Jt: 0, Jf: 1, K: unix.NETLINK_ROUTE},
		allowed,
		{Code: ret, K: errno(unix.EPROTONOSUPPORT)},
	}
	socket := []unix.SockFilter{load(argOff(0))}
	socket = append(socket, ifEq(unix.AF_UNIX, unixSocket...)...)
	socket = append(socket, ifEq(unix.AF_INET, inet...)...)
	socket = append(socket, ifEq(unix.AF_INET6, inet...)...)
	socket = append(socket, ifEq(unix.AF_NETLINK, netlink...)...)
	socket = append(socket, unsupported)
	prog := ifEq(unix.SYS_SOCKET, socket...)
	prog = append(prog, ifEq(unix.SYS_SOCKETPAIR,
		load(argOff(0)),
		unix.SockFilter{Code: jeq, Jt: 0, Jf: 1, K: unix.AF_UNIX},
		allowed,
		unsupported,
	)...)
	if !noNetwork {
		return prog
	}
	fastOpen := []unix.SockFilter{
		{Code: jset, Jt: 0, Jf: 1, K: unix.MSG_FASTOPEN},
		{Code: ret, K: errno(unix.EPERM)},
		allowed,
	}
	for _, c := range []struct {
		nr       uint32
		flagsArg int
	}{{unix.SYS_SENDTO, 3}, {unix.SYS_SENDMSG, 2}, {unix.SYS_SENDMMSG, 3}} {
		prog = append(prog, ifEq(c.nr, append([]unix.SockFilter{load(argOff(c.flagsArg))}, fastOpen...)...)...)
	}
	return append(prog, ifEq(unix.SYS_SETSOCKOPT,
		load(argOff(1)),
		unix.SockFilter{Code: jeq, Jt: 0, Jf: 3, K: unix.IPPROTO_TCP},
		load(argOff(2)),
		unix.SockFilter{Code: jeq, Jt: 0, Jf: 1, K: unix.TCP_FASTOPEN_CONNECT},
		unix.SockFilter{Code: ret, K: errno(unix.EPERM)},
		allowed,
	)...)
}

// FilterProgram returns the filter for s as the raw sock_filter array that bwrap's
// --seccomp reads (each instruction 8 bytes in the machine's order), or nil when this
// architecture has none.
func FilterProgram(s Seccomp) []byte {
	if auditArch == 0 {
		return nil
	}
	prog := filter(s)
	b := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		b = binary.NativeEndian.AppendUint16(b, f.Code)
		b = append(b, f.Jt, f.Jf)
		b = binary.NativeEndian.AppendUint32(b, f.K)
	}
	return b
}

// installSeccomp applies the filter for s to the calling thread (no_new_privs must be set),
// which hands it on to the program it executes.
func installSeccomp(s Seccomp) error { return installFilter(s, filter(s)) }

// installFilter is installSeccomp with the program already assembled: the helper builds it
// before it lowers its memory limit, under which the allocation failed fatally.
func installFilter(s Seccomp, prog []unix.SockFilter) error {
	if !s.Sockets && !s.Metadata && !s.Kernel {
		return nil
	}
	if auditArch == 0 {
		return fmt.Errorf("no seccomp filter for this architecture")
	}
	if err := prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("install seccomp filter: %w", err)
	}
	return nil
}
