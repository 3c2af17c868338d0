package sandbox

import (
	"bytes"
	"path/filepath"
	"strconv"
	"sync"
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
	pool *cgroupPool
}

// cgroupPool keeps a workspace's command cgroups between its commands: creating and
// removing them costs about 0.3 ms per command on cgroup v1, and an emptied cgroup is as
// good as a new one. A cgroup is reused only when nothing of its last command is left in
// it, not even a zombie (pids.current is 0, so the next command gets its whole
// pids.max), and it holds at most reuseSlack of that command's memory (page cache, tmpfs
// files in the workspace), so the next command gets all of memory_mb but that. Each
// command has the cgroups to itself: two commands of a workspace running at once (a
// server and a command) get two.
type cgroupPool struct {
	mu     sync.Mutex
	idle   []*commandCgroups
	closed bool
}

// maxIdlePerWorkspace bounds the cgroups, and the temp directories, a workspace keeps: its
// commands rarely overlap.
const maxIdlePerWorkspace = 4

// reuseSlack is the memory a command's cgroup may still be charged with (the kernel's own
// objects: a `true` leaves 0.1-1.5 MiB) and go to the next command, for a limit of
// limitMB: at most 4 MiB, and 1/64 of the limit.
func reuseSlack(limitMB int) int64 { return min(4<<20, int64(limitMB)<<20/64) }

// poolKey finds a launcher's pool among a workspace's values.
type poolKey struct{ l *launcher }

// cgroupsFor returns the cgroups for one command in ws with limits l (already effective),
// nil when the launcher has none: an idle one of the workspace's, else new ones.
func (l *launcher) cgroupsFor(ws *tools.Workspace, lim tools.Limits) (*commandCgroups, error) {
	if l.cgroup == nil {
		return nil, nil
	}
	pool := l.poolOf(ws)
	if cg := pool.take(lim); cg != nil {
		return cg, nil
	}
	dirs, err := l.cgroup.create(lim)
	if err != nil {
		return nil, err
	}
	return &commandCgroups{dirs: dirs, limits: lim, usage: l.cgroup.usageFile(dirs, lim), pool: pool}, nil
}

// poolOf returns ws's pool for this launcher, made (and removed with ws) on first use.
func (l *launcher) poolOf(ws *tools.Workspace) *cgroupPool {
	l.poolMu.Lock()
	defer l.poolMu.Unlock()
	key := poolKey{l}
	if p, ok := ws.Value(key).(*cgroupPool); ok {
		return p
	}
	p := &cgroupPool{}
	ws.SetValue(key, p)
	ws.OnClose(p.close)
	return p
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

// take returns an idle cgroup made for the same limits that is fit for a command (see
// reusable: checked here, when it counts, since it may have been removed or entered
// while idle), removing those that are not, or nil.
func (p *cgroupPool) take(l tools.Limits) *commandCgroups {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return nil
		}
		cg := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if cg.limits == l && cg.reusable() {
			return cg
		}
		removeCgroups(cg.dirs)
	}
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
	if swept && cg.pool != nil && cg.memoryFit() && cg.pool.put(cg) {
		return true
	}
	removeCgroups(cg.dirs)
	return swept
}

// put keeps cg for a later command, unless the pool is closed or full.
func (p *cgroupPool) put(cg *commandCgroups) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= maxIdlePerWorkspace {
		return false
	}
	p.idle = append(p.idle, cg)
	return true
}

// close removes the idle cgroups; those still in use are removed on release.
func (p *cgroupPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, cg := range idle {
		removeCgroups(cg.dirs)
	}
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
