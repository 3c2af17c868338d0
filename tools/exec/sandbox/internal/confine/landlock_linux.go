package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights granted or restricted.
const (
	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR
	writeRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_REFER // rename and link across directories (git, mv)
	// fileRights are the only rights a rule on a file (not a directory) may grant.
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	deviceRights = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// netDenied is restricted without network: connect, not bind (a test may listen, but
	// nothing can reach out). UDP (ABI 10) is not in x/sys yet: 1<<3.
	netDenied = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP | 1<<3
)

// devices are the device files every program may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// ABI returns the kernel's Landlock ABI version, 0 without Landlock.
func ABI() int {
	v, _, errno := syscall3(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// handledFor returns the rights a kernel with Landlock ABI abi can restrict: everything it
// knows, so that what is not granted is denied.
func handledFor(abi int) (fs, net, scoped uint64) {
	switch {
	case abi >= 9:
		fs = 1<<17 - 1 // + resolve unix sockets
	case abi >= 5:
		fs = 1<<16 - 1 // + ioctl on devices
	case abi >= 3:
		fs = 1<<15 - 1 // + truncate
	case abi >= 2:
		fs = 1<<14 - 1 // + refer
	default:
		fs = 1<<13 - 1
	}
	switch {
	case abi >= 10:
		net = 1<<4 - 1 // + UDP
	case abi >= 4:
		net = 1<<2 - 1 // TCP
	}
	if abi >= 6 {
		scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	return fs, net, scoped
}

// restrictThread applies r to the calling thread, and so to the program it executes next.
// Landlock only grants: what r does not list cannot be opened at all.
func restrictThread(r *Rules) error {
	abi := ABI()
	if abi < 1 {
		return errors.New("the kernel does not support Landlock")
	}
	fsHandled, netHandled, scoped := handledFor(abi)
	if r.Network {
		netHandled = 0
	} else {
		netHandled &= netDenied
	}
	attr := unix.LandlockRulesetAttr{Access_fs: fsHandled, Access_net: netHandled, Scoped: scoped}
	fd, _, errno := syscall3(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("create ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer func() { _ = unix.Close(ruleset) }() // a kernel object's descriptor, not a file: Close loses no data
	type grantSet struct {
		paths  []string
		access uint64
	}
	for _, g := range []grantSet{
		{r.List, unix.LANDLOCK_ACCESS_FS_READ_DIR},
		{r.Read, readRights},
		// coverDir: coverage builds write their counters just before the exec.
		{append(r.Write, coverDir), readRights | writeRights},
		{devices, deviceRights},
	} {
		for _, p := range g.paths {
			if err := grant(ruleset, p, g.access&fsHandled); err != nil {
				return err
			}
		}
	}
	if netHandled&unix.LANDLOCK_ACCESS_NET_CONNECT_TCP != 0 {
		for _, port := range r.ConnectPorts {
			if err := grantPort(ruleset, port); err != nil {
				return err
			}
		}
	}
	if err := prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if _, _, errno := syscall3(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("restrict: %w", errno)
	}
	return nil
}

// netPortAttr is struct landlock_net_port_attr (x/sys has no type for it yet).
type netPortAttr struct {
	allowedAccess uint64
	port          uint64
}

// ruleNetPort is LANDLOCK_RULE_NET_PORT.
const ruleNetPort = 2

// grantPort allows TCP connections to port (on any address: Landlock's network rules
// know ports only).
func grantPort(ruleset, port int) error {
	rule := netPortAttr{allowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
	_, _, errno := syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), ruleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("grant TCP port %d: %w", port, errno)
	}
	return nil
}

// grant adds a rule giving access below path (or to path, a file).
func grant(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // vanished since it was listed: nothing to grant
	}
	defer func() { _ = unix.Close(fd) }() // a kernel object's descriptor, not a file: Close loses no data
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	if access == 0 {
		return nil
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("grant %s: %w", path, errno)
	}
	return nil
}

// Readable lists what to grant so that everything under the roots except the denied paths
// can be read (see readable): read are whole trees and single files, list the directories
// on the way down to a denied path. Computed by the runner once, not by every helper.
func Readable(roots, deny []string) (read, list []string) {
	for _, root := range roots {
		dirs, files, listOnly := readable(root, deny)
		read = append(append(read, dirs...), files...)
		list = append(list, listOnly...)
	}
	return read, list
}

// readable lists what to grant so that everything under root except the denied paths can be read:
// whole trees that hold no denied path (dirs), single files beside a denied path (files),
// and the directories on the way down to one (listOnly). Landlock inherits a grant
// downwards, so those only get ReadDir: a denied directory can be listed, not read.
func readable(root string, deny []string) (dirs, files, listOnly []string) {
	var walk func(dir string)
	walk = func(dir string) {
		if !holdsAny(dir, deny) {
			dirs = append(dirs, dir)
			return
		}
		if isDenied(dir, deny) {
			return
		}
		listOnly = append(listOnly, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.Type()&os.ModeSymlink != 0 {
				// A grant on a link applies to its target: one leading to or into a denied
				// path, or to a directory holding one, is left out.
				target, err := filepath.EvalSymlinks(p)
				if err != nil || isDenied(target, deny) || holdsAny(target, deny) {
					continue
				}
			}
			fi, err := os.Stat(p)
			switch {
			case err != nil:
			case fi.IsDir():
				walk(p)
			case !isDenied(p, deny):
				files = append(files, p)
			}
		}
	}
	walk(root)
	return dirs, files, listOnly
}

// holdsAny reports whether a denied path is dir or lies below it.
func holdsAny(dir string, deny []string) bool {
	for _, d := range deny {
		if Within(d, dir) {
			return true
		}
	}
	return false
}

// isDenied reports whether p is a denied path or lies below one.
func isDenied(p string, deny []string) bool {
	for _, d := range deny {
		if Within(p, d) {
			return true
		}
	}
	return false
}

// Within reports whether the absolute path p is dir or below it.
func Within(p, dir string) bool {
	if dir == "/" {
		return filepath.IsAbs(p)
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
