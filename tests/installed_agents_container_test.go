package tests

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools/exec/container"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// The real Claude Code and Codex CLI inside the task's container, as an image built for
// them would hold them: their native programs from the pinned npm install (Codex's is a
// static musl executable; Claude Code's needs the C library, taken from the host with
// ldd) copied into the busybox base image, no node. runner's endpoint reaches them
// through the forwarder bound into the container.

// imageMarker is a file only the agents' test image has, holding imageMarkerText: a
// command that reads it ran in the container.
const imageMarker, imageMarkerText = "/etc/runner-agent-image", "made-in-the-image"

// agentImageContext writes the build context of an image for a into dir: the busybox base
// with a's native program on PATH under the name its kind's row runs, the shared libraries
// ldd says it loads, at the paths it loads them from (none for a static program), and
// imageMarker. The files are hard-linked into the context (copied across file systems),
// so the context costs no disk, and its content hash, hence the image's tag, stays the
// same from run to run: the image is built once and reused until a file changes.
func agentImageContext(t *testing.T, a installedAgent, agents, dir string) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the agents' native programs in tests/agents are linux/amd64 ones")
	}
	native := filepath.Join(agents, "node_modules", a.native)
	files := map[string]string{"/usr/local/bin/" + a.program: native} // path in the image: the host's
	for _, p := range append([]string{native}, a.inImage...) {
		files[p] = p
		for _, lib := range sharedLibraries(t, p) {
			files[lib] = lib
		}
	}
	delete(files, native)
	root := filepath.Join(dir, "rootfs")
	for dst, src := range files {
		linkOrCopy(t, src, filepath.Join(root, dst))
	}
	assert.NilError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(imageMarker)), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(root, imageMarker), []byte(imageMarkerText+"\n"), 0o644))
	// busybox-base's /tmp is root's (0755): Claude Code run as another user fails with
	// "EACCES: permission denied, mkdir '/tmp/claude-1000'". COPY keeps the mode, and the
	// image needs no RUN (a container start and a layer more per build).
	assert.NilError(t, os.MkdirAll(filepath.Join(root, "tmp"), 0o755))
	assert.NilError(t, os.Chmod(filepath.Join(root, "tmp"), 0o777|os.ModeSticky))
	dockerfile := "FROM " + containertest.BaseImage + "\nCOPY rootfs/ /\n"
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644))
}

// sharedLibraries returns the paths of the libraries program loads, the dynamic loader
// among them, as ldd prints them; none for a static program.
func sharedLibraries(t *testing.T, program string) []string {
	t.Helper()
	out, err := exec.Command("ldd", program).CombinedOutput()
	if err != nil {
		assert.Assert(t, is.Contains(string(out), "not a dynamic executable"), "ldd %s: %v", program, err)
		return nil
	}
	var libs []string
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				libs = append(libs, f)
				break
			}
		}
	}
	return libs
}

// linkOrCopy makes dst the file src names (through any links): a hard link, or a copy
// where one cannot be made.
func linkOrCopy(t *testing.T, src, dst string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(src)
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	if os.Link(real, dst) == nil {
		return
	}
	in, err := os.Open(real)
	assert.NilError(t, err)
	defer func() { _ = in.Close() }() // read only
	fi, err := in.Stat()
	assert.NilError(t, err)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	assert.NilError(t, err)
	_, err = io.Copy(out, in)
	assert.NilError(t, err)
	assert.NilError(t, out.Close())
}

// programKeyGrep is keyGrep less the program's own directory, /usr/local/bin: 300-400 MB
// the test's image put there, which runner never wrote, and whose search (grep without -F,
// keyGrep says why) took long enough on a loaded machine to slow the other scenarios'
// agents into extra requests.
func programKeyGrep(t *testing.T) string {
	t.Helper()
	const all, less = "for d in /*; do case $d in /proc|/sys|/dev)", "for d in /* /usr/* /usr/local/*; do case $d in /proc|/sys|/dev|/usr|/usr/local|/usr/local/bin)"
	assert.Assert(t, strings.Count(keyGrep, all) == 1, "keyGrep's loop changed: %s", keyGrep)
	return strings.Replace(keyGrep, all, less, 1)
}

// runWaiting is a call of a's shell tool that waits up to two minutes for cmd: Codex's
// exec_command returns after 10 s by default, the command left running, and Claude Code's
// Bash after 2 minutes.
func (a installedAgent) runWaiting(cmd string) fakellm.Call {
	if a.kind == "codex" {
		return fakellm.NewCall("exec_command", map[string]any{"cmd": cmd, "yield_time_ms": 120000})
	}
	return a.run(cmd)
}

// Each program in its image, driven as TestInstalledAgentsPassFailAndReplay drives it on
// the host: it writes and patches a file and runs a command through its own tools, and
// passes; the command read a file only the image has, so it ran in the container. Given a
// wrong answer it fails. As another user than root (podman makes the workdir its home) it
// passes too. The attack: with the provider's key in runner's environment, its own shell
// tool searches its whole view in the container (its environment, /proc, every file
// outside /proc, /sys, /dev and its own program's directory) and finds nothing; the control,
// the same search with the key in the task's env:, finds it. No container is left.
func TestInstalledAgentsInAContainer(t *testing.T) {
	t.Parallel()
	const half1, half2 = "sk-e2e-agentbox", "-provider-key-b0c5b0c5"
	for _, a := range installedAgents {
		t.Run(a.kind, func(t *testing.T) {
			t.Parallel()
			agents := a.agentsDir(t)
			e := containertest.Engine(t)
			dir := t.TempDir()
			agentImageContext(t, a, agents, filepath.Join(dir, "env"))
			search := []fakellm.Reply{calls(a.runWaiting(programKeyGrep(t))), fakellm.Text("Searched.")}
			routes := passFailRoutes(a, "cat hello.txt && cat "+imageMarker+" > ran.txt")
			// asuser plays right's script on a route of its own: two conversations on one
			// route take turns in its replies when their requests interleave.
			asUserRoute := fakellm.Route{Match: "ASUSER-TASK", Replies: routes[0].Replies}
			srv := fakellm.Start(fakellm.Script{Routes: append(routes, asUserRoute,
				fakellm.Route{Match: "KEY-TASK", Replies: search}, fakellm.Route{Match: "CONTROL-TASK", Replies: search})})
			defer srv.Close()
			env := "environment: {dockerfile: env/Dockerfile}\n"
			writePassFailTasks(t, dir, a, env, imageMarkerText)
			keyEnv := "env: {K1: " + half1 + ", K2: " + half2 + "}\n"
			for name, body := range map[string]string{
				"key": agentTask(a, "key", "KEY-TASK Look for the key.", env+keyEnv+"max_steps: 4\ntimeout: 2m\nassert:\n  - file_absent: leak.txt\n  - file_exists: searched.txt\n"),
				// The control: the same search finds the key where the task put it.
				"control": agentTask(a, "control", "CONTROL-TASK Look for the key.", env+strings.Replace(keyEnv, "}", ", LEAKED: "+half1+half2+"}", 1)+
					"max_steps: 4\ntimeout: 2m\nassert:\n  - file_absent: leak.txt\n"),
				// Another user than root: the image's /tmp must be writable for Claude Code.
				"asuser": agentTask(a, "asuser", "ASUSER-TASK Do it as user 1000.", strings.Replace(env, "}", `, user: "1000:1000"}`, 1)+
					"max_steps: 8\ntimeout: 2m\nassert:\n  - file_contains: {path: hello.txt, text: hello world}\n"+
					"  - file_contains: {path: ran.txt, text: "+imageMarkerText+"}\n  - command: {run: 'test \"$(stat -c %u ran.txt)\" = 1000'}\n"),
			} {
				assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
			}

			out, runID := t.TempDir(), container.NewRunID()
			res := runner(t, run{Args: []string{"run", "-j", "5", "--model", "openai:fake", "--engine", e.Path, "--run-id", runID, "--out", out, "--keep-workspaces", dir},
				Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=" + half1 + half2, "ANTHROPIC_API_KEY=" + half1 + half2}, Timeout: 4 * time.Minute})
			assert.Equal(t, res.Code, 1, "wrong and control fail\n"+res.Stdout+res.Stderr)
			checkPassFail(t, out, a)
			right := readResult(t, filepath.Join(out, "right", "result.json"))
			assert.Check(t, is.Equal(right.Sandbox, e.Name()))
			asUser := readResult(t, filepath.Join(out, "asuser", "result.json"))
			assert.Check(t, is.Equal(asUser.Status, result.Passed), asUser.Reason)
			key := readResult(t, filepath.Join(out, "key", "result.json"))
			leak, _ := os.ReadFile(filepath.Join(key.Workspace, "leak.txt"))
			assert.Check(t, is.Equal(string(leak), ""), "the agent found the provider key")
			assert.Check(t, is.Equal(key.Status, result.Passed), "the search did not finish: %s", key.Reason)
			control := readResult(t, filepath.Join(out, "control", "result.json"))
			assert.Check(t, is.Equal(control.Status, result.Failed), "the control: the search finds the key in the task's env")
			leak, _ = os.ReadFile(filepath.Join(control.Workspace, "leak.txt"))
			assert.Check(t, is.Contains(string(leak), "env"))
			assert.Check(t, is.Equal(leftovers(t, e, runID), ""))
			for _, name := range []string{"right", "wrong", "asuser", "key", "control"} { // kept for leak.txt
				_ = os.RemoveAll(readResult(t, filepath.Join(out, name, "result.json")).Workspace)
			}
		})
	}
}
