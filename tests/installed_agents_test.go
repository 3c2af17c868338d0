package tests

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/bench"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
)

// The real Claude Code and Codex CLI, from the pinned npm install in tests/agents (.ci/run
// runs npm ci there), driven through runner's endpoint by a scripted fake model. The fake
// speaks OpenAI to runner's provider; the endpoint speaks each program's own protocol.

// agentsInstallDir is the npm install of the programs under test (RUNNER_AGENTS_DIR).
const agentsInstallDir = "agents"

// requireAgentsEnv makes a missing install a failure instead of a skip (CI sets it).
const requireAgentsEnv = "RUNNER_REQUIRE_AGENTS"

// installedAgent is one real program and what the scripted model says to make it act.
type installedAgent struct {
	kind    string // agent: value
	program string // its name in node_modules/.bin
	native  string // its native program, for linux/amd64, under node_modules
	// inImage are the host's programs its container image needs beside it (with the
	// libraries they load), at the same paths.
	inImage []string
	shell   string // its shell tool, as tool_called names it
	// run is a call of its shell tool running cmd; edit writes (or patches) hello.txt.
	run       func(cmd string) fakellm.Call
	write     func(path, content string) fakellm.Call
	patchHelo func() fakellm.Call // hello.txt: "hi there" -> "hello world"
}

var installedAgents = []installedAgent{
	{
		kind: "claude-code", program: "claude", shell: "Bash",
		native: "@anthropic-ai/claude-code-linux-x64/claude",
		// Its Bash tool runs bash or zsh, nothing else ("No suitable shell found").
		inImage: []string{"/bin/bash"},
		run: func(cmd string) fakellm.Call {
			return fakellm.NewCall("Bash", map[string]any{"command": cmd, "description": "run it"})
		},
		write: func(path, content string) fakellm.Call {
			return fakellm.NewCall("Write", map[string]any{"file_path": path, "content": content})
		},
		patchHelo: func() fakellm.Call {
			return fakellm.NewCall("Edit", map[string]any{"file_path": "hello.txt", "old_string": "hi there", "new_string": "hello world"})
		},
	},
	{
		kind: "codex", program: "codex", shell: "exec_command",
		native: "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
		run: func(cmd string) fakellm.Call {
			return fakellm.NewCall("exec_command", map[string]any{"cmd": cmd})
		},
		write: func(path, content string) fakellm.Call {
			return fakellm.NewCall("exec_command", map[string]any{"cmd": "printf '%s' '" + content + "' > " + path})
		},
		patchHelo: func() fakellm.Call {
			// Codex applies apply_patch itself when a command is one.
			return fakellm.NewCall("exec_command", map[string]any{"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: hello.txt\n@@\n-hi there\n+hello world\n*** End Patch\nEOF"})
		},
	},
}

// agentsDir returns the absolute install directory, skipping the test (failing it under
// RUNNER_REQUIRE_AGENTS=1) when a's program is not installed there.
func (a installedAgent) agentsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(agentsInstallDir)
	assert.NilError(t, err)
	bin := filepath.Join(dir, "node_modules", ".bin", a.program)
	if _, err := os.Stat(bin); err != nil {
		msg := a.kind + " is not installed (" + bin + "): run `npm ci` in tests/agents to test it"
		if os.Getenv(requireAgentsEnv) == "1" {
			t.Fatal(msg + " (" + requireAgentsEnv + "=1)")
		}
		t.Skip(msg)
	}
	return dir
}

// calls is one scripted reply of tool calls.
func calls(c ...fakellm.Call) fakellm.Reply { return fakellm.Reply{ToolCalls: c} }

// agentTask is a task file for a's kind.
func agentTask(a installedAgent, name, prompt, extra string) string {
	return "name: " + name + "\nprompt: " + prompt + "\nagent: " + a.kind + "\n" + extra
}

// The agent edits a file and runs a command through its own tools and finishes: the
// scenario passes, and tool_called sees its shell tool at the endpoint. The same agent
// given a wrong answer fails on the file's content. Recorded, the run replays offline (the
// fake model gone) to the same verdicts, steps and usage.
func TestInstalledAgentsPassFailAndReplay(t *testing.T) {
	t.Parallel()
	for _, a := range installedAgents {
		t.Run(a.kind, func(t *testing.T) {
			t.Parallel()
			agents := a.agentsDir(t)
			srv := fakellm.Start(fakellm.Script{Routes: passFailRoutes(a, "cat hello.txt && echo ran-ok > ran.txt")})
			defer srv.Close()
			dir := t.TempDir()
			writePassFailTasks(t, dir, a, "", "ran-ok")
			cassette := filepath.Join(t.TempDir(), "cassette")
			common := []string{"run", "-j", "2", "--model", "openai:fake"}
			env := []string{"RUNNER_AGENTS_DIR=" + agents}

			recOut := filepath.Join(t.TempDir(), "rec")
			rec := runner(t, run{Args: append(append(common, "--out", recOut, "--record", cassette), dir),
				Env: append(env, "OPENAI_BASE_URL="+srv.OpenAIURL(), "OPENAI_API_KEY=sk-fake-provider-key-123456"), Timeout: 3 * time.Minute})
			assert.Equal(t, rec.Code, 1, "one passes, one fails\n"+rec.Stdout+rec.Stderr)
			checkPassFail(t, recOut, a)
			for _, req := range srv.Requests() {
				assert.Check(t, req.Model == "fake", "the provider gets the run's model, whatever the program asks for: %q", req.Model)
			}
			served := srv.Served()
			srv.Close()

			playOut := filepath.Join(t.TempDir(), "play")
			play := runner(t, run{Args: append(append(common, "--out", playOut, "--replay", cassette), dir), Env: env, Timeout: 3 * time.Minute})
			assert.Equal(t, play.Code, rec.Code, play.Stdout+play.Stderr)
			for _, name := range []string{"right", "wrong"} {
				want, got := readResult(t, filepath.Join(recOut, name, "result.json")), readResult(t, filepath.Join(playOut, name, "result.json"))
				assert.Check(t, is.Equal(got.Status, want.Status), name)
				assert.Check(t, is.Equal(got.Reason, want.Reason), name)
				assert.Check(t, is.Equal(got.Steps, want.Steps), name)
				assert.Check(t, is.DeepEqual(got.Usage, want.Usage), name)
				assert.Check(t, is.DeepEqual(got.Assertions, want.Assertions), name)
			}
			assert.Equal(t, srv.Served(), served, "the replay reached no server")
		})
	}
}

// passFailRoutes script the model for the tasks of writePassFailTasks: RIGHT-TASK writes
// hello.txt, runs cmd (which writes ran.txt) and patches hello.txt, each through a's own
// tools, then answers; WRONG-TASK writes the wrong words.
func passFailRoutes(a installedAgent, cmd string) []fakellm.Route {
	return []fakellm.Route{
		{Match: "RIGHT-TASK", Replies: []fakellm.Reply{
			calls(a.write("hello.txt", "hi there\n")),
			calls(a.run(cmd)),
			calls(a.patchHelo()),
			fakellm.Text("Wrote hello.txt and ran the command."),
		}},
		{Match: "WRONG-TASK", Replies: []fakellm.Reply{
			calls(a.write("hello.txt", "goodbye\n")),
			fakellm.Text("Done."),
		}},
	}
}

// writePassFailTasks writes right.yaml and wrong.yaml for a into dir, both with extra (an
// environment:, say); right.yaml also asserts that ran.txt holds ran and that a's shell
// tool was called.
func writePassFailTasks(t *testing.T, dir string, a installedAgent, extra, ran string) {
	t.Helper()
	asserts := extra + "max_steps: 8\ntimeout: 2m\nassert:\n  - file_contains: {path: hello.txt, text: hello world}\n"
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "right.yaml"), []byte(agentTask(a, "right",
		"RIGHT-TASK Write hello.txt, run a command, fix hello.txt.", asserts+
			"  - file_contains: {path: ran.txt, text: "+ran+"}\n  - tool_called: "+a.shell+"\n")), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "wrong.yaml"), []byte(agentTask(a, "wrong",
		"WRONG-TASK Write hello.txt.", asserts)), 0o644))
}

// checkPassFail checks the results of writePassFailTasks' tasks under out: right passed
// after three tool calls and the program's own final message, wrong failed on its file.
func checkPassFail(t *testing.T, out string, a installedAgent) {
	t.Helper()
	right := readResult(t, filepath.Join(out, "right", "result.json"))
	assert.Equal(t, right.Status, result.Passed, right.Reason)
	assert.Equal(t, right.Agent, a.kind)
	assert.Equal(t, right.Stop, result.StopCompleted)
	assert.Equal(t, right.Steps, 4, "three tool calls and the answer")
	assert.Equal(t, right.Summary, "Wrote hello.txt and ran the command.", "the program's own final message")
	wrong := readResult(t, filepath.Join(out, "wrong", "result.json"))
	assert.Equal(t, wrong.Status, result.Failed)
	assert.Check(t, is.Contains(wrong.Reason, "file_contains"))
	assert.Equal(t, wrong.Stop, result.StopCompleted, "it finished; its work is wrong")
}

// What runner enforces on the real programs: a request past max_steps is refused and the
// scenario fails with that reason; an agent stuck in a command and a model that never
// answers is killed at the timeout, every process it started with it, and the transcript
// of its finished steps is kept; the provider's key, in runner's environment, is nowhere
// the agent's own shell tool can look.
func TestInstalledAgentsLimitsAndKey(t *testing.T) {
	t.Parallel()
	const half1, half2 = "sk-e2e-agents", "-provider-key-c0ffee42"
	for _, a := range installedAgents {
		t.Run(a.kind, func(t *testing.T) {
			t.Parallel()
			agents := a.agentsDir(t)
			marker := "987.65" + map[string]string{"claude-code": "1", "codex": "2"}[a.kind] // sleep's argument, to find it in /proc
			srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
				{Match: "LOOP-TASK", Replies: []fakellm.Reply{calls(a.run("echo again >> log.txt"))}, Repeat: true},
				{Match: "HANG-TASK", Replies: []fakellm.Reply{
					calls(a.run("echo started > started.txt")),
					calls(a.run("sleep " + marker)),
					{Text: "never", Delay: fakellm.Duration(10 * time.Minute)},
				}},
				{Match: "KEY-TASK", Replies: []fakellm.Reply{calls(a.run(hostKeyGrep)), fakellm.Text("Searched.")}},
			}})
			defer srv.Close()
			dir := t.TempDir()
			for name, body := range map[string]string{
				"loop": agentTask(a, "loop", "LOOP-TASK Log forever.", "max_steps: 2\ntimeout: 2m\nassert:\n  - file_exists: log.txt\n"),
				"hang": agentTask(a, "hang", "HANG-TASK Start, then wait.", "max_steps: 8\ntimeout: 8s\nassert:\n  - file_exists: started.txt\n"),
				"key": agentTask(a, "key", "KEY-TASK Look for the key.", "env: {K1: "+half1+", K2: "+half2+"}\nmax_steps: 4\ntimeout: 2m\n"+
					"assert:\n  - file_absent: leak.txt\n  - file_exists: searched.txt\n"),
			} {
				assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
			}
			out := t.TempDir()
			res := runner(t, run{Args: []string{"run", "-j", "3", "--model", "openai:fake", "--out", out, "--keep-workspaces", dir},
				Env: []string{"RUNNER_AGENTS_DIR=" + agents, "OPENAI_BASE_URL=" + srv.OpenAIURL(),
					"OPENAI_API_KEY=" + half1 + half2, "ANTHROPIC_API_KEY=" + half1 + half2}, Timeout: 3 * time.Minute})
			assert.Equal(t, res.Code, 1, res.Stdout+res.Stderr)

			loop := readResult(t, filepath.Join(out, "loop", "result.json"))
			assert.Check(t, is.Equal(loop.Status, result.Failed))
			assert.Check(t, is.Equal(loop.Stop, result.StopMaxSteps))
			assert.Check(t, is.Equal(loop.Steps, 2))
			assert.Check(t, is.Contains(loop.Reason, "refused by runner's endpoint"))
			assert.Check(t, is.Contains(loop.Reason, "max_steps (2)"))

			hang := readResult(t, filepath.Join(out, "hang", "result.json"))
			assert.Check(t, is.Equal(hang.Status, result.Failed))
			assert.Check(t, is.Equal(hang.Stop, result.StopTimeout))
			events := readTranscript(t, filepath.Join(out, "hang", "transcript.jsonl"))
			var responses int
			var killed bool
			for _, e := range events {
				switch e.Type {
				case transcript.TypeResponse:
					responses++
				case transcript.TypeAgent:
					killed = killed || bytes.Contains(e.Data, []byte(`"killed":true`))
				}
			}
			assert.Check(t, responses >= 2, "the finished steps are in the transcript: %d responses", responses)
			assert.Check(t, killed, "the transcript says runner killed the agent")
			_, err := os.Stat(filepath.Join(hang.Workspace, "started.txt"))
			assert.Check(t, err, "its first command ran")
			assert.Check(t, is.Equal(leftover(marker), ""), "the command the agent left running was killed with it")

			key := readResult(t, filepath.Join(out, "key", "result.json"))
			leak, _ := os.ReadFile(filepath.Join(key.Workspace, "leak.txt"))
			assert.Check(t, is.Equal(string(leak), ""), "the agent found the provider key")
			assert.Check(t, is.Equal(key.Status, result.Passed), key.Reason)
		})
	}
}

// leftover returns the command lines of processes whose arguments contain marker.
func leftover(marker string) string {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(marker)) && !bytes.Contains(b, []byte("go test")) {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return strings.Join(found, "\n")
}

// runner agents --check against the real install: both programs found at the versions
// their rows say runner's tests drive (the lockfile's).
func TestInstalledAgentsCheck(t *testing.T) {
	t.Parallel()
	var agents string
	for _, a := range installedAgents {
		agents = a.agentsDir(t)
	}
	res := runner(t, run{Args: []string{"agents", "--check"}, Env: []string{"RUNNER_AGENTS_DIR=" + agents}})
	assert.Equal(t, res.Code, 0, res.Stdout+res.Stderr)
	for _, a := range installedAgents {
		assert.Check(t, is.Regexp(a.kind+` +ok +\S+ +\S+ +`+regexp.QuoteMeta(filepath.Join(agents, "node_modules", ".bin", a.program)), res.Stdout))
	}
}

// runner bench --agent claude-code,codex,runner compares the three agents on one model and
// one suite in one table: the scripted model solves the task with Claude Code and with
// runner's loop (each through its own tools) and answers Codex wrongly, so the lines'
// pass rates are 100%, 100% and 0%, with the usual statistics, and every cell is measured.
func TestInstalledAgentsBench(t *testing.T) {
	t.Parallel()
	var agents string
	for _, a := range installedAgents {
		agents = a.agentsDir(t)
	}
	const prompt = "BENCH-TASK Write hello.txt saying hello world."
	claude, codex := installedAgents[0], installedAgents[1]
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "BENCH-TASK", Offers: "Write", Replies: []fakellm.Reply{calls(claude.write("hello.txt", "hello world\n")), fakellm.Text("Done.")}},
		{Match: "BENCH-TASK", Offers: "exec_command", Replies: []fakellm.Reply{calls(codex.write("hello.txt", "goodbye\n")), fakellm.Text("Done.")}},
		{Match: "BENCH-TASK", Offers: "write_file", Replies: []fakellm.Reply{
			fakellm.ToolCall("write_file", map[string]any{"path": "hello.txt", "content": "hello world\n"}),
			fakellm.ToolCall("task_complete", map[string]any{"summary": "Done."}),
		}},
	}})
	defer srv.Close()
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "hello.yaml"), []byte("name: hello\nprompt: "+prompt+
		"\nmax_steps: 6\ntimeout: 2m\nassert:\n  - file_contains: {path: hello.txt, text: hello world}\n"), 0o644))
	out := t.TempDir()
	// -j 1: two repeats of runner's loop open with the same messages, and the fake tells
	// conversations apart by their opening.
	res := runner(t, run{Args: []string{"bench", "--agent", "claude-code,codex,runner", "--model", "openai:fake", "--repeat", "2", "-j", "1", "--out", out, dir},
		Env: []string{"RUNNER_AGENTS_DIR=" + agents, "OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-fake-provider-key-123456"}, Timeout: 4 * time.Minute})
	assert.Equal(t, res.Code, 0, res.Stdout+res.Stderr)

	rep, err := bench.ReadFile(filepath.Join(out, bench.JSONFile))
	assert.NilError(t, err)
	rates := map[string]float64{}
	for _, m := range rep.Models {
		assert.Check(t, is.Equal(m.Name, "openai:fake"))
		assert.Check(t, is.Equal(m.Summary.Passed+m.Summary.Failed, 2), "%s: every cell measured: %+v", m.Label(), m.Summary)
		rates[m.Agent] = m.Summary.PassRate
		cells, _ := filepath.Glob(filepath.Join(m.OutDir, "*", "result.json"))
		assert.Check(t, is.Len(cells, 2), m.OutDir)
		for _, c := range cells {
			if got := readResult(t, c); m.Agent != "runner" {
				assert.Check(t, is.Equal(got.Agent, m.Agent), "the cell ran its line's agent")
			}
		}
	}
	assert.DeepEqual(t, rates, map[string]float64{"claude-code": 1, "codex": 0, "runner": 1})
	md, err := os.ReadFile(filepath.Join(out, bench.MarkdownFile))
	assert.NilError(t, err)
	for _, line := range []string{`claude-code \@ openai:fake`, `codex \@ openai:fake`, `runner \@ openai:fake`} {
		assert.Check(t, is.Contains(string(md), "| "+line+" |"))
	}
}

// Codex given a model name it knows offers that model's tools, which are not all
// functions: gpt-5.5 a custom (free-form) apply_patch with a Lark grammar; gpt-6.2-sol
// (code mode) no tools list but namespaces in an additional_tools item, with a custom
// exec that runs JavaScript calling its nested tools. runner passes Codex the model's
// own name (gpt-5.5 of openai-responses:gpt-5.5) and the endpoint carries the tools and
// calls both ways: through runner's Responses provider as custom tools (the fake model
// answers a custom_tool_call), through its chat provider as a function with one string
// argument. Each scenario patches and runs a command through those tools and passes;
// the Responses run, recorded, replays offline to the same verdict.
func TestInstalledCodexWithKnownModelNames(t *testing.T) {
	t.Parallel()
	codex := installedAgents[1]
	agents := codex.agentsDir(t)
	const patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello world\n*** End Patch\n"
	js := "await tools.apply_patch(" + strconv.Quote(patch) + ");\n" +
		"const r = await tools.exec_command({cmd: \"cat hello.txt && echo ran-ok > ran.txt\"});\ntext(JSON.stringify(r));"
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "PATCH-TASK", Replies: []fakellm.Reply{
			calls(fakellm.NewCall("apply_patch", map[string]any{"input": patch})),
			calls(codex.run("cat hello.txt && echo ran-ok > ran.txt")),
			fakellm.Text("Patched and ran."),
		}},
		{Match: "CODE-TASK", Replies: []fakellm.Reply{
			calls(fakellm.NewCall("exec", map[string]any{"input": js})),
			fakellm.Text("Patched and ran."),
		}},
	}})
	t.Cleanup(srv.Close) // after the parallel subtests
	asserts := "max_steps: 6\ntimeout: 2m\nassert:\n  - file_contains: {path: hello.txt, text: hello world}\n  - file_contains: {path: ran.txt, text: ran-ok}\n"
	env := []string{"RUNNER_AGENTS_DIR=" + agents, "OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-fake-provider-key-123456"}
	for _, c := range []struct{ name, model, prompt, tool string }{
		{"responses", "openai-responses:gpt-5.5", "PATCH-TASK Add hello.txt with a patch, then run a command.", "apply_patch"},
		{"chat", "openai:gpt-5.5", "PATCH-TASK Add hello.txt with a patch, then run a command.", "apply_patch"},
		{"code-mode", "openai:gpt-6.2-sol", "CODE-TASK Add hello.txt with a patch, then run a command.", "exec"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			assert.NilError(t, os.WriteFile(filepath.Join(dir, "known.yaml"), []byte(agentTask(codex, "known", c.prompt,
				asserts+"  - tool_called: "+c.tool+"\n")), 0o644))
			out, cassette := t.TempDir(), filepath.Join(t.TempDir(), "cassette")
			res := runner(t, run{Args: []string{"run", "--model", c.model, "--out", out, "--record", cassette, dir}, Env: env, Timeout: 3 * time.Minute})
			assert.Equal(t, res.Code, 0, res.Stdout+res.Stderr)
			got := readResult(t, filepath.Join(out, "known", "result.json"))
			assert.Equal(t, got.Status, result.Passed, got.Reason)
			var argv []string
			for _, e := range readTranscript(t, filepath.Join(out, "known", "transcript.jsonl")) {
				if e.Type == transcript.TypeAgent && argv == nil {
					var a transcript.Agent
					assert.NilError(t, json.Unmarshal(e.Data, &a))
					argv = a.Argv
				}
			}
			model := c.model[strings.Index(c.model, ":")+1:]
			assert.Check(t, is.Contains(strings.Join(argv, " "), "--model "+model), "Codex is given the model's own name")
			if c.name != "responses" {
				return
			}
			sent := 0
			for _, r := range srv.Requests() {
				if r.API == "openai-responses" && strings.Contains(string(r.Body), `"type":"custom"`) {
					sent++
				}
			}
			assert.Check(t, sent > 0, "apply_patch reached the Responses API as a custom tool")
			play := runner(t, run{Args: []string{"run", "--model", c.model, "--out", t.TempDir(), "--replay", cassette, dir},
				Env: []string{"RUNNER_AGENTS_DIR=" + agents}, Timeout: 3 * time.Minute})
			assert.Equal(t, play.Code, 0, "the recording replays offline: "+play.Stdout+play.Stderr)
		})
	}
}
