package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// pidsCgroup makes a pids cgroup per command, below the runner's own. The kernel ignores
// RLIMIT_NPROC for root, so as root this is what caps a fork bomb, and its process list is
// how the stragglers that left the process group are found and killed.
type pidsCgroup struct {
	base string
	seq  atomic.Int64
}

// findPidsCgroup finds the runner's cgroup in a hierarchy with the pids controller (cgroup
// v1, or v2 with pids delegated to children) and checks that a child can be made there.
func findPidsCgroup() (*pidsCgroup, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	base, v2 := locatePids(string(own), string(mounts))
	if base == "" {
		return nil, errors.New("no cgroup hierarchy with the pids controller")
	}
	if v2 && !hasWord(base, "cgroup.subtree_control", "pids") {
		// Delegating pids to our children fails if our cgroup holds processes (v2's
		// no-internal-processes rule), which it does unless it is the root.
		if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
			return nil, fmt.Errorf("enable pids in %s: %w", base, err)
		}
	}
	c := &pidsCgroup{base: base}
	dir, err := c.create(1)
	if err != nil {
		return nil, err
	}
	removeCgroup(dir)
	return c, nil
}

// locatePids returns the directory of the runner's own pids cgroup and whether it is v2.
func locatePids(procCgroup, mountinfo string) (string, bool) {
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
			if c == "pids" {
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
		case haveV1 && fstype == "cgroup" && hasOption(superOpts, "pids"):
			return filepath.Join(point, strings.TrimPrefix(v1Path, root)), false
		case haveV2 && !haveV1 && fstype == "cgroup2":
			dir := filepath.Join(point, strings.TrimPrefix(v2Path, root))
			if hasWord(dir, "cgroup.controllers", "pids") {
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

// create makes a child cgroup allowing max processes.
func (c *pidsCgroup) create(max int) (string, error) {
	dir := filepath.Join(c.base, fmt.Sprintf("runner-%d-%d", os.Getpid(), c.seq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("create pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		_ = syscall.Rmdir(dir)
		return "", fmt.Errorf("set pids.max: %w", err)
	}
	return dir, nil
}

// removeCgroup kills every process left in the cgroup, round after round (a process may
// fork while the previous round is being killed), then removes it. Dying processes leave
// within microseconds, so the waits start short. It gives up after a second: a leftover
// empty directory is harmless.
func removeCgroup(dir string) {
	deadline := time.Now().Add(time.Second)
	wait := 20 * time.Microsecond
	for {
		pids := cgroupPids(dir)
		if len(pids) == 0 {
			if err := syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
				return
			}
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Millisecond)
	}
}

func cgroupPids(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}
