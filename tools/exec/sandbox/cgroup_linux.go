package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentrunner/runner/tools"
)

// cgroups makes a cgroup per command below the runner's own, in the pids hierarchy and,
// where the memory controller can be used, in the memory one (the same directory on
// cgroup v2). The kernel ignores RLIMIT_NPROC for root, so as root pids.max is what caps a
// fork bomb; memory.max (v1: memory.limit_in_bytes) caps the memory of all the command's
// processes together, where RLIMIT_DATA caps each alone; and the process list is how the
// stragglers that left the process group are found and killed.
type cgroups struct {
	base string
	// memory is the base of the memory hierarchy ("" when memory cannot be limited),
	// base itself on v2.
	memory string
	// threads is true on cgroup v1, where a thread can move alone (see forkInside).
	threads bool
}

// cgroupSeq numbers the runner's cgroups: one sequence for all launchers, since bwrap and
// Landlock scenarios of one run create theirs side by side in the same hierarchy.
var cgroupSeq atomic.Int64

// findCgroups finds the runner's cgroup in a hierarchy with the pids controller (cgroup
// v1, or v2 with pids delegated to children) and checks that a child can be made there;
// then the memory controller likewise, which is optional.
func findCgroups() (*cgroups, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	base, v2 := locate(string(own), string(mounts), "pids")
	if base == "" {
		return nil, errors.New("no cgroup hierarchy with the pids controller")
	}
	if err := delegate(base, v2, "pids"); err != nil {
		return nil, err
	}
	c := &cgroups{base: base}
	dirs, err := c.create(tools.Limits{Processes: 1})
	if err != nil {
		return nil, err
	}
	removeCgroups(dirs)
	memV2 := false
	if mem, v2 := locate(string(own), string(mounts), "memory"); mem != "" && delegate(mem, v2, "memory") == nil {
		c.memory, memV2 = mem, v2
		if dirs, err := c.create(tools.Limits{Processes: 1, MemoryMB: 64}); err == nil {
			removeCgroups(dirs)
		} else {
			c.memory, memV2 = "", false
		}
	}
	c.threads = !v2 && !memV2 && fileExists(filepath.Join(base, "tasks"))
	return c, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// home returns the runner's own cgroup directories, one per hierarchy of c.
func (c *cgroups) home() []string {
	if c.memory == "" || c.memory == c.base {
		return []string{c.base}
	}
	return []string{c.base, c.memory}
}

// Below these limits a command's process is not forked from inside its cgroups (see
// forkInside): the forking thread and bwrap itself must fit within pids.max with room to
// spare, and nothing the fork charges may bring the memory cgroup near its limit, whose
// OOM killer would then choose among the runner's threads too.
const (
	minProcessesInside = 8
	minMemoryMBInside  = 64
)

// forkInside runs start, a fork, on a thread of its own that it moves into the cgroups
// dirs first and back home after: the child is born in them, as everything it starts
// will be. Moving a process in afterwards (cgroup.procs) takes the cgroup threadgroup
// lock, which waits for an RCU grace period first: 0.1 to 10 ms per command on a 2-core
// machine, while a thread that moves itself (0 to cgroup v1's tasks) takes no such lock.
// Only for cgroup v1 (c.threads).
//
// start is told whether it runs inside every one of dirs, and so whether the child is
// born in them; if not, it runs at home. A thread that cannot get back home ends with its
// goroutine, which Go does to a locked thread, rather than stay in a command's cgroup;
// bwrap's --die-with-parent, which watches the thread that forked it, then ends the
// command too (it fails closed). Otherwise the thread lives on in Go's pool, as any.
func (c *cgroups) forkInside(dirs []string, start func(inside bool) error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		moved, _ := moveThread(dirs)
		if moved < len(dirs) { // the child joins them the usual way
			if err := moveThreadHome(c.home(), moved); err != nil {
				done <- err
				return // locked: Go ends the thread
			}
			moved = 0
		}
		err := start(moved > 0)
		if moveThreadHome(c.home(), moved) != nil {
			done <- err
			return
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}

// moveThread moves the calling thread into each of dirs in turn, and says into how many.
func moveThread(dirs []string) (int, error) {
	for i, d := range dirs {
		if err := writeFile(filepath.Join(d, "tasks"), []byte("0")); err != nil {
			return i, fmt.Errorf("enter cgroup %s: %w", d, err)
		}
	}
	return len(dirs), nil
}

// moveThreadHome moves the calling thread back into the first n of home.
func moveThreadHome(home []string, n int) error {
	_, err := moveThread(home[:n])
	return err
}

// delegate enables controller for the children of a v2 cgroup.
func delegate(base string, v2 bool, controller string) error {
	if !v2 || hasWord(base, "cgroup.subtree_control", controller) {
		return nil
	}
	// Delegating to our children fails if our cgroup holds processes (v2's
	// no-internal-processes rule), which it does unless it is the root.
	if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+"+controller), 0); err != nil {
		return fmt.Errorf("enable %s in %s: %w", controller, base, err)
	}
	return nil
}

// locate returns the directory of the runner's own cgroup with controller and whether it
// is v2.
func locate(procCgroup, mountinfo, controller string) (string, bool) {
	var v1Path, v2Path string
	haveV1, haveV2 := false, false
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Path, haveV2 = parts[2], true
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == controller {
				v1Path, haveV1 = parts[2], true
			}
		}
	}
	for _, line := range strings.Split(mountinfo, "\n") {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		fields := strings.Fields(line)
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		root, point, fstype, superOpts := fields[3], fields[4], fields[sep+1], fields[sep+3]
		switch {
		case haveV1 && fstype == "cgroup" && hasOption(superOpts, controller):
			return filepath.Join(point, strings.TrimPrefix(v1Path, root)), false
		case haveV2 && !haveV1 && fstype == "cgroup2":
			dir := filepath.Join(point, strings.TrimPrefix(v2Path, root))
			if hasWord(dir, "cgroup.controllers", controller) {
				return dir, true
			}
		}
	}
	return "", false
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// hasWord reports whether the file dir/name lists word.
func hasWord(dir, name, word string) bool {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return false
	}
	for _, w := range strings.Fields(string(b)) {
		if w == word {
			return true
		}
	}
	return false
}

// create makes the cgroups of one command, allowing l.Processes processes and, where the
// memory controller is used, l.MemoryMB of memory for all of them together.
func (c *cgroups) create(l tools.Limits) ([]string, error) {
	name := fmt.Sprintf("runner-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	dir := filepath.Join(c.base, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create pids cgroup: %w", err)
	}
	dirs := []string{dir}
	if err := writeFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(l.Processes))); err != nil {
		removeCgroups(dirs)
		return nil, fmt.Errorf("set pids.max: %w", err)
	}
	if c.memory == "" || l.MemoryMB <= 0 {
		return dirs, nil
	}
	limit := []byte(strconv.FormatInt(int64(l.MemoryMB)<<20, 10))
	files := []string{"memory.max", "memory.swap.max"}
	if c.memory != c.base { // v1: its own hierarchy, other file names
		files = []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"}
		dir = filepath.Join(c.memory, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			removeCgroups(dirs)
			return nil, fmt.Errorf("create memory cgroup: %w", err)
		}
		dirs = append(dirs, dir)
	}
	if err := writeFile(filepath.Join(dir, files[0]), limit); err != nil {
		removeCgroups(dirs)
		return nil, fmt.Errorf("set %s: %w", files[0], err)
	}
	// Without swap accounting the file is missing: memory then may spill to swap.
	swap := limit
	if files[1] == "memory.swap.max" {
		swap = []byte("0")
	}
	_ = writeFile(filepath.Join(dir, files[1]), swap)
	return dirs, nil
}

// join moves process pid into every cgroup of dirs.
func join(dirs []string, pid int) error {
	for _, d := range dirs {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid))); err != nil {
			return fmt.Errorf("join cgroup %s: %w", d, err)
		}
	}
	return nil
}

// writeFile is os.WriteFile for a cgroup's files in three system calls: os.WriteFile also
// registers the file with Go's poller, four more per write.
func writeFile(path string, b []byte) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer func() { _ = unix.Close(fd) }() // a kernel object's descriptor, not a file: Close loses no data
	if _, err := unix.Write(fd, b); err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// readFile is os.ReadFile for a cgroup's small files, as writeFile.
func readFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer func() { _ = unix.Close(fd) }() // a kernel object's descriptor, not a file: Close loses no data
	var out []byte
	buf := make([]byte, 512)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// removeCgroups removes each of dirs (see removeCgroup), the pids one first: killing there
// empties the others.
func removeCgroups(dirs []string) {
	for _, d := range dirs {
		removeCgroup(d)
	}
}

// removeCgroup kills every process left in the cgroup (see sweep), then removes it. It
// gives up after a second: a leftover empty directory is harmless.
func removeCgroup(dir string) {
	deadline := time.Now().Add(time.Second)
	wait := 20 * time.Microsecond
	for {
		if sweep(dir, deadline) {
			if err := syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
				return
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Millisecond)
	}
}

// sweep kills every process in the cgroup, round after round (a process may fork while
// the previous round is being killed), until none is left, and reports whether that
// happened before deadline. Dying processes leave within microseconds, so the waits start
// short.
func sweep(dir string, deadline time.Time) bool {
	wait := 20 * time.Microsecond
	for {
		pids := cgroupPids(dir)
		if len(pids) == 0 {
			return true
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Millisecond)
	}
}

func cgroupPids(dir string) []int {
	b, err := readFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	self := os.Getpid() // a thread of the runner's forking from inside (see forkInside)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil && pid > 0 && pid != self {
			pids = append(pids, pid)
		}
	}
	return pids
}
