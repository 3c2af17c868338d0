package exec

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// reaper makes the runner a child subreaper (PR_SET_CHILD_SUBREAPER), so that a process
// that left its command's process group and lost its parent (a double fork, setsid) is
// re-parented to the runner rather than to init, and kills such orphans once their command
// has ended. Without it, under --sandbox none (or Landlock without a cgroup) a daemonised
// child outlives its command and can rewrite the workspace after task_complete.
//
// The runner runs several scenarios' commands at once, so an orphan must be told from the
// others by the command it belongs to: killed when that command has ended, never because
// another one did (a test's database, daemonised by the command that runs the tests).
// A command's leader starts its own session, so an orphan whose session is a running
// leader's is that command's. One that started a session of its own carries its
// command's mark in its environment (markVar, a random value per command, which no other
// command can read under Landlock, whose domains keep each other's /proc/PID/environ
// closed); the Landlock helper also makes each leader a subreaper, so that its orphans come
// back to it, not to the runner, while it runs. Every other child of the runner in a
// session other than the runner's own is an escapee. Children the runner starts otherwise
// stay in the runner's session and are never touched.
var reaper = struct {
	once sync.Once
	ok   bool
	// mu serialises starts and sweeps: a leader is in live before a sweep can see it.
	mu sync.Mutex
	// live maps each running leader to its command's mark ("" without one).
	live map[int]string
	sid  int
}{live: map[int]string{}}

// markVar is the variable that carries a command's mark (see reaper).
const markVar = "RUNNER_COMMAND_MARK"

// newMark returns a command's mark: 64 random bits.
func newMark() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails on Linux
	return hex.EncodeToString(b[:])
}

// startTracked starts cmd and records its leader as live, with the mark its environment
// carries.
func startTracked(start func() error, pid func() int, mark string) error {
	reaper.once.Do(func() {
		reaper.sid, _ = unix.Getsid(0)
		reaper.ok = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
	})
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if err := start(); err != nil {
		return err
	}
	reaper.live[pid()] = mark
	return nil
}

// forget forgets a reaped leader whose command left no orphans.
func forget(leader int) {
	reaper.mu.Lock()
	delete(reaper.live, leader)
	reaper.mu.Unlock()
}

// finished forgets a reaped leader and kills and reaps the orphans left by commands that
// have ended, round after round: a killed orphan's own children come to the runner next.
func finished(leader int) {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	delete(reaper.live, leader)
	if !reaper.ok {
		return
	}
	marks := make(map[string]bool, len(reaper.live))
	for _, m := range reaper.live {
		if m != "" {
			marks[m] = true
		}
	}
	for round := 0; round < 1000; round++ {
		var killed []int
		for _, pid := range children() {
			if _, leader := reaper.live[pid]; leader {
				continue
			}
			if engineMonitor(pid) {
				reapIfExited(pid)
				continue
			}
			sid, err := unix.Getsid(pid)
			if _, running := reaper.live[sid]; err != nil || sid == reaper.sid || running || marks[markOf(pid)] {
				continue
			}
			_ = unix.Kill(pid, unix.SIGKILL)
			killed = append(killed, pid)
		}
		if len(killed) == 0 {
			return
		}
		for _, pid := range killed {
			var ws unix.WaitStatus
			for {
				if _, err := unix.Wait4(pid, &ws, 0, nil); !errors.Is(err, unix.EINTR) {
					break
				}
			}
		}
	}
}

// markOf returns the command mark in the environment pid started with, "" if none.
func markOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(markVar+"=")); ok {
			return string(v)
		}
	}
	return ""
}

// engineMonitor reports whether pid is a container engine's monitor: podman runs no
// daemon, so each container and each `podman exec` has a conmon that daemonises (setsid)
// and, the runner being a subreaper, becomes the runner's child. Podman puts it in a
// cgroup of its own (…/libpod_parent/conmon, or libpod-conmon-ID.scope under systemd);
// an agent's process cannot move itself there under Landlock (no write to /sys/fs/cgroup),
// and bwrap's PID namespace never lets one reach the runner.
func engineMonitor(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	return err == nil && strings.Contains(string(b), "conmon")
}

// reapIfExited collects an engine monitor that has exited, so it leaves no zombie.
func reapIfExited(pid int) {
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
}

// children lists the runner's child processes: /proc/self/task/*/children, each thread's
// (a fork's parent is the thread that forked), or a scan of /proc without that file.
func children() []int {
	var pids []int
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "children"))
		if errors.Is(err, os.ErrNotExist) {
			return scanChildren()
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// scanChildren finds the runner's children by their parent in /proc/<pid>/stat.
func scanChildren() []int {
	self := syscall.Getpid()
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(self) {
			pids = append(pids, pid)
		}
	}
	return pids
}
