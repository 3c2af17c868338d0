//go:build linux

package sandbox

// A workspace's commands share cgroups one after another (see cgroupsFor): these attacks
// check that a command inherits nothing from the one before, in every sandbox with cgroups.

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

// withCgroups returns the sandboxes that make cgroups here, skipping the test if none does.
func withCgroups(t *testing.T) []confined {
	t.Helper()
	var out []confined
	for _, sb := range sandboxes(t) {
		if launcherOf(sb.wrapper).cgroup != nil {
			out = append(out, sb)
		}
	}
	if len(out) == 0 {
		t.Skip("no writable cgroups here")
	}
	return out
}

// idleCgroups lists the cgroups ws keeps for w's next command.
func idleCgroups(ws *tools.Workspace, w tools.CommandWrapper) [][]string {
	p, _ := ws.Value(poolKey{launcherOf(w)}).(*idlePool[*commandCgroups])
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out [][]string
	for _, cg := range p.idle {
		out = append(out, cg.dirs)
	}
	return out
}

func requirePython(t *testing.T) {
	t.Helper()
	if _, err := osexec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// forkCount is a command that forks n children that sleep, and prints how many it got.
func forkCount(n int) string {
	return fmt.Sprintf(`python3 -c '
import os, time
got = 0
for i in range(%d):
    try:
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        got += 1
    except OSError:
        pass
print("forked", got)'`, n)
}

func forked(t *testing.T, res tools.Result) int {
	t.Helper()
	_, after, ok := strings.Cut(res.Output, "forked ")
	assert.Assert(t, ok, res.Output)
	n, err := strconv.Atoi(strings.Fields(after)[0])
	assert.NilError(t, err, res.Output)
	return n
}

// A command's leftovers (background jobs, a double-forked setsid child) are gone the moment
// its call returns, so none is counted against the next command in the same cgroup: that
// one gets its whole pids.max.
func TestReusedCgroupHoldsNothingOfTheCommandBefore(t *testing.T) {
	requirePython(t)
	for _, sb := range withCgroups(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			ws.Limits.Processes = 16
			m := marker()
			res := run(t, ws, fmt.Sprintf(`for i in 1 2 3 4 5 6 7 8; do sleep 100 %s & done; setsid sh -c 'sleep 100 %s & :' & sleep 0.2; echo started`, m, m), 10)
			assert.Assert(t, res.Success, res.Output)
			assert.Check(t, is.Len(processesWith(m), 0), "left behind after the call returned")
			idle := idleCgroups(ws, sb.wrapper)
			assert.Assert(t, is.Len(idle, 1))
			// Under Landlock the killed jobs were the runner's zombies until its sweep of
			// orphans reaped them, before the call returned.
			assert.Check(t, is.Equal(read(t, idle[0][0], "pids.current"), "0"))
			res = run(t, ws, forkCount(12), 10)
			assert.Check(t, is.Equal(forked(t, res), 12), "the next command did not get its %d processes: %s", 12, res.Output)
		})
	}
}

// A fork bomb in a command that runs in a reused cgroup still hits that command's pids.max.
func TestForkBombInAReusedCgroupHitsTheLimit(t *testing.T) {
	requirePython(t)
	for _, sb := range withCgroups(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			ws.Limits.Processes = 20
			assert.Assert(t, run(t, ws, "true", 5).Success)
			before := idleCgroups(ws, sb.wrapper)
			assert.Assert(t, is.Len(before, 1), "true left its cgroup unfit for reuse")
			res := run(t, ws, forkCount(100), 10)
			n := forked(t, res)
			assert.Check(t, n > 0 && n < 20, "forked %d under pids.max 20", n)
			assert.Check(t, is.Equal(run(t, ws, "echo alive", 5).Output, "alive\n[exit code 0]"))
		})
	}
}

// A cgroup removed behind the runner's back (it is empty between commands) is not
// reused: the next command gets a new one, as confined.
func TestCgroupRemovedBetweenCommandsIsReplaced(t *testing.T) {
	requirePython(t)
	for _, sb := range withCgroups(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			ws.Limits.Processes = 20
			assert.Assert(t, run(t, ws, "true", 5).Success)
			idle := idleCgroups(ws, sb.wrapper)
			assert.Assert(t, is.Len(idle, 1))
			removeCgroups(idle[0])
			assert.Assert(t, run(t, ws, "true", 5).Success)
			now := idleCgroups(ws, sb.wrapper)
			assert.Assert(t, is.Len(now, 1))
			assert.Check(t, now[0][0] != idle[0][0], "the removed cgroup came back")
			res := run(t, ws, forkCount(100), 10)
			n := forked(t, res)
			assert.Check(t, n > 0 && n < 20, "forked %d under pids.max 20", n)
		})
	}
}

// A cgroup made for other limits (a test changing ws.Limits) is not reused.
func TestCgroupForOtherLimitsIsNotReused(t *testing.T) {
	for _, sb := range withCgroups(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			ws.Limits.Processes = 20
			assert.Assert(t, run(t, ws, "true", 5).Success)
			before := idleCgroups(ws, sb.wrapper)
			ws.Limits.Processes = 30
			assert.Assert(t, run(t, ws, "true", 5).Success)
			now := idleCgroups(ws, sb.wrapper)
			assert.Assert(t, is.Len(before, 1))
			assert.Assert(t, is.Len(now, 1))
			assert.Check(t, now[0][0] != before[0][0])
			assert.Check(t, is.Equal(read(t, now[0][0], "pids.max"), "30"))
		})
	}
}

// A cgroup that a process entered while idle is not reused: the next command would share
// its pids.max with it.
func TestCgroupEnteredBetweenCommandsIsNotReused(t *testing.T) {
	for _, sb := range withCgroups(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			assert.Assert(t, run(t, ws, "true", 5).Success)
			idle := idleCgroups(ws, sb.wrapper)
			assert.Assert(t, is.Len(idle, 1))
			intruder := osexec.Command("sleep", "30")
			assert.NilError(t, intruder.Start())
			defer func() { _ = intruder.Process.Kill(); _ = intruder.Wait() }()
			assert.NilError(t, join(idle[0], intruder.Process.Pid))
			assert.Assert(t, run(t, ws, "true", 5).Success)
			now := idleCgroups(ws, sb.wrapper)
			assert.Assert(t, is.Len(now, 1))
			assert.Check(t, now[0][0] != idle[0][0], "a cgroup with a process in it was reused")
		})
	}
}

// A command that leaves memory charged to its cgroup (its files' page cache) does not pass
// it on: the next command gets a new cgroup and the whole of memory_mb.
func TestMemoryLeftChargedIsNotPassedOn(t *testing.T) {
	for _, sb := range withCgroups(t) {
		if launcherOf(sb.wrapper).memoryScope() != MemoryPerCommand {
			continue
		}
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			ws.Limits.MemoryMB = 256
			assert.Assert(t, run(t, ws, "head -c 20000000 /dev/zero > big", 5).Success)
			assert.Check(t, is.Len(idleCgroups(ws, sb.wrapper), 0), "20 MB charged, yet the cgroup was kept")
			assert.Assert(t, run(t, ws, "true", 5).Success)
			assert.Check(t, is.Len(idleCgroups(ws, sb.wrapper), 1))
		})
	}
}

// Commands of one workspace that run at once (a server and a command) get cgroups of
// their own, and both go back once released.
func TestOverlappingCommandsGetCgroupsOfTheirOwn(t *testing.T) {
	for _, sb := range withCgroups(t) {
		t.Run(sb.name, func(t *testing.T) {
			l := launcherOf(sb.wrapper)
			ws := workspace(t, sb.wrapper)
			lim := EffectiveLimits(ws.Limits)
			a, err := l.cgroupsFor(ws, lim)
			assert.NilError(t, err)
			b, err := l.cgroupsFor(ws, lim)
			assert.NilError(t, err)
			assert.Check(t, a.dirs[0] != b.dirs[0])
			a.release()
			b.release()
			assert.Check(t, is.Len(idleCgroups(ws, sb.wrapper), 2))
			c, err := l.cgroupsFor(ws, lim)
			assert.NilError(t, err)
			assert.Check(t, c.dirs[0] == a.dirs[0] || c.dirs[0] == b.dirs[0], "an idle cgroup was not reused")
			c.release()
			assert.NilError(t, ws.Close())
			for _, cg := range []*commandCgroups{a, b} {
				for _, dir := range cg.dirs {
					_, err := os.Stat(dir)
					assert.Check(t, os.IsNotExist(err), "%s outlived its workspace", dir)
				}
			}
			// Released after its workspace closed, a command's cgroups are removed.
			d, err := l.cgroupsFor(ws, lim)
			assert.NilError(t, err)
			d.release()
			_, err = os.Stat(d.dirs[0])
			assert.Check(t, os.IsNotExist(err))
		})
	}
}

// The pool's rules, on a hierarchy imitated by plain files.
func TestCgroupPoolRules(t *testing.T) {
	base, mem := t.TempDir(), t.TempDir()
	lim := tools.Limits{Processes: 10, MemoryMB: 64}
	fake := func(current, usage string) *commandCgroups {
		dirs := []string{t.TempDir(), t.TempDir()}
		assert.NilError(t, os.WriteFile(filepath.Join(dirs[0], "pids.current"), []byte(current+"\n"), 0o644))
		cg := &commandCgroups{dirs: dirs, limits: lim, usage: filepath.Join(dirs[1], "memory.usage_in_bytes")}
		if usage != "" {
			assert.NilError(t, os.WriteFile(cg.usage, []byte(usage+"\n"), 0o644))
		}
		return cg
	}
	assert.Check(t, fake("0", "1048576").reusable())
	assert.Check(t, !fake("1", "0").reusable(), "a zombie left")
	assert.Check(t, !fake("0", "1048577").reusable(), "more than 1/64 of 64 MiB charged")
	assert.Check(t, !fake("0", "").reusable(), "memory unreadable")
	assert.Check(t, !fake("x", "0").reusable(), "pids.current unreadable")
	noMemory := fake("0", "")
	noMemory.usage = ""
	assert.Check(t, noMemory.reusable())
	assert.Equal(t, reuseSlack(4096), int64(4<<20))
	assert.Equal(t, reuseSlack(64), int64(1<<20))

	c := &cgroups{base: base, memory: mem}
	assert.Equal(t, c.usageFile([]string{"p", "m"}, lim), filepath.Join("m", "memory.usage_in_bytes"))
	c.memory = base
	assert.Equal(t, c.usageFile([]string{"p"}, lim), filepath.Join("p", "memory.current"))
	assert.Equal(t, c.usageFile([]string{"p"}, tools.Limits{}), "")

	// What a pool keeps and discards.
	var discarded []int
	p := &idlePool[int]{discard: func(i int) { discarded = append(discarded, i) }}
	for i := range maxIdlePerWorkspace + 1 {
		p.put(i)
	}
	assert.DeepEqual(t, discarded, []int{maxIdlePerWorkspace}) // past the bound
	x, ok := p.take(func(i int) bool { return i < 2 })
	assert.Check(t, ok && x == 1, "took %d", x)
	assert.DeepEqual(t, discarded, []int{4, 3, 2}) // unfit when taken
	p.close()
	p.put(7)
	assert.DeepEqual(t, discarded, []int{4, 3, 2, 0, 7}) // on close, and put back after
	_, ok = p.take(func(int) bool { return true })
	assert.Check(t, !ok)
	var nothing *commandCgroups
	nothing.release() // a launcher without cgroups: nothing to do
}

// bwrap exits before its sandbox's PID 1, which then comes to the runner: Release reaps it.
func TestSandboxLeavesNoZombie(t *testing.T) {
	if unavailable(ModeBwrap) != "" {
		t.Skip(unavailable(ModeBwrap))
	}
	w, _, err := Probe(t.Context(), ModeBwrap)
	assert.NilError(t, err)
	ws := workspace(t, w)
	zombies := func() int {
		n := 0
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, task := range tasks {
			b, _ := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "children"))
			for _, pid := range strings.Fields(string(b)) {
				stat, _ := os.ReadFile(filepath.Join("/proc", pid, "stat"))
				if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
					n++
				}
			}
		}
		return n
	}
	before := zombies()
	for range 5 {
		assert.Assert(t, run(t, ws, "true", 5).Success)
	}
	assert.Check(t, is.Equal(zombies(), before))
}

// On cgroup v1 bwrap is forked from a runner thread inside the command's cgroups: bwrap
// and its sandbox are born in them (the admission moves nothing), and the thread is back
// home once the command has started. Below the limits that leave room for bwrap and the
// thread, the admission moves the sandbox in instead.
func TestBwrapIsBornInItsCgroups(t *testing.T) {
	if unavailable(ModeBwrap) != "" {
		t.Skip(unavailable(ModeBwrap))
	}
	w, _, err := Probe(t.Context(), ModeBwrap)
	assert.NilError(t, err)
	b := w.(*bwrapSandbox)
	if b.cgroup == nil || !b.cgroup.threads {
		t.Skip("no cgroup v1 hierarchies here")
	}
	for _, processes := range []int{minProcessesInside, minProcessesInside - 1} {
		t.Run(strconv.Itoa(processes), func(t *testing.T) {
			ws := workspace(t, w)
			ws.Limits.Processes = processes
			cmd := osexec.Command("/bin/sh", "-c", "echo started; exec sleep 30")
			cmd.Dir = ws.Dir()
			out, err := cmd.StdoutPipe()
			assert.NilError(t, err)
			assert.NilError(t, b.Wrap(cmd, ws))
			assert.NilError(t, b.Start(cmd))
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); b.Release(cmd) }()
			line := make([]byte, 8)
			_, err = out.Read(line) // admitted and running
			assert.NilError(t, err)
			v, _ := b.pending.Load(cmd)
			dirs := v.(*admission).cgroups.dirs
			inside := processes >= minProcessesInside
			want := 2 // the namespace's PID 1 and sleep
			if inside {
				want++ // and bwrap
			}
			for _, dir := range dirs {
				procs := cgroupPids(dir)
				assert.Check(t, is.Len(procs, want), "%s holds %v", dir, procs)
				assert.Check(t, slices.Contains(procs, cmd.Process.Pid) == inside, "bwrap in %s: %v", dir, procs)
				tasks, err := os.ReadFile(filepath.Join(dir, "tasks"))
				assert.NilError(t, err)
				threads, _ := os.ReadDir("/proc/self/task")
				for _, th := range threads {
					assert.Check(t, !slices.Contains(strings.Fields(string(tasks)), th.Name()), "runner thread %s left in %s", th.Name(), dir)
				}
			}
		})
	}
}

// Landlock's private temp directory is emptied for the workspace's next command, not made
// anew: that command finds nothing of the previous one's, even if it swapped its home for
// a symlink (emptying must not follow it) or opened its modes.
func TestReusedTempDirHoldsNothingOfTheCommandBefore(t *testing.T) {
	if unavailable(ModeLandlock) != "" {
		t.Skip(unavailable(ModeLandlock))
	}
	w, _, err := Probe(t.Context(), ModeLandlock)
	assert.NilError(t, err)
	if launcherOf(w).cgroup == nil {
		t.Skip("no cgroups here: temp directories are not reused")
	}
	precious := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(precious, "keep"), []byte("x"), 0o600))
	home := t.TempDir()
	ws := workspace(t, withHomes(w, home))
	ws.Env = map[string]string{"HOME": home}
	res := run(t, ws, `echo $TMPDIR; echo left > "$TMPDIR/file"; mkdir "$TMPDIR/dir"; echo left > "$HOME/.rc"; `+
		`mv "$HOME" "$TMPDIR/old-home"; ln -s `+precious+` "$HOME"; chmod 777 "$TMPDIR"`, 5)
	assert.Assert(t, res.Success, res.Output)
	tmp := strings.Split(res.Output, "\n")[0]
	_, err = os.Stat(filepath.Join(precious, "keep"))
	assert.NilError(t, err, "emptying the temp dir followed the command's symlink")

	res = run(t, ws, `echo $TMPDIR; ls -A "$TMPDIR" "$HOME"; stat -c %a "$TMPDIR"; if test -L "$HOME"; then echo LINK; fi`, 5)
	assert.Assert(t, res.Success, res.Output)
	lines := strings.Split(res.Output, "\n")
	assert.Check(t, is.Equal(lines[0], tmp), "the temp dir was not reused: the test proves nothing")
	assert.Check(t, !strings.Contains(res.Output, "left") && !strings.Contains(res.Output, "file") && !strings.Contains(res.Output, "old-home") && !strings.Contains(res.Output, "keep"), res.Output)
	assert.Check(t, is.Contains(res.Output, "\n700\n"))
	assert.Check(t, !strings.Contains(res.Output, "LINK"), res.Output)
}

// Without cgroups an orphan of the command may still write in its temp directory until the
// exec tools' sweep: the directory is removed, not kept.
func TestTempDirIsNotReusedWithoutCgroups(t *testing.T) {
	if unavailable(ModeLandlock) != "" {
		t.Skip(unavailable(ModeLandlock))
	}
	w, _, err := Probe(t.Context(), ModeLandlock)
	assert.NilError(t, err)
	bare := *w.(*landlockSandbox)
	bare.launcher = &launcher{homes: launcherOf(w).homes}
	ws := workspace(t, &bare)
	res := run(t, ws, "echo $TMPDIR", 5)
	assert.Assert(t, res.Success, res.Output)
	_, err = os.Stat(strings.Split(res.Output, "\n")[0])
	assert.Check(t, os.IsNotExist(err))
}

// forkInside on a hierarchy imitated by plain files (writing a tasks file there moves
// nothing): a thread that cannot enter every cgroup forks from home, and one that cannot
// get back home ends with its goroutine; either way the fork happens once.
func TestForkInsideWhenMovingFails(t *testing.T) {
	home, in := t.TempDir(), t.TempDir()
	c := &cgroups{base: home}
	var forks []bool
	start := func(inside bool) error { forks = append(forks, inside); return nil }

	assert.NilError(t, c.forkInside([]string{in}, start))
	assert.NilError(t, (&cgroups{base: home, memory: t.TempDir()}).forkInside([]string{in, "/nonexistent"}, start))
	// No way back: the thread ends, the fork happened all the same.
	assert.NilError(t, (&cgroups{base: "/nonexistent"}).forkInside([]string{in}, start))
	// No way back after entering only some: nothing forked.
	err := (&cgroups{base: "/nonexistent", memory: t.TempDir()}).forkInside([]string{in, "/nonexistent"}, start)
	assert.ErrorContains(t, err, "enter cgroup /nonexistent")
	assert.DeepEqual(t, forks, []bool{true, false, true})
	assert.DeepEqual(t, c.home(), []string{home})

	// A command Wrap never saw, or a sandbox without cgroup v1, starts the plain way.
	b := &bwrapSandbox{launcher: &launcher{}}
	cmd := osexec.Command("/bin/true")
	assert.NilError(t, b.Start(cmd))
	assert.NilError(t, cmd.Wait())
}

// The small file and directory helpers' failures.
func TestCgroupAndTempFailures(t *testing.T) {
	_, err := readFile(t.TempDir()) // a directory: read fails
	assert.ErrorContains(t, err, "read ")
	assert.Check(t, emptyTemp("/nonexistent") != nil)
	assert.Check(t, emptyDir("/nonexistent") != nil)
	_, err = childPid(strings.NewReader(strings.Repeat("x", 300)))
	assert.ErrorContains(t, err, "no child-pid in bwrap's report")

	// A process that stays in a cgroup past the deadline: the sweep says so.
	dir := t.TempDir()
	sleep := osexec.Command("sleep", "30")
	assert.NilError(t, sleep.Start())
	defer func() { _ = sleep.Process.Kill(); _ = sleep.Wait() }()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(sleep.Process.Pid)+"\n"), 0o644))
	assert.Check(t, !sweep(dir, time.Now()))

	// An idle temp dir that is no longer as it was made is removed, not handed out.
	l, ws := &launcher{}, workspace(t, nil)
	opened, p, err := l.privateTemp(ws)
	assert.NilError(t, err)
	assert.NilError(t, os.Chmod(opened, 0o755))
	p.put(opened)
	again, _, err := l.privateTemp(ws)
	assert.NilError(t, err)
	p.put(again) // removed with the workspace
	assert.Check(t, again != opened)
	_, err = os.Stat(opened)
	assert.Check(t, os.IsNotExist(err))
}
