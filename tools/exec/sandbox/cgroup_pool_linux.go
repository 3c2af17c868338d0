package sandbox

import (
	"bytes"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agentrunner/runner/tools"
)

// commandCgroups hold one command: its pids cgroup and, where memory is limited, its
// memory cgroup (the same directory on cgroup v2).
type commandCgroups struct {
	dirs   []string
	limits tools.Limits
	// usage is the file with the memory the cgroup is charged ("" without one).
	usage string
	// pool takes the cgroups back after the command (nil: they are removed).
	pool *idlePool[*commandCgroups]
}

// A workspace keeps its commands' cgroups between them (see idlePool): creating and
// removing them costs about 0.3 ms per command on cgroup v1, and an emptied cgroup is as
// good as a new one. A cgroup is reused only when nothing of its last command is left in
// it, not even a zombie (pids.current is 0, so the next command gets its whole
// pids.max), and it holds at most reuseSlack of that command's memory (page cache, tmpfs
// files in the workspace), so the next command gets all of memory_mb but that. Each
// command has the cgroups to itself: two commands of a workspace running at once (a
// server and a command) get two.

// reuseSlack is the memory a command's cgroup may still be charged with (the kernel's own
// objects: a `true` leaves 0.1-1.5 MiB) and go to the next command, for a limit of
// limitMB: at most 4 MiB, and 1/64 of the limit.
func reuseSlack(limitMB int) int64 { return min(4<<20, int64(limitMB)<<20/64) }

// poolKey finds a launcher's cgroup pool among a workspace's values.
type poolKey struct{ l *launcher }

// cgroupsFor returns the cgroups for one command in ws with limits l (already effective),
// nil when the launcher has none: an idle one of the workspace's made for the same limits
// and fit for a command (see reusable), else new ones.
func (l *launcher) cgroupsFor(ws *tools.Workspace, lim tools.Limits) (*commandCgroups, error) {
	if l.cgroup == nil {
		return nil, nil
	}
	pool := workspacePool(l, ws, poolKey{l}, func(cg *commandCgroups) { removeCgroups(cg.dirs) })
	if cg, ok := pool.take(func(cg *commandCgroups) bool { return cg.limits == lim && cg.reusable() }); ok {
		return cg, nil
	}
	dirs, err := l.cgroup.create(lim)
	if err != nil {
		return nil, err
	}
	return &commandCgroups{dirs: dirs, limits: lim, usage: l.cgroup.usageFile(dirs, lim), pool: pool}, nil
}

// usageFile names the file holding the memory charged to a command's cgroups dirs.
func (c *cgroups) usageFile(dirs []string, l tools.Limits) string {
	switch {
	case c.memory == "" || l.MemoryMB <= 0:
		return ""
	case c.memory == c.base:
		return filepath.Join(dirs[0], "memory.current")
	}
	return filepath.Join(dirs[len(dirs)-1], "memory.usage_in_bytes")
}

// release ends a command's hold on its cgroups: everything left in them is killed, then
// they go back to the pool, unless they hold too much memory, or are removed. (Zombies
// may still count in pids.current: the exec tools reap the orphans after Release.) It
// reports whether nothing of the command is left running, which is false without cgroups.
func (cg *commandCgroups) release() bool {
	if cg == nil {
		return false
	}
	// The pids cgroup holds every process of the command.
	swept := sweep(cg.dirs[0], time.Now().Add(time.Second))
	if swept && cg.pool != nil && cg.memoryFit() {
		cg.pool.put(cg)
		return true
	}
	removeCgroups(cg.dirs)
	return swept
}

// reusable reports whether the cgroups exist and hold no process, zombies included, and
// at most reuseSlack of memory. Anything it cannot read makes them unfit.
func (cg *commandCgroups) reusable() bool {
	n, ok := readInt(filepath.Join(cg.dirs[0], "pids.current"))
	return ok && n == 0 && cg.memoryFit()
}

// memoryFit reports whether the memory cgroup, if any, exists and holds at most
// reuseSlack.
func (cg *commandCgroups) memoryFit() bool {
	if cg.usage == "" {
		return true
	}
	n, ok := readInt(cg.usage)
	return ok && n <= reuseSlack(cg.limits.MemoryMB)
}

func readInt(path string) (int64, bool) {
	b, err := readFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	return n, err == nil
}
