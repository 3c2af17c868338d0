package tests

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools/exec/container"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// wgetAgent is an external agent for a busybox image: busybox sh and wget, no curl or jq.
// It asks runner's endpoint (OpenAI chat completions) for the answer to its prompt, read
// on stdin, and writes the word after ANSWER: in the model's reply to answer.txt.
const wgetAgent = `#!/bin/sh
prompt=$(cat)
body='{"model":"'"$RUNNER_MODEL"'","messages":[{"role":"user","content":"'"$prompt"'"}]}'
reply=$(wget -q -O - --header "Authorization: Bearer $OPENAI_API_KEY" --header "Content-Type: application/json" \
	--post-data "$body" "$OPENAI_BASE_URL/chat/completions") || { echo "no answer from $OPENAI_BASE_URL" >&2; exit 2; }
answer=$(echo "$reply" | grep -o 'ANSWER:[a-z]*' | head -n 1 | cut -d: -f2)
[ -n "$answer" ] || { echo "no ANSWER in $reply" >&2; exit 3; }
echo "$answer" > answer.txt
`

// keySearch is a shell command searching the agent's view for $K1$K2 (the key, in two
// halves so that the task file does not hold it whole): its environment, every process's
// environment and command line, and the files searched by files (a shell fragment adding
// what it finds to $found). What it finds goes to leak.txt; finding nothing, it writes
// searched.txt (the search ran).
func keySearch(files string) string {
	return `k="$K1$K2"; found=; env | grep -qF "$k" && found="$found env"; ` +
		`for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr "\0" "\n" < "$f" 2>/dev/null | grep -qF "$k" && found="$found $f"; done; ` +
		files + `if [ -n "$found" ]; then echo "$found" > leak.txt; else echo searched > searched.txt; fi`
}

// hostKeyGrep searches, on the host, the agent's home and the temp dirs too.
var hostKeyGrep = keySearch(`grep -rqsF "$k" "$HOME" /tmp /var/tmp /run 2>/dev/null && found="$found files"; `)

// keyGrep searches, in a container, every file outside /proc, /sys and /dev too. Not
// with -F, which is faster: busybox's grep -F stops reading a line at a NUL, so it misses
// a key after one in a binary file (and in /proc's NUL-separated files, split into lines
// above); the key has no regular expression characters.
var keyGrep = keySearch(`for d in /*; do case $d in /proc|/sys|/dev) continue;; esac; grep -rqs "$k" "$d" && found="$found $d"; done; `)

// containerAgentSuite writes tasks whose command agent runs in a busybox container.
func containerAgentSuite(t *testing.T, tasks map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(wgetAgent), 0o755))
	for name, body := range tasks {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte("name: "+name+"\n"+body), 0o644))
	}
	return dir
}

const inBusybox = "environment: {image: " + containertest.BaseImage + "}\ntimeout: 2m\n"

// An external agent in the task's container: a busybox script ($TASK_DIR/agent.sh, bound
// in) asks runner's endpoint through the forwarder and writes the model's answer; the
// right answer passes, the wrong one fails. The attack: with the provider's key in
// runner's environment, an agent that searches its whole view in the container (its
// environment, /proc, every file) finds nothing; the control, the same search with the
// key in the task's env:, finds it. With verify.fresh_container the checks run in a new
// container without the agent's mounts. No container is left behind.
func TestCommandAgentInAContainer(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "RIGHT", Replies: []fakellm.Reply{fakellm.Text("ANSWER:hello")}},
		{Match: "WRONG", Replies: []fakellm.Reply{fakellm.Text("ANSWER:goodbye")}},
		{Replies: []fakellm.Reply{fakellm.Text("nothing")}},
	}})
	defer srv.Close()
	const half1, half2 = "sk-e2e-provider", "-key-c0a7a1ne44"
	answer := "agent: {command: sh $TASK_DIR/agent.sh}\n" + inBusybox + "assert:\n  - file_contains: {path: answer.txt, text: hello}\n"
	grep := "env: {K1: " + half1 + ", K2: " + half2 + "}\n" + inBusybox + "agent: {command: '" + keyGrep + "'}\nassert:\n  - file_absent: leak.txt\n"
	dir := containerAgentSuite(t, map[string]string{
		"right": "prompt: RIGHT say hello\n" + answer,
		"wrong": "prompt: WRONG say hello\n" + answer,
		// Another user than runner's in the container reaches the endpoint and its files.
		"asuser": "prompt: RIGHT say hello, as user 1000\n" + strings.Replace(answer, "}\ntimeout", ", user: \"1000:1000\"}\ntimeout", 1) +
			"  - command: {run: 'test \"$(stat -c %u answer.txt)\" = 1000'}\n",
		// Verification in a new container of the image, without the endpoint's mounts.
		"fresh": "prompt: RIGHT say hello, fresh\n" + answer + "  - command: {run: '! test -e /.runner-agent'}\n" +
			"verify: {fresh_container: true}\n",
		"grep":    "prompt: go\n" + grep,
		"control": "prompt: go\n" + strings.Replace(grep, "env: {", "env: {LEAKED: "+half1+half2+", ", 1),
		// The control of the file search: the key after a NUL in a binary file, where
		// busybox's grep -F does not look.
		"nulcontrol": "prompt: go\nworkspace: {setup: ['printf \"x\\000%s\\000\" \"$K1$K2\" > blob']}\n" + grep,
	})
	out, runID := t.TempDir(), container.NewRunID()
	res := runner(t, run{Args: []string{"run", "-j", "2", "--out", out, "--model", "openai:fake", "--engine", e.Path, "--run-id", runID, dir},
		Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=" + half1 + half2, "ANTHROPIC_API_KEY=" + half1 + half2}, Timeout: 4 * time.Minute})
	assert.Equal(t, res.Code, 1, "wrong and control fail")
	right := readResult(t, filepath.Join(out, "right", "result.json"))
	assert.Equal(t, right.Status, result.Passed, right.Reason)
	assert.Equal(t, right.Agent, "command")
	assert.Equal(t, right.Stop, result.StopCompleted)
	assert.Equal(t, right.Steps, 1)
	assert.Equal(t, right.Sandbox, e.Name())
	asUser := readResult(t, filepath.Join(out, "asuser", "result.json"))
	assert.Equal(t, asUser.Status, result.Passed, asUser.Reason)
	fresh := readResult(t, filepath.Join(out, "fresh", "result.json"))
	assert.Equal(t, fresh.Status, result.Passed, fresh.Reason)
	wrong := readResult(t, filepath.Join(out, "wrong", "result.json"))
	assert.Equal(t, wrong.Status, result.Failed)
	assert.Check(t, is.Contains(wrong.Reason, "file_contains"))
	got := readResult(t, filepath.Join(out, "grep", "result.json"))
	assert.Equal(t, got.Status, result.Passed, "the agent found the provider's key: %s", got.Reason)
	control := readResult(t, filepath.Join(out, "control", "result.json"))
	assert.Equal(t, control.Status, result.Failed, "the control: the key in the task's env is found")
	assert.Check(t, is.Contains(control.Reason, "leak.txt"))
	nul := readResult(t, filepath.Join(out, "nulcontrol", "result.json"))
	assert.Equal(t, nul.Status, result.Failed, "the control: the key after a NUL in a file is found")
	// Nothing the engine bound in for the agent counts as its change outside the workspace.
	events := readTranscript(t, filepath.Join(out, "right", "transcript.jsonl"))
	for _, ev := range eventsOf(events, transcript.TypeFilesChanged) {
		assert.Check(t, !strings.Contains(string(ev.Data), "runner-agent"), string(ev.Data))
	}
	assert.Equal(t, leftovers(t, e, runID), "")
}

// An agent that hangs in the container, with processes of its own in the background
// (one in a new session), is killed at the scenario's timeout: the scenario fails with
// stop reason timeout, its finished step is kept in the transcript, and verification,
// in the same container, finds no process of the agent's left there.
func TestHangingAgentInAContainerIsKilled(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{{Replies: []fakellm.Reply{fakellm.Text("ANSWER:hello")}}}})
	defer srv.Close()
	dir := containerAgentSuite(t, map[string]string{"hang": "prompt: say hello\n" +
		"agent: {command: 'sh $TASK_DIR/agent.sh; setsid sleep 601 & sleep 602 & sleep 603'}\n" +
		strings.Replace(inBusybox, "timeout: 2m", "timeout: 8s", 1) +
		"assert:\n  - file_contains: {path: answer.txt, text: hello}\n  - command: {run: \"! ps -o args | grep -q '[s]leep 60'\"}\n"})
	out, runID := t.TempDir(), container.NewRunID()
	start := time.Now()
	res := runner(t, run{Args: []string{"run", "--out", out, "--model", "openai:fake", "--engine", e.Path, "--run-id", runID, dir},
		Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-fake"}, Timeout: 3 * time.Minute})
	took := time.Since(start)
	assert.Equal(t, res.Code, 1)
	got := readResult(t, filepath.Join(out, "hang", "result.json"))
	assert.Equal(t, got.Status, result.Failed)
	assert.Equal(t, got.Stop, result.StopTimeout)
	assert.Equal(t, got.Steps, 1)
	for _, a := range got.Assertions {
		assert.Check(t, a.Passed, "%s: %s", a.Kind, a.Message)
	}
	events := readTranscript(t, filepath.Join(out, "hang", "transcript.jsonl"))
	assert.Check(t, is.Len(eventsOf(events, transcript.TypeResponse), 1), "the finished step is kept")
	agents := eventsOf(events, transcript.TypeAgent)
	assert.Assert(t, len(agents) == 2)
	p, err := agents[1].Payload()
	assert.NilError(t, err)
	assert.Check(t, p.(*transcript.Agent).Killed)
	assert.Equal(t, leftovers(t, e, runID), "")
	t.Logf("killed at its 8 s timeout; the run took %s", took.Round(time.Millisecond))
}

// With network: false the agent in a container reaches runner's endpoint and nothing
// else: not the model server itself (on the host's loopback), not a server listening on
// every host address through the container's gateway, and it has no route out. The
// control, network: true, has its default route, and the endpoint still works (through
// the forwarder: the host's loopback is not the container's).
func TestContainerAgentReachesOnlyTheEndpoint(t *testing.T) {
	t.Parallel()
	e := containertest.Engine(t)
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{{Replies: []fakellm.Reply{fakellm.Text("ANSWER:hello")}}}})
	defer srv.Close()
	var hits atomic.Int64
	l, err := net.Listen("tcp", "0.0.0.0:0")
	assert.NilError(t, err)
	host := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }), ReadHeaderTimeout: time.Second}
	go func() { _ = host.Serve(l) }()
	defer func() { _ = host.Close() }()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	probe := "gw=$(ip route | awk '/^default/ {print $3}'); [ -n \"$gw\" ] && echo route >> reached.txt\n" +
		"wget -q -T 3 -O /dev/null \"$DIRECT/models\" && echo direct >> reached.txt\n" +
		"wget -q -T 3 -O /dev/null \"http://${gw:-10.88.0.1}:$PORT/\" && echo host >> reached.txt\n" +
		"exec sh \"$TASK_DIR/agent.sh\"\n"
	task := func(network string) string {
		return "prompt: say hello (network " + network + ")\nenv: {DIRECT: '" + srv.OpenAIURL() + "', PORT: '" + port + "'}\n" +
			"agent: {command: sh $TASK_DIR/probe.sh, files: [agent.sh]}\n" +
			strings.Replace(inBusybox, "}", ", network: "+network+"}", 1) +
			"assert:\n  - file_contains: {path: answer.txt, text: hello}\n"
	}
	dir := containerAgentSuite(t, map[string]string{"closed": task("false") + "  - file_absent: reached.txt\n", "open": task("true")})
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "probe.sh"), []byte(probe), 0o755))
	out := t.TempDir()
	res := runner(t, run{Args: []string{"run", "-j", "2", "--out", out, "--model", "openai:fake", "--engine", e.Path, "--keep-workspaces", dir},
		Env: []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-fake"}, Timeout: 4 * time.Minute})
	assert.Equal(t, res.Code, 0)
	closed := readResult(t, filepath.Join(out, "closed", "result.json"))
	assert.Equal(t, closed.Status, result.Passed, closed.Reason)
	open := readResult(t, filepath.Join(out, "open", "result.json"))
	assert.Equal(t, open.Status, result.Passed, open.Reason)
	reached, _ := os.ReadFile(filepath.Join(open.Workspace, "reached.txt"))
	assert.Check(t, is.Contains(string(reached), "route"), "the control: network: true has a way out")
	assert.Check(t, !strings.Contains(string(reached), "direct"), "the host's loopback is not the container's")
	t.Logf("network: true reached %q; the host listener saw %d requests", strings.Fields(string(reached)), hits.Load())
	_ = os.RemoveAll(closed.Workspace)
	_ = os.RemoveAll(open.Workspace)
}
