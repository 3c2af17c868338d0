package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/agent"
	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/endpoint"
	"github.com/agentrunner/runner/runner/endpoint/forward"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
	toolexec "github.com/agentrunner/runner/tools/exec"
	confinement "github.com/agentrunner/runner/tools/exec/sandbox"
)

// The variables every external agent gets (besides its row's Env).
const (
	EnvPrompt = "RUNNER_PROMPT"
	EnvModel  = "RUNNER_MODEL"
)

// forwardAddr is where the forwarder listens inside a sandbox with a network of its own:
// a fresh namespace, so the port is free.
const forwardAddr = "127.0.0.1:41471"

// refusedGrace is how long an agent may go on after its request past max_steps was
// refused (to write its last words) before it is stopped: without the model it cannot
// make progress.
const refusedGrace = 10 * time.Second

// stopGrace is how long a stopped agent has between its stdin closing and the kill.
const stopGrace = 2 * time.Second

// outputTail bounds what is kept of an agent's stdout (its row may read a JSON result at
// the end) and what of its output goes into the transcript.
const (
	outputKeep  = 4 << 20
	outputEvent = 16 << 10
)

// agentKind is the scenario's agent after --agent.
func (r *runState) agentKind() (kinds.Kind, error) {
	name := r.t.Agent.Kind
	if r.opts.Agent != "" {
		name = r.opts.Agent
	}
	k, err := kinds.Lookup(name)
	if err != nil {
		return k, fmt.Errorf("agent: %w", err)
	}
	if k.Name == kinds.NameCommand && r.t.Agent.Command == "" {
		return k, fmt.Errorf("agent: the command agent needs the task's agent: {command: ...}")
	}
	return k, nil
}

// runExternal is the agent stage of an external agent: it serves runner's endpoint, runs
// the agent's program in the workspace, sandbox and limits as a command, with the
// endpoint as its only way out, and waits until the program exits, the scenario's
// deadline or an interrupt ends it, or its request past max_steps was refused. The
// outcome is the endpoint's (steps, usage, calls), its stop how the program ended.
func (r *runState) runExternal(p *prepared, k kinds.Kind) acted {
	aw, program, err := r.agentView(p, k)
	if err != nil {
		return acted{err: err}
	}
	srv, err := endpoint.New(endpoint.Config{Model: p.model, Options: r.t.ModelOptions, MaxSteps: p.maxSteps, Record: r, Workdir: agentWorkdir(p), Now: r.now})
	if err != nil {
		return acted{err: err}
	}
	inv := kinds.Invocation{Prompt: r.t.Prompt, System: r.t.System, Model: p.model.Name(), ModelID: kinds.ModelID(p.model.Name()),
		Command: r.t.Agent.Command, Workdir: agentWorkdir(p), MaxSteps: p.maxSteps}
	// The arguments are built once the endpoint's address is known: Codex takes it only there.
	l, base, argv, cleanup, err := listen(p, aw, func(base string) []string {
		inv.BaseURL = base
		return append([]string{program}, k.Args(inv)...)
	})
	if err != nil {
		return acted{err: fmt.Errorf("agent %s: endpoint: %w", k.Name, err)}
	}
	defer cleanup()
	go func() { _ = srv.Serve(l) }()
	defer func() { _ = srv.Close() }()

	_ = r.record(0, transcript.Agent{Kind: k.Name, Argv: argv, Protocol: string(k.Protocol), Endpoint: base})
	proc, err := toolexec.Start(p.ctx, aw, p.ws.Dir(), argv, r.agentEnv(p, k, inv, base, srv.Token()))
	if err != nil {
		return acted{err: fmt.Errorf("agent %s: %w", k.Name, err)}
	}
	stdout, killed := r.waitProgram(p, k, proc, srv.Refused())
	code := proc.ExitCode()
	verdict := k.Judge(code, stdout.bytes())
	out := r.externalOutcome(p, srv.Outcome(), verdict)
	output := stdout.String() + proc.Stderr()
	if len(output) > outputEvent {
		output = output[len(output)-outputEvent:]
	}
	_ = r.record(out.Steps, transcript.Agent{Kind: k.Name, Exited: true, ExitCode: code, Finished: verdict.Finished,
		Reason: verdict.Reason, Killed: killed, Output: output})
	return acted{out: out}
}

// agentView is the workspace as the agent's program sees it (the program's own install
// and the files its command names, read-only) and the program, found on the view's PATH,
// then in $RUNNER_AGENTS_DIR.
func (r *runState) agentView(p *prepared, k kinds.Kind) (*tools.Workspace, string, error) {
	aw := p.ws.View()
	if p.box != nil { // in the container: its files are bound in at its start (agentBox)
		program, err := containerProgram(p.ctx, aw, k)
		if err != nil {
			return nil, "", fmt.Errorf("agent %s: %w", k.Name, err)
		}
		return aw, program, nil
	}
	pathEnv := ""
	for _, kv := range toolexec.WorkspaceEnv(aw, nil) {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			pathEnv = kv[5:]
		}
	}
	agentsDir := os.Getenv(kinds.AgentsDirEnv)
	program, err := k.Find(pathEnv, agentsDir)
	if err != nil {
		return nil, "", fmt.Errorf("agent %s: %w", k.Name, err)
	}
	if agentsDir != "" {
		aw.ReadOnly = append(aw.ReadOnly, agentsDir) // the npm install the program runs from
	}
	aw.ReadOnly = append(aw.ReadOnly, r.t.Agent.Files...) // what its command names beside the task file
	return aw, program, nil
}

// agentEnv is the program's environment: the prompt and model, runner's endpoint as
// both protocols' base URL with the per-run token as their keys, and the kind's own.
func (r *runState) agentEnv(p *prepared, k kinds.Kind, inv kinds.Invocation, base, token string) map[string]string {
	env := map[string]string{
		EnvPrompt: r.t.Prompt, EnvModel: inv.Model,
		"OPENAI_BASE_URL": base + "/v1", "ANTHROPIC_BASE_URL": base,
		"OPENAI_API_KEY": token, "ANTHROPIC_API_KEY": token,
	}
	if r.t.Agent.Dir != "" && k.Name == kinds.NameCommand {
		env["TASK_DIR"] = r.t.Agent.Dir // only the files above are there
		if p.box != nil {
			env["TASK_DIR"] = boxTaskDir
		}
	}
	if k.Env != nil {
		for name, v := range k.Env(inv) {
			env[name] = v
		}
	}
	return env
}

// waitProgram gives the program its prompt (on stdin, for a kind that reads it there),
// keeps the tail of its output and waits for it (waitAgent); it returns the output and
// whether the program had to be killed.
func (r *runState) waitProgram(p *prepared, k kinds.Kind, proc *toolexec.Process, refused <-chan struct{}) (*tail, bool) {
	go func() {
		if k.PromptOnStdin {
			_, _ = io.WriteString(proc.Stdin, r.t.Prompt) // an agent that never reads it gets EPIPE: its business
		}
		_ = proc.Stdin.Close()
	}()
	stdout := &tail{max: outputKeep}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(stdout, proc.Stdout)
	}()
	killed := waitAgent(p.ctx, proc, refused)
	select { // its output to the end, unless a process it left holds the pipe
	case <-copied:
	case <-time.After(500 * time.Millisecond):
	}
	proc.Stop(stopGrace)
	<-copied
	return stdout, killed
}

// agentWorkdir is the workspace's path as the agent's program sees it.
func agentWorkdir(p *prepared) string {
	if p.env != nil {
		return p.env.Workdir()
	}
	return p.ws.Dir()
}

// externalOutcome is the endpoint's outcome with its stop: how the program ended.
func (r *runState) externalOutcome(p *prepared, out agent.Outcome, verdict kinds.Verdict) agent.Outcome {
	switch {
	case out.Stop == result.StopError, out.Stop == result.StopBudget:
	case p.parent.Err() != nil:
		out.Stop = result.StopInterrupt
	case out.Stop == result.StopMaxSteps:
		out.Notes = append(out.Notes, fmt.Sprintf("the agent's request past max_steps (%d) was refused by runner's endpoint", p.maxSteps))
	case errors.Is(p.ctx.Err(), context.DeadlineExceeded):
		out.Stop = result.StopTimeout
	case verdict.Finished:
		out.Stop, out.Summary = result.StopCompleted, verdict.Summary
	default:
		out.Stop = result.StopGaveUp
		out.Notes = append(out.Notes, verdict.Reason)
	}
	return out
}

// listen opens the endpoint's listener where the agent can reach it, by the sandbox
// mode: bwrap without network gives the agent a network of its own, so the endpoint is a
// Unix socket bound into the sandbox read-only, and runner itself, re-executed in front
// of the program, carries 127.0.0.1:PORT there to it (package forward); Landlock and
// none share the host's network, so it is a loopback port, the only one a Landlock-
// confined agent may connect to (tools.Workspace.EndpointPort). It returns the base URL
// the agent uses and the argv to run, argvFor(that base URL).
func listen(p *prepared, aw *tools.Workspace, argvFor func(base string) []string) (net.Listener, string, []string, func(), error) {
	if p.box != nil { // the task's container: the same forwarder, bound in at its start
		base := "http://" + forwardAddr
		return p.box.l, base, forward.Argv(boxRunner, boxSocket, forwardAddr, argvFor(base)), func() {}, nil
	}
	if p.env != nil {
		return nil, "", nil, nil, errors.New("the task's container was started without the endpoint's forwarder")
	}
	if p.sandbox != nil && p.sandbox.Name() == confinement.ModeBwrap && !aw.Network {
		self, err := os.Executable()
		if err != nil {
			return nil, "", nil, nil, fmt.Errorf("find runner's executable for the forwarder: %w", err)
		}
		dir, err := os.MkdirTemp("", "runner-endpoint-")
		if err != nil {
			return nil, "", nil, nil, err
		}
		sock := filepath.Join(dir, "endpoint.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, "", nil, nil, err
		}
		aw.ReadOnly = append(aw.ReadOnly, dir, self)
		base := "http://" + forwardAddr
		return l, base, forward.Argv(self, sock, forwardAddr, argvFor(base)), func() {
			_ = l.Close() // a listener: Close loses no data
			_ = os.RemoveAll(dir)
		}, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, nil, err
	}
	aw.EndpointPort = l.Addr().(*net.TCPAddr).Port
	base := "http://" + l.Addr().String()
	return l, base, argvFor(base), func() { _ = l.Close() }, nil
}

// waitAgent waits until the program exits, ctx ends (it is killed then, with
// everything it started), or refused is closed and refusedGrace has passed. It reports
// whether runner ended the program.
func waitAgent(ctx context.Context, proc *toolexec.Process, refused <-chan struct{}) bool {
	select {
	case <-proc.Exited():
		return false
	case <-ctx.Done():
	case <-refused:
		select {
		case <-proc.Exited():
			return false
		case <-ctx.Done():
		case <-time.After(refusedGrace):
		}
	}
	return true
}

// tail keeps the last max bytes written to it (an agent's JSON result comes last).
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}

func (t *tail) String() string { return string(t.bytes()) }
