package container_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
	toolexec "github.com/agentrunner/runner/tools/exec"
	"github.com/agentrunner/runner/tools/exec/container"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// start runs the test image with a fresh workspace and removes it when the test ends.
func start(t *testing.T, cfg container.Config) (*container.Engine, *container.Container, *tools.Workspace) {
	t.Helper()
	e := containertest.Engine(t)
	cfg.Image = containertest.Image(t, e)
	if cfg.RunID == "" {
		cfg.RunID = container.NewRunID()
	}
	cfg.Scenario = t.Name()
	cfg.Workspace = t.TempDir()
	ctx := context.Background()
	c, err := e.Start(ctx, cfg)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = c.Remove(context.Background()) })
	ws, err := tools.OpenWorkspace(cfg.Workspace)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	ws.Sandbox = c
	return e, c, ws
}

func shell(t *testing.T, ws *tools.Workspace, command string, timeout time.Duration) toolexec.ShellResult {
	t.Helper()
	res, err := toolexec.RunShell(context.Background(), ws, command, timeout)
	assert.NilError(t, err)
	return res
}

func TestCommandsRunInsideWithTheWorkspaceMounted(t *testing.T) {
	t.Parallel()
	_, c, ws := start(t, container.Config{})
	ws.Env = map[string]string{"GREETING": "hi"}
	res := shell(t, ws, `pwd; cat /opt/env/marker; echo "$GREETING"; echo out > made.txt; echo err >&2; exit 3`, 30*time.Second)
	assert.Equal(t, res.ExitCode, 3, res.Output)
	assert.Equal(t, res.Stdout, "/app\nbuilt\nhi\n")
	assert.Assert(t, strings.Contains(res.Output, "err"))
	b, err := os.ReadFile(filepath.Join(ws.Dir(), "made.txt"))
	assert.NilError(t, err)
	assert.Equal(t, string(b), "out\n")
	assert.Equal(t, c.Workdir(), "/app")

	// The host's PATH and HOME stay out; the image's apply.
	res = shell(t, ws, `echo "$PATH"; echo "$HOME"`, 30*time.Second)
	assert.Assert(t, !strings.Contains(res.Stdout, "/usr/local/go"), res.Stdout)
}

func TestNoNetworkByDefaultAndLimits(t *testing.T) {
	t.Parallel()
	_, _, ws := start(t, container.Config{Pids: 64, MemoryMB: 64})
	res := shell(t, ws, `ls /sys/class/net`, 30*time.Second)
	assert.Equal(t, strings.TrimSpace(res.Stdout), "lo", res.Output)
	res = shell(t, ws, `cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max`, 30*time.Second)
	assert.Equal(t, res.Stdout, "64\n67108864\n", res.Output)
}

// ps lists the container's processes other than PID 1, the idle loop's sleep and ps's own shell.
func procs(t *testing.T, c *container.Container, marker string) string {
	t.Helper()
	e := containertest.Engine(t)
	out, err := exec(e, c.ID(), "ps", "-o", "args")
	assert.NilError(t, err)
	var hits []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, marker) {
			hits = append(hits, l)
		}
	}
	return strings.Join(hits, "\n")
}

func TestTimeoutKillsTheProcessTreeInside(t *testing.T) {
	t.Parallel()
	_, c, ws := start(t, container.Config{})
	began := time.Now()
	res := shell(t, ws, `sleep 987 & sh -c 'sleep 988' & sleep 989`, time.Second)
	assert.Assert(t, res.TimedOut)
	assert.Assert(t, time.Since(began) < 20*time.Second)
	assert.Equal(t, procs(t, c, "sleep 98"), "", "exec'd processes survived the timeout")
}

func TestBackgroundJobsEndWithTheCommand(t *testing.T) {
	t.Parallel()
	_, c, ws := start(t, container.Config{})
	res := shell(t, ws, `(setsid sleep 977 >/dev/null 2>&1 &); echo started`, 30*time.Second)
	assert.Equal(t, res.ExitCode, 0, res.Output)
	assert.Equal(t, procs(t, c, "sleep 977"), "")
}

func TestInterruptKillsTheProcessTreeInside(t *testing.T) {
	t.Parallel()
	_, c, ws := start(t, container.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	res, err := toolexec.RunShell(ctx, ws, `sleep 966`, time.Minute)
	assert.NilError(t, err)
	assert.Assert(t, res.Canceled)
	assert.Equal(t, procs(t, c, "sleep 966"), "")
}

func TestRunCodeAndTerminalCwd(t *testing.T) {
	t.Parallel()
	_, _, ws := start(t, container.Config{})
	assert.NilError(t, os.Mkdir(filepath.Join(ws.Dir(), "sub"), 0o755))
	reg := tools.NewRegistry()
	reg.MustRegister(toolexec.Tools()...)
	run := func(name string, args any) tools.Result {
		raw, _ := json.Marshal(args)
		return reg.Run(context.Background(), name, raw, ws)
	}
	// bash is not in the busybox image, so run_code's bash must fail inside (command not
	// found), though the host has bash.
	r := run("run_code", map[string]any{"language": "bash", "code": "echo hi"})
	assert.Assert(t, !r.Success)
	assert.Equal(t, r.Metadata["exit_code"], 127, r.Output)

	r = run("run_in_terminal", map[string]any{"command": "pwd", "cwd": "sub"})
	assert.Assert(t, r.Success, r.Output)
	assert.Assert(t, strings.HasPrefix(r.Output, "/app/sub\n"), r.Output)
}

func TestRunCodeScriptThroughStdin(t *testing.T) {
	t.Parallel()
	e, c, ws := start(t, container.Config{})
	// busybox has no bash: give it one, so run_code's bash path runs inside.
	_, err := exec(e, c.ID(), "sh", "-c", `printf '#!/bin/sh\nexec sh "$@"\n' >/bin/bash && chmod +x /bin/bash`)
	assert.NilError(t, err)
	reg := tools.NewRegistry()
	reg.MustRegister(toolexec.Tools()...)
	raw, _ := json.Marshal(map[string]any{"language": "bash", "code": "echo \"code $1 $(pwd)\"", "args": []string{"arg"}})
	r := reg.Run(context.Background(), "run_code", raw, ws)
	assert.Assert(t, r.Success, r.Output)
	assert.Assert(t, strings.HasPrefix(r.Output, "code arg /app\n"), r.Output)
}

func TestCopyInReplacesWhatTheAgentPlanted(t *testing.T) {
	t.Parallel()
	e, c, ws := start(t, container.Config{})
	ctx := context.Background()
	res := shell(t, ws, `mkdir -p /tests && echo evil > /tests/conftest.py && ln -s /etc /tests/link`, 30*time.Second)
	assert.Equal(t, res.ExitCode, 0, res.Output)
	src := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(src, "test.sh"), []byte("echo ok\n"), 0o755))
	assert.NilError(t, c.CopyIn(ctx, src, "/tests"))
	out, err := exec(e, c.ID(), "ls", "-A", "/tests")
	assert.NilError(t, err)
	assert.Equal(t, out, "test.sh\n")
	b, err := c.ReadFile(ctx, "/tests/test.sh", 8)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "echo ok\n")
	_, err = c.ReadFile(ctx, "/tests/test.sh", 7)
	var nr *container.NotRegularError
	assert.Assert(t, errors.As(err, &nr) && nr.Found == container.FoundTooLarge, "%v", err)
	_, err = c.ReadFile(ctx, "/tests/missing", 10)
	assert.ErrorContains(t, err, "missing")

	assert.NilError(t, c.RemoveFile(ctx, "/tests/test.sh"))
	assert.NilError(t, c.RemoveFile(ctx, "/tests/missing"), "a file that is not there is fine")
	out, err = exec(e, c.ID(), "ls", "-A", "/tests")
	assert.NilError(t, err)
	assert.Equal(t, out, "")
}

// TestReadFileRefusesWhatIsNotAFile: what a check's tests (the agent's code) leave in
// its results directory is read only when it is a regular file; a FIFO used to make the
// read wait for a writer until the scenario's deadline.
func TestReadFileRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	e, c, _ := start(t, container.Config{})
	out, err := exec(e, c.ID(), "sh", "-c", `mkdir -p /r/dir && mkfifo /r/fifo && echo x > /r/file && ln -s file /r/link`)
	assert.NilError(t, err, out)
	kinds := map[string]string{"fifo": container.FoundFIFO, "dir": container.FoundDirectory, "link": container.FoundSymlink}
	if _, err := exec(e, c.ID(), "mknod", "/r/dev", "c", "1", "5"); err == nil {
		kinds["dev"] = container.FoundDevice
	} else {
		t.Log("the engine denies mknod here: no device node to read")
	}
	for name, want := range kinds {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := c.ReadFile(ctx, "/r/"+name, 100)
		cancel()
		var nr *container.NotRegularError
		assert.Assert(t, errors.As(err, &nr), "%s: %v", name, err)
		assert.Equal(t, nr.Found, want)
	}
	b, err := c.ReadFile(context.Background(), "/r/file", 100)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "x\n")
}

func TestRemoveLeavesNothingLabelled(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	runID := container.NewRunID()
	_, c, _ := start(t, container.Config{RunID: runID})
	ids, err := e.List(context.Background(), runID)
	assert.NilError(t, err)
	assert.Equal(t, len(ids), 1)
	assert.NilError(t, c.Remove(context.Background()))
	ids, err = e.List(context.Background(), runID)
	assert.NilError(t, err)
	assert.Equal(t, len(ids), 0, "left behind: %v", ids)
}

func TestBuildFailureCarriesTheEnginesMessage(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	dir := t.TempDir()
	df := filepath.Join(dir, "Dockerfile")
	assert.NilError(t, os.WriteFile(df, []byte("FROM "+containertest.BaseImage+"\nRUN exit 7\n"), 0o644))
	_, err := e.Build(context.Background(), df)
	assert.ErrorContains(t, err, "build")
	assert.ErrorContains(t, err, "exit 7")
}

func TestFindNamesTheMissingEngine(t *testing.T) {
	t.Parallel()
	_, err := container.Find("no-such-engine-xyz")
	assert.ErrorIs(t, err, container.ErrNoEngine)
	assert.ErrorContains(t, err, "no-such-engine-xyz")
}

func TestImageFilesSeedTheWorkspace(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	dir := t.TempDir()
	df := filepath.Join(dir, "Dockerfile")
	assert.NilError(t, os.WriteFile(df, []byte("FROM "+containertest.BaseImage+"\nRUN mkdir -p /app/data && echo 42 > /app/data/input.txt\n"), 0o644))
	img, err := e.Build(context.Background(), df)
	assert.NilError(t, err)
	files, err := e.ImageFiles(context.Background(), img, "/app")
	assert.NilError(t, err)
	b, err := os.ReadFile(filepath.Join(files, "data/input.txt"))
	assert.NilError(t, err)
	assert.Equal(t, string(b), "42\n")
	again, err := e.ImageFiles(context.Background(), img, "/app")
	assert.NilError(t, err)
	assert.Equal(t, again, files, "cached by image id")
	empty, err := e.ImageFiles(context.Background(), img, "/no/such/dir")
	assert.NilError(t, err)
	entries, err := os.ReadDir(empty)
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 0)
}

func TestCancelledStartLeavesNothing(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	img := containertest.Image(t, e)
	runID := container.NewRunID()
	for _, after := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), after)
		c, err := e.Start(ctx, container.Config{Image: img, Workspace: t.TempDir(), RunID: runID})
		cancel()
		if err == nil {
			assert.NilError(t, c.Remove(context.Background()))
		}
	}
	ids, err := e.List(context.Background(), runID)
	assert.NilError(t, err)
	assert.Equal(t, len(ids), 0, "left behind: %v", ids)
}

func TestWorkspaceMountIsNosuid(t *testing.T) {
	t.Parallel()
	e, _, ws := start(t, container.Config{})
	if e.Flavor != "podman" {
		t.Skip("docker's -v has no nosuid")
	}
	res := shell(t, ws, `grep " /app " /proc/mounts`, 30*time.Second)
	assert.Assert(t, strings.Contains(res.Stdout, "nosuid") && strings.Contains(res.Stdout, "nodev"), res.Output)
}

func TestUserAndNetwork(t *testing.T) {
	t.Parallel()
	_, _, ws := start(t, container.Config{User: "1000:1000", Network: true})
	res := shell(t, ws, `id -u; echo hi > mine.txt && echo wrote; ls /sys/class/net | grep -vx lo | head -1`, 30*time.Second)
	assert.Equal(t, res.ExitCode, 0, res.Output)
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	assert.Equal(t, len(lines), 3, res.Output)
	assert.Equal(t, lines[0], "1000")
	assert.Equal(t, lines[1], "wrote", "the workspace belongs to the task's user")
	assert.Assert(t, lines[2] != "", "network: true gives an interface besides lo")
}

func TestParseDiff(t *testing.T) {
	got := container.ParseDiff("C /usr\nC /usr/local/bin\nA /usr/local/bin/pytest\r\nD /etc/motd\nnoise\n\n")
	assert.DeepEqual(t, got, []container.Change{
		{Kind: "C", Path: "/usr"}, {Kind: "C", Path: "/usr/local/bin"}, {Kind: "A", Path: "/usr/local/bin/pytest"}, {Kind: "D", Path: "/etc/motd"},
	})
}

// TestStopEndsEveryProcessAndKeepsTheDiff: a stopped container runs nothing more (a
// process left in it cannot touch the workspace), its changes stay for Diff, and ImageID
// names the image it started from by id.
func TestStopEndsEveryProcessAndKeepsTheDiff(t *testing.T) {
	t.Parallel()
	e, c, ws := start(t, container.Config{})
	ctx := context.Background()
	res := shell(t, ws, `echo x > /opt/env/planted`, 30*time.Second)
	assert.Equal(t, res.ExitCode, 0, res.Output)
	id, err := c.ImageID(ctx)
	assert.NilError(t, err)
	want, err := e.ImageID(ctx, containertest.Image(t, e))
	assert.NilError(t, err)
	assert.Equal(t, id, want)

	assert.NilError(t, c.Stop(ctx))
	_, err = toolexec.RunShell(ctx, ws, `echo late > late.txt`, 30*time.Second)
	_, serr := os.Stat(filepath.Join(ws.Dir(), "late.txt"))
	assert.Assert(t, os.IsNotExist(serr), "a stopped container ran a command (err %v)", err)
	diff, err := c.Diff(ctx)
	assert.NilError(t, err)
	found := false
	for _, d := range diff {
		found = found || d.Path == "/opt/env/planted"
	}
	assert.Assert(t, found, "%v", diff)
}

// TestMountsAreReadOnlyAndOutOfTheDiff: Config.Mounts are bound read-only (as root the
// agent cannot write through them), the mount points the engine made are not reported
// by Diff, and a file planted beside them still is. A Process's stdin reaches the
// program inside.
func TestMountsAreReadOnlyAndOutOfTheDiff(t *testing.T) {
	t.Parallel()
	host := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(host, "tool.sh"), []byte("echo mounted\n"), 0o755))
	_, c, ws := start(t, container.Config{Mounts: []container.Mount{
		{Host: filepath.Join(host, "tool.sh"), Path: "/.box/tool.sh"}, {Host: host, Path: "/.box/dir"},
	}})
	res := shell(t, ws, `sh /.box/tool.sh; echo x > /.box/tool.sh || echo ro-file; touch /.box/dir/new || echo ro-dir; echo p > /.box/planted`, 30*time.Second)
	assert.Equal(t, res.Stdout, "mounted\nro-file\nro-dir\n", res.Output)
	_, err := os.Stat(filepath.Join(host, "new"))
	assert.Assert(t, os.IsNotExist(err))
	diff, err := c.Diff(context.Background())
	assert.NilError(t, err)
	var paths []string
	for _, d := range diff {
		if strings.HasPrefix(d.Path, "/.box") {
			paths = append(paths, d.Kind+" "+d.Path)
		}
	}
	assert.DeepEqual(t, paths, []string{"A /.box/planted"})

	p, err := toolexec.Start(context.Background(), ws, ws.Dir(), []string{"/bin/sh", "-c", "read line; echo got $line"}, nil)
	assert.NilError(t, err)
	_, _ = p.Stdin.Write([]byte("prompt\n"))
	_ = p.Stdin.Close()
	out, _ := io.ReadAll(p.Stdout)
	p.Stop(time.Second)
	assert.Equal(t, string(out), "got prompt\n")
	assert.Equal(t, p.ExitCode(), 0)
}

func TestMountPathsMustBeSayable(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	_, err := e.Start(context.Background(), container.Config{Image: containertest.BaseImage, Workspace: t.TempDir(), RunID: container.NewRunID(),
		Mounts: []container.Mount{{Host: "/tmp/a:b", Path: "/x"}}})
	assert.ErrorContains(t, err, "cannot bind /tmp/a:b at /x")
}

// TestEnvValuesAreNotOnTheHostsCommandLines is the attack of a process beside the
// container on the host (another scenario's Landlock or none agent reads every
// /proc/*/cmdline): while a command with a task secret and the endpoint's token in its
// environment runs in the container, no host process's command line holds either value.
// Before, `exec -e NAME=VALUE` put both on the engine client's.
func TestEnvValuesAreNotOnTheHostsCommandLines(t *testing.T) {
	t.Parallel()
	_, _, ws := start(t, container.Config{})
	secret := "s3cret-" + container.NewRunID()
	ws.Env = map[string]string{"TASK_SECRET": secret}
	done := make(chan toolexec.ShellResult, 1)
	go func() {
		res, _ := toolexec.RunShell(context.Background(), ws, `echo "$TASK_SECRET" > seen; sleep 3`, 30*time.Second)
		done <- res
	}()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(ws.Dir(), "seen")); err == nil && strings.TrimSpace(string(b)) == secret {
			break // the command runs with it: its engine client is up
		}
	}
	found := hostCmdlineWith(secret)
	res := <-done
	assert.Equal(t, res.ExitCode, 0, res.Output)
	seen, err := os.ReadFile(filepath.Join(ws.Dir(), "seen"))
	assert.NilError(t, err)
	assert.Equal(t, strings.TrimSpace(string(seen)), secret, "the value reaches the command")
	assert.Equal(t, found, "", "a host process's command line holds the value")
}

// hostCmdlineWith is the first host process whose command line holds s, as "PID: cmdline".
func hostCmdlineWith(s string) string {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), s) {
			return p + ": " + strings.ReplaceAll(string(b), "\x00", " ")
		}
	}
	return ""
}

// A long-lived process runner started in the container with its own exec (an MCP server,
// an external agent) lives through the commands that run beside it: each command's
// leftovers are ended (its background jobs, what it moved into a session of its own), the
// other exec's process and its children are not. Before, each command's `kill -9 -1`
// ended the task's MCP servers after the agent's first command. Stopping the long-lived
// process (its client killed) ends its own tree, and KillAll everything.
func TestCommandsEndTheirLeftoversNotAServerBesideThem(t *testing.T) {
	t.Parallel()
	_, c, ws := start(t, container.Config{})
	server, err := toolexec.Start(context.Background(), ws, ws.Dir(), []string{"/bin/sh", "-c", "sleep 966 & sleep 967; cat"}, nil)
	assert.NilError(t, err)
	defer server.Stop(time.Second)
	for deadline := time.Now().Add(20 * time.Second); procs(t, c, "sleep 967") == "" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	res := shell(t, ws, `sleep 977 & (setsid sleep 978 >/dev/null 2>&1 &); echo started`, 30*time.Second)
	assert.Equal(t, res.ExitCode, 0, res.Output)
	assert.Equal(t, procs(t, c, "sleep 97"), "", "the command's leftovers survived it")
	assert.Check(t, procs(t, c, "sleep 967") != "", "the server beside the command was ended")
	assert.Check(t, procs(t, c, "sleep 966") != "", "the server's own child was ended")

	server.Stop(time.Second)
	for deadline := time.Now().Add(20 * time.Second); procs(t, c, "sleep 96") != "" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, procs(t, c, "sleep 96"), "", "the stopped server's processes survived it")
}
