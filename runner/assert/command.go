package assert

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentrunner/runner/runner/task"
	toolexec "github.com/agentrunner/runner/tools/exec"
)

const (
	// DefaultCommandTimeout applies when a command check gives no timeout.
	DefaultCommandTimeout = 60 * time.Second
	// outputKept is how much output a command check keeps: the first and last halves.
	outputKept = 64 << 10
	// tailShown is how much of the output's end a failure message repeats.
	tailShown = 1500
	// waitDelay bounds the wait for pipes a killed or exited command left open.
	waitDelay = 2 * time.Second
)

type command struct{ task.CommandCheck }

func newCommand(spec any) (Checker, error) {
	s, err := specAs[task.CommandCheck](spec)
	if err == nil {
		err = nonEmpty("run", s.Run)
	}
	if err == nil && s.Timeout < 0 {
		err = fmt.Errorf("timeout %s is negative", s.Timeout)
	}
	return command{s}, err
}

func (c command) Check(ctx context.Context, run *Run) (bool, string) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultCommandTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	ws, err := run.workspace()
	if err != nil {
		return false, fmt.Sprintf("cannot run `%s`: %v", c.Run, err)
	}
	stdout, all := newCapBuffer(outputKept), newCapBuffer(outputKept)
	cmd := exec.CommandContext(cctx, "sh", "-c", c.Run)
	cmd.Dir = ws.Dir()
	// The environment the agent's commands get: built from nothing, so the runner's
	// API keys never reach the agent's code.
	ws.Env, ws.Network, ws.Limits, ws.CacheDir = run.Env, run.Network, run.Limits, run.CacheDir
	cmd.Env = toolexec.WorkspaceEnv(ws, nil)
	cmd.Stdout = multiWriter{stdout, all}
	cmd.Stderr = all
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = waitDelay
	if run.Wrap != nil {
		if err := run.Wrap.Wrap(cmd, ws); err != nil {
			return false, fmt.Sprintf("cannot confine `%s` with %s: %v", c.Run, run.Wrap.Name(), err)
		}
		ensureGroup(cmd)
		if rel, ok := run.Wrap.(toolexec.Releaser); ok {
			// The sandbox's per-command resources (temp dir, cgroup), once the group is dead.
			defer rel.Release(cmd)
		}
	}
	// Kill the whole group: `go test` or a shell pipeline leaves children behind.
	cmd.Cancel = func() error { return killGroup(cmd) }
	err = cmd.Start()
	if err != nil {
		return false, fmt.Sprintf("cannot run `%s`: %v", c.Run, err)
	}
	// ErrWaitDelay: the shell exited but a background child held the pipes open; that
	// child is killed below and the shell's own exit code stands.
	if err = cmd.Wait(); errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	_ = killGroup(cmd) // background children that outlived the shell

	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return false, fmt.Sprintf("`%s` was interrupted: %v%s", c.Run, ctx.Err(), showTail(all))
	case cctx.Err() != nil:
		return false, fmt.Sprintf("`%s` timed out after %s and was killed%s", c.Run, timeout, showTail(all))
	case err != nil && !errors.As(err, &exitErr):
		return false, fmt.Sprintf("`%s` failed to run: %v%s", c.Run, err, showTail(all))
	}
	code := cmd.ProcessState.ExitCode()
	if code != c.ExitCode {
		how := fmt.Sprintf("exit code %d", code)
		if code < 0 {
			how = "a signal: " + cmd.ProcessState.String()
		}
		return false, fmt.Sprintf("`%s` ended with %s, want %d%s", c.Run, how, c.ExitCode, showTail(all))
	}
	if c.StdoutContains == "" {
		return true, fmt.Sprintf("`%s` exited %d", c.Run, code)
	}
	if !strings.Contains(stdout.String(), c.StdoutContains) {
		return false, fmt.Sprintf("`%s` exited %d but its stdout does not contain %s%s",
			c.Run, code, quote(c.StdoutContains), showTail(stdout))
	}
	return true, fmt.Sprintf("`%s` exited %d and its stdout contains %s", c.Run, code, quote(c.StdoutContains))
}

// ensureGroup keeps the command in a process group of its own after a sandbox rewrote
// it. Setsid already makes one, and Setpgid would then fail, so it is left alone.
func ensureGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
	}
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

func showTail(b *capBuffer) string {
	out := b.String()
	if strings.TrimSpace(out) == "" {
		return "; no output"
	}
	if len(out) > tailShown {
		out = "…" + strings.ToValidUTF8(out[len(out)-tailShown:], "")
	}
	return "; output tail:\n" + strings.TrimRight(out, "\n")
}

// capBuffer keeps the first and last halves of what is written to it, so a chatty
// command cannot exhaust memory while its start and end stay visible. It is safe for
// concurrent writes: stdout and stderr are copied by separate goroutines.
type capBuffer struct {
	mu      sync.Mutex
	half    int
	head    []byte
	tail    []byte
	dropped int
}

func newCapBuffer(limit int) *capBuffer { return &capBuffer{half: limit / 2} }

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.half - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - b.half; over > 0 {
		b.dropped += over
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

func (b *capBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return string(b.head) + string(b.tail)
	}
	return fmt.Sprintf("%s\n[… %d bytes omitted …]\n%s", b.head, b.dropped, b.tail)
}

// multiWriter is io.MultiWriter for writers that never fail.
type multiWriter []*capBuffer

func (m multiWriter) Write(p []byte) (int, error) {
	for _, w := range m {
		_, _ = w.Write(p)
	}
	return len(p), nil
}
