package scenario_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/budget"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
	confinement "github.com/agentrunner/runner/tools/exec/sandbox"
)

// curlAgent is the example external agent (curl + jq against the endpoint).
var curlAgent = func() string {
	b, err := os.ReadFile("../../examples/agents/curl-agent.sh")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// agentTask writes the task with the example agent beside it and loads it.
func agentTask(t *testing.T, yaml string) *task.Task {
	t.Helper()
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(curlAgent), 0o755))
	path := filepath.Join(dir, "task.yaml")
	tk, err := task.Parse(path, []byte(yaml), task.LoadOptions{KnownTool: testCatalog.Canonical, ToolNames: testCatalog.Names()})
	assert.NilError(t, err)
	return tk
}

const helloTask = `name: agent-hello
prompt: Write hello to hello.txt.
agent: {command: sh $TASK_DIR/agent.sh}
max_steps: 5
assert:
  - file_contains: {path: hello.txt, text: hello}
  - tool_called: {name: write_file, args_match: '"path":"hello.txt"'}
`

func writes(content string) *scriptModel {
	return script(toolCall("write_file", `{"path":"hello.txt","content":"`+content+`"}`), toolCall("task_complete", `{"summary":"wrote it"}`))
}

// sandboxed returns the options with sandbox mode (skipping where it does not work).
func sandboxed(t *testing.T, opts scenario.Options, mode string) scenario.Options {
	t.Helper()
	if mode == "" {
		return opts
	}
	w, _, err := confinement.Probe(context.Background(), mode)
	if err != nil {
		t.Skipf("sandbox %s: %v", mode, err)
	}
	opts.Sandbox = func(string) (tools.CommandWrapper, error) { return w, nil }
	return opts
}

func TestCommandAgentPassesInEverySandbox(t *testing.T) {
	for _, mode := range []string{"", confinement.ModeBwrap, confinement.ModeLandlock} {
		t.Run("sandbox="+mode, func(t *testing.T) {
			res := run(t, agentTask(t, helloTask), sandboxed(t, runOptions(t, writes(`hello\n`)), mode))
			assert.Equal(t, res.Status, result.Passed, res.Reason)
			assert.Equal(t, res.Stop, result.StopCompleted)
			assert.Equal(t, res.Agent, "command")
			assert.Equal(t, res.Steps, 2)
			assert.Equal(t, res.Usage.PromptTokens, 14)
			assert.Equal(t, res.ToolCalls, 1, "write_file, whose result came back; task_complete ended the agent")
			evs := events(t, res)
			agents := eventsOf(evs, transcript.TypeAgent)
			assert.Assert(t, is.Len(agents, 2))
			assert.Equal(t, agents[1]["exited"], true)
			assert.Equal(t, agents[1]["finished"], true)
			assert.Assert(t, is.Len(eventsOf(evs, transcript.TypeRequest), 2))
			calls := eventsOf(evs, transcript.TypeToolCall)
			assert.Assert(t, is.Len(calls, 1))
			assert.Equal(t, calls[0]["name"], "write_file")
		})
	}
}

func TestCommandAgentWrongAnswerFails(t *testing.T) {
	res := run(t, agentTask(t, helloTask), runOptions(t, writes(`goodbye\n`)))
	assert.Equal(t, res.Status, result.Failed)
	assert.Equal(t, res.Stop, result.StopCompleted)
	assert.Assert(t, is.Contains(res.Reason, "file_contains"))
}

func TestCommandAgentThatGivesUpFails(t *testing.T) {
	tk := agentTask(t, "prompt: go\nagent: {command: 'echo cannot >&2; exit 3'}\n")
	res := run(t, tk, runOptions(t, writes("x")))
	assert.Equal(t, res.Status, result.Failed)
	assert.Equal(t, res.Stop, result.StopGaveUp)
	assert.Assert(t, is.Contains(res.Reason, "gave_up"))
	assert.Assert(t, is.Contains(res.Reason, "the agent exited with code 3"))
	agents := eventsOf(events(t, res), transcript.TypeAgent)
	assert.Assert(t, is.Contains(agents[1]["output"], "cannot"))
}

// An agent that hangs is killed at the scenario's timeout with everything it started,
// and the transcript of what it did so far is kept.
func TestHangingAgentIsKilledAtTheTimeout(t *testing.T) {
	tk := agentTask(t, `prompt: go
timeout: 2s
agent: {command: 'curl -sS -H "Authorization: Bearer $OPENAI_API_KEY" -H "Content-Type: application/json" -d "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}" $OPENAI_BASE_URL/chat/completions; (sleep 600 & echo $! > bg.pid; wait)'}
`)
	start := time.Now()
	opts := runOptions(t, writes("x"))
	opts.KeepWorkspaces = true
	res := run(t, tk, opts)
	assert.Assert(t, time.Since(start) < 20*time.Second, "took %s", time.Since(start))
	assert.Equal(t, res.Status, result.Failed)
	assert.Equal(t, res.Stop, result.StopTimeout)
	assert.Equal(t, res.Steps, 1)
	evs := events(t, res)
	assert.Assert(t, is.Len(eventsOf(evs, transcript.TypeResponse), 1), "the finished step is kept")
	agents := eventsOf(evs, transcript.TypeAgent)
	assert.Equal(t, agents[len(agents)-1]["killed"], true)
	b, err := os.ReadFile(filepath.Join(res.Workspace, "bg.pid"))
	assert.NilError(t, err)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	assert.Assert(t, pid > 0 && syscall.Kill(pid, 0) != nil, "the background sleep %d outlived the agent", pid)
}

func TestRequestPastMaxStepsFailsTheScenario(t *testing.T) {
	tk := agentTask(t, strings.Replace(helloTask, "max_steps: 5", "max_steps: 1", 1))
	loop := script(toolCall("read_file", `{"path":"hello.txt"}`))
	res := run(t, tk, runOptions(t, loop))
	assert.Equal(t, res.Status, result.Failed)
	assert.Equal(t, res.Stop, result.StopMaxSteps)
	assert.Assert(t, strings.HasPrefix(res.Reason, "max_steps:"), res.Reason)
	assert.Assert(t, is.Contains(res.Reason, "refused by runner's endpoint"))
	assert.Equal(t, loop.stepCount(), 1, "the refused request never reached the model")
}

// The attack: the agent searches everything it can see (its environment, every process's
// environment and command line in /proc, its home, /tmp, the task's directory) for the
// provider's key, which runner holds in its own environment, and leaves it in the
// workspace if found. Under bwrap and Landlock it must find nothing; with no sandbox it
// finds it in the credentials file (the control: the test can fail).
func TestAgentCannotFindTheProviderKey(t *testing.T) {
	// Made at run time, so that no binary the sandbox shows (runner's own, bound in for
	// the forwarder) holds it; the agent gets it in halves, so that neither its own
	// environment nor its command line does.
	half1, half2 := "sk-real-"+strconv.FormatInt(time.Now().UnixNano(), 36), "-"+strconv.Itoa(os.Getpid())+"-provider-key"
	key := half1 + half2
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("ANTHROPIC_API_KEY", key)
	// And in a credentials file of runner's user, outside the workspace, whose path the
	// agent knows (CRED): what a CI job leaves in its home.
	cred := filepath.Join(t.TempDir(), ".config", "openai")
	assert.NilError(t, os.MkdirAll(cred, 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(cred, "key"), []byte(key+"\n"), 0o600))
	grep := `k="$K1$K2"; found=; ` +
		`env | grep -q "$k" && found="$found env"; ` +
		`for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do grep -qa "$k" "$f" 2>/dev/null && found="$found $f"; done; ` +
		`grep -rqs "$k" "$CRED" "$HOME" /tmp /var/tmp /run "$TASK_DIR" 2>/dev/null && found="$found files"; ` +
		`[ -n "$found" ] && echo "$found" > leak.txt; exit 0`
	tk := agentTask(t, "prompt: go\nenv: {K1: "+half1+", K2: "+half2+", CRED: "+cred+"}\nagent: {command: '"+grep+"'}\nassert:\n  - file_absent: leak.txt\n")
	for _, c := range []struct {
		mode  string
		leaks bool
	}{{confinement.ModeBwrap, false}, {confinement.ModeLandlock, false}, {confinement.ModeNone, true}} {
		t.Run(c.mode, func(t *testing.T) {
			opts := sandboxed(t, runOptions(t, &scriptModel{responses: []*model.Response{{Content: "done"}}}), c.mode)
			opts.KeepWorkspaces = true
			res := run(t, tk, opts)
			if c.leaks {
				assert.Equal(t, res.Status, result.Failed, "the control: unconfined, the agent reads runner's environment")
				return
			}
			if b, err := os.ReadFile(filepath.Join(res.Workspace, "leak.txt")); err == nil {
				t.Logf("the agent found the key in:%s", b)
			}
			assert.Equal(t, res.Status, result.Passed, res.Reason)
		})
	}
}

// The attack on the endpoint's reader: the agent posts 100,000 nested arrays (and, in the
// second case, a 1 GiB body of spaces, streamed from /dev/zero through tr), then does the
// job right and exits 0. The endpoint refuses the request in the protocol (413 or 400),
// and the scenario fails for it rather than erroring or passing; the process stays small.
// Before the bounds the deep body was a plain 400 and the scenario passed.
func TestHostileRequestBodyFailsTheScenario(t *testing.T) {
	for name, send := range map[string]string{
		"deep":  `{ printf '{"messages":'; head -c 100000 /dev/zero | tr '\0' '['; }`,
		"1 GiB": `head -c 1073741824 /dev/zero | tr '\0' ' '`,
	} {
		t.Run(name, func(t *testing.T) {
			tk := agentTask(t, `prompt: go
timeout: 1m
agent:
  command: |
    `+send+` | curl -sS -o answer.json -w "%{http_code}" -H "Authorization: Bearer $OPENAI_API_KEY" -H "Content-Type: application/json" -X POST -T - $OPENAI_BASE_URL/chat/completions > status.txt
    echo hello > hello.txt
assert:
  - file_contains: {path: hello.txt, text: hello}
`)
			opts := runOptions(t, writes("x"))
			opts.KeepWorkspaces = true
			res := run(t, tk, opts)
			assert.Equal(t, res.Status, result.Failed, res.Reason)
			assert.Assert(t, is.Contains(res.Reason, "the agent sent a request runner's endpoint could not read"), res.Reason)
			status, err := os.ReadFile(filepath.Join(res.Workspace, "status.txt"))
			assert.NilError(t, err)
			answer, _ := os.ReadFile(filepath.Join(res.Workspace, "answer.json"))
			want := map[string]string{"deep": "400", "1 GiB": "413"}[name]
			assert.Check(t, is.Equal(string(status), want), string(answer))
			assert.Check(t, is.Contains(string(answer), `"error":{`), "the protocol's error")
			reqs := eventsOf(events(t, res), transcript.TypeRequest)
			assert.Assert(t, is.Len(reqs, 1))
			assert.Check(t, is.Contains(reqs[0]["refused"], "runner's endpoint"))
		})
	}
}

// --budget-usd is kept at every model call, in one place (the scenario's model wrapped by
// the run's budget.Budget), for runner's loop and an external agent alike: the first
// answer costs $1.40 of a $1 budget, so the second call is refused unsent; the scenario
// stops with stop reason budget (errored: nobody failed, the run was cut), the agent's
// refused request is answered in its protocol (400) and the agent stopped, and neither
// scenario asks the model a second time.
func TestBudgetIsKeptAtEveryModelCall(t *testing.T) {
	pricesFile := filepath.Join(t.TempDir(), "prices.yaml")
	assert.NilError(t, os.WriteFile(pricesFile, []byte("models:\n  scripted:priced: {input: 1.0, output: 2.0}\n"), 0o644))
	table, err := price.Load(pricesFile)
	assert.NilError(t, err)
	costly := func() *scriptModel {
		m := writes(`hello\n`)
		m.name = "scripted:priced"
		for i, r := range m.responses {
			c := *r
			c.Usage = model.Usage{PromptTokens: 1_000_000, CompletionTokens: 200_000} // $1.40
			m.responses[i] = &c
		}
		return m
	}
	for name, tk := range map[string]*task.Task{
		"loop":  agentTask(t, "prompt: Write hello to hello.txt.\ntools: [write_file]\n"),
		"agent": agentTask(t, helloTask),
	} {
		t.Run(name, func(t *testing.T) {
			m := costly()
			opts := runOptions(t, m)
			opts.Prices = table
			opts.Budget = budget.New(1.0, table)
			res := run(t, tk, opts)
			assert.Equal(t, res.Status, result.Errored, res.Reason)
			assert.Equal(t, res.Stop, result.StopBudget)
			assert.Check(t, is.Contains(res.Reason, "budget: the run has spent $1.4000 of its budget of $1.00"))
			assert.Equal(t, m.stepCount(), 1, "the refused call never reached the model")
			assert.Equal(t, res.Steps, 1)
			assert.Check(t, res.Cost != nil && res.Cost.USD != nil && *res.Cost.USD == 1.4, "%+v", res.Cost)
			assert.Check(t, opts.Budget.Refused() && !opts.Budget.Admit())
			evs := events(t, res)
			errs := eventsOf(evs, transcript.TypeModelErr)
			assert.Assert(t, is.Len(errs, 1))
			assert.Check(t, is.Contains(errs[0]["error"], "budget: the run has spent"))
			if name == "agent" {
				agents := eventsOf(evs, transcript.TypeAgent)
				last := agents[len(agents)-1]
				assert.Check(t, is.Contains(last["output"], "invalid_request_error"), "the agent got the refusal in its protocol: %v", last["output"])
				assert.Check(t, is.Contains(last["output"], "budget: the run has spent"))
			}
		})
	}
}
