package confine

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SealDescriptors marks every descriptor from first up close-on-exec, so that no program
// this process starts inherits one it was not handed on purpose (exec.Cmd's ExtraFiles
// are duplicated afresh in the child). A process inherits whatever its parent left open
// without close-on-exec: a CI wrapper's log, make's jobserver pipe, a secret file
// (`runner run 7<secret 8>>log`); Go's os/exec passes those on to every child.
func SealDescriptors(first int) error {
	err := unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil || !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	// Before Linux 5.11: one fcntl per open descriptor.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= first {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	return nil
}

// joinEmptyKeyring gives the calling thread, and the program it executes, a new session
// keyring of its own, empty: otherwise it shares the runner's, and with it every key the
// runner's session holds. A kernel without keyrings has nothing to hide; the seccomp
// filter (Seccomp.Kernel) denies the keyring calls anyway.
func joinEmptyKeyring() {
	_, _, _ = syscall3(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
}
