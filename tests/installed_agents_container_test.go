package tests

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// The real Claude Code and Codex CLI inside the task's container, as an image built for
// them would hold them: their native programs from the pinned npm install (Codex's is a
// static musl executable; Claude Code's needs the C library, taken from the host with
// ldd) copied into the busybox base image, no node. runner's endpoint reaches them
// through the forwarder bound into the container.

// nativeProgram is where each kind's npm install keeps the program itself.
var nativeProgram = map[string]string{
	"claude-code": "@anthropic-ai/claude-code-linux-x64/claude",
	"codex":       "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
}

// imageNeeds are the programs besides its own that each kind needs in its image, taken
// from the host with their libraries: Claude Code's Bash tool wants bash or zsh ("No
// suitable shell found"), which busybox's sh is not.
var imageNeeds = map[string][]string{"claude-code": {"bash"}}

// imageMarker is a file only the agent's image holds: a command that reads it ran in the
// container.
const imageMarker = "/etc/runner-agent-image"

// agentImageContext writes a build context into dir/env: a Dockerfile FROM the busybox
// base that copies a's native program onto the image's PATH under the name its row looks
// for, with the shared libraries ldd names for it (none for a static program), and the
// marker. Files are hard links where the file system allows (the programs are 300-400
// MB), else copies; the engine builds a context once (runner tags by its content).
func agentImageContext(t *testing.T, a installedAgent, agents, dir string) {
	t.Helper()
	program := filepath.Join(agents, "node_modules", nativeProgram[a.kind])
	root := filepath.Join(dir, "env", "root")
	place(t, program, filepath.Join(root, "usr", "local", "bin", a.program))
	libs := sharedLibraries(t, program)
	for _, name := range imageNeeds[a.kind] {
		p, err := exec.LookPath(name)
		assert.NilError(t, err, "the image for %s needs %s", a.kind, name)
		place(t, p, filepath.Join(root, "bin", name))
		libs = append(libs, sharedLibraries(t, p)...)
	}
	for _, lib := range libs {
		if _, err := os.Lstat(filepath.Join(root, lib)); err == nil {
			continue // named by two programs
		}
		place(t, lib, filepath.Join(root, lib))
	}
	assert.NilError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(imageMarker)), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(root, imageMarker), []byte("in-image\n"), 0o644))
	dockerfile := "FROM " + containertest.BaseImage + "\nCOPY root/ /\n"
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "env", "Dockerfile"), []byte(dockerfile), 0o644))
}

// sharedLibraries are the files ldd says program loads (the loader included), by the
// paths it loads them from; none for a static program.
func sharedLibraries(t *testing.T, program string) []string {
	t.Helper()
	out, err := exec.Command("ldd", program).Output()
	if err != nil { // "not a dynamic executable" exits 1
		return nil
	}
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if strings.HasPrefix(f, "/") {
				libs = append(libs, f)
			}
		}
	}
	return libs
}

// place makes to a hard link of from (the file a symlink leads to), or a copy.
func place(t *testing.T, from, to string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(from)
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	if os.Link(real, to) == nil {
		return
	}
	src, err := os.Open(real)
	assert.NilError(t, err)
	defer func() { _ = src.Close() }() // read only
	info, err := src.Stat()
	assert.NilError(t, err)
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
	assert.NilError(t, err)
	_, err = io.Copy(dst, src)
	assert.NilError(t, err)
	assert.NilError(t, dst.Close())
}

// programKeyGrep is keyGrep less the program's own directory (/usr/local/bin: the 300-400
// MB the test's image put there, which runner never wrote), seconds of the suite's time.
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

// Each program in its image: it writes and patches a file and runs a command there (the
// command reads the image's marker), and the scenario passes; a wrong answer fails; and
// its own shell tool, searching its whole view in the container (environment, /proc,
// every file but its own program's), does not find the provider's key, which is in runner's environment (the
// control: it finds the key the task itself put in env:).
func TestInstalledAgentsInAContainer(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	const half1, half2 = "sk-e2e-boxed", "-provider-key-b0xed42"
	for _, a := range installedAgents {
		t.Run(a.kind, func(t *testing.T) {
			t.Parallel()
			agents := a.agentsDir(t)
			search := []fakellm.Reply{calls(a.runWaiting("(" + programKeyGrep(t) + "); echo searched > searched.txt")), fakellm.Text("Searched.")}
			srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
				{Match: "RIGHT-TASK", Replies: []fakellm.Reply{
					calls(a.write("hello.txt", "hi there\n")),
					calls(a.run("cat hello.txt && cat " + imageMarker + " > ran.txt")),
					calls(a.patchHelo()),
					fakellm.Text("Wrote hello.txt and ran the command."),
				}},
				{Match: "WRONG-TASK", Replies: []fakellm.Reply{calls(a.write("hello.txt", "goodbye\n")), fakellm.Text("Done.")}},
				{Match: "KEY-TASK", Replies: search},
				{Match: "CONTROL-TASK", Replies: search},
			}})
			defer srv.Close()
			dir := t.TempDir()
			agentImageContext(t, a, agents, dir)
			box := "environment: {dockerfile: env/Dockerfile}\nmax_steps: 8\ntimeout: 3m\n"
			asserts := box + "assert:\n  - file_contains: {path: hello.txt, text: hello world}\n"
			for name, body := range map[string]string{
				"right": agentTask(a, "right", "RIGHT-TASK Write hello.txt, run a command, fix hello.txt.", asserts+
					"  - file_contains: {path: ran.txt, text: in-image}\n  - tool_called: "+a.shell+"\n"),
				"wrong": agentTask(a, "wrong", "WRONG-TASK Write hello.txt.", asserts),
				"key": agentTask(a, "key", "KEY-TASK Look for the key.", "env: {K1: "+half1+", K2: "+half2+"}\n"+box+
					"assert:\n  - file_absent: leak.txt\n  - file_exists: searched.txt\n"),
				// The control: the same search finds the key where the task put it.
				"control": agentTask(a, "control", "CONTROL-TASK Look for the key.", "env: {K1: "+half1+", K2: "+half2+", LEAKED: "+half1+half2+"}\n"+box+
					"assert:\n  - file_absent: leak.txt\n"),
			} {
				assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
			}
			out := t.TempDir()
			res := runner(t, run{Args: []string{"run", "-j", "4", "--model", "openai:fake", "--engine", e.Path, "--out", out, "--keep-workspaces", dir},
				Env:     []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=" + half1 + half2, "ANTHROPIC_API_KEY=" + half1 + half2},
				Timeout: 6 * time.Minute})
			assert.Equal(t, res.Code, 1, "wrong and control fail\n"+res.Stdout+res.Stderr)
			right := readResult(t, filepath.Join(out, "right", "result.json"))
			assert.Equal(t, right.Status, result.Passed, right.Reason)
			assert.Equal(t, right.Sandbox, e.Name())
			assert.Equal(t, right.Stop, result.StopCompleted)
			assert.Equal(t, right.Summary, "Wrote hello.txt and ran the command.")
			wrong := readResult(t, filepath.Join(out, "wrong", "result.json"))
			assert.Equal(t, wrong.Status, result.Failed)
			assert.Check(t, is.Contains(wrong.Reason, "file_contains"))
			key := readResult(t, filepath.Join(out, "key", "result.json"))
			leak, _ := os.ReadFile(filepath.Join(key.Workspace, "leak.txt"))
			assert.Check(t, is.Equal(string(leak), ""), "the agent found the provider key")
			assert.Check(t, is.Equal(key.Status, result.Passed), key.Reason)
			control := readResult(t, filepath.Join(out, "control", "result.json"))
			assert.Check(t, is.Equal(control.Status, result.Failed), "the control: the search finds the key in the task's env")
			leak, _ = os.ReadFile(filepath.Join(control.Workspace, "leak.txt"))
			assert.Check(t, is.Contains(string(leak), "env"))
		})
	}
}
