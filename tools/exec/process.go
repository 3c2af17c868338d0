package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentrunner/runner/tools"
)

// Process is a long-running program started by Start (an MCP server), confined like a
// command: its own session and process group, the workspace's sandbox, limits and
// environment. Its stdin and stdout are pipes for a protocol; stderr is kept, capped, for
// error messages. Stop ends it and everything it started.
type Process struct {
	// Stdin and Stdout are the program's standard input and output.
	Stdin  *os.File
	Stdout *os.File

	cmd    *osexec.Cmd
	ws     *tools.Workspace
	pgid   int
	stderr *capture
	errMu  sync.Mutex
	exited chan struct{} // closed when the leader has exited (unreaped)
	done   chan struct{} // closed when the group is killed, reaped and released
	stop   func() bool
	once   sync.Once
}

// stderrLimit caps what is kept of a process's stderr: enough for a start-up error.
const stderrLimit = 64 << 10

// Start runs argv (argv[0] found on the command's PATH unless it holds a slash) in dir,
// which must be ws's root or inside it, with ws's environment plus env. The process is
// killed, with its whole group, when ctx ends or Stop is called.
func Start(ctx context.Context, ws *tools.Workspace, dir string, argv []string, env map[string]string) (*Process, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("start: no program")
	}
	cmdEnv, mark := marked(ws, WorkspaceEnv(ws, env))
	path, err := lookPath(argv[0], cmdEnv)
	if r, ok := ws.Sandbox.(Remote); ok && r.Remote() {
		path, err = argv[0], nil // found on the container's PATH, not the host's
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &Process{ws: ws, stderr: newCapture(stderrLimit), exited: make(chan struct{}), done: make(chan struct{})}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW)
		return nil, fmt.Errorf("start: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW, outR, outW)
		return nil, fmt.Errorf("start: %w", err)
	}
	p.cmd = &osexec.Cmd{
		Path: path, Args: argv, Dir: dir, Env: cmdEnv,
		Stdin: inR, Stdout: outW, Stderr: errW,
		SysProcAttr: newSession(),
	}
	if ws.Sandbox != nil {
		if err := ws.Sandbox.Wrap(p.cmd, ws); err != nil {
			closeFiles(inR, inW, outR, outW, errR, errW)
			return nil, fmt.Errorf("sandbox %s: %w", ws.Sandbox.Name(), err)
		}
	}
	// Tracked as a command is: what the server starts and leaves (a double fork, setsid)
	// comes back to the runner, which kills it once the server has ended.
	err = startTracked(func() error { return startCommand(ws, p.cmd) }, func() int { return p.cmd.Process.Pid }, mark)
	closeFiles(inR, outW, errW) // the child has its own copies
	if err != nil {
		closeFiles(inW, outR, errR)
		release(ws, p.cmd)
		return nil, fmt.Errorf("start %s: %w", filepath.Base(path), err)
	}
	p.Stdin, p.Stdout, p.pgid = inW, outR, p.cmd.Process.Pid
	p.stop = context.AfterFunc(ctx, p.kill)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 4096)
		for {
			n, err := errR.Read(buf)
			p.errMu.Lock()
			_, _ = p.stderr.Write(buf[:n])
			p.errMu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		awaitLeader(p.cmd, p.pgid) // reaps it where the platform cannot wait without reaping
		close(p.exited)
		p.kill() // nothing outlives the leader
		p.stop() // and no late kill once the group's id may be reused
		_ = p.cmd.Wait()
		release(ws, p.cmd)
		sweepOrphans(ws, p.pgid)
		_ = errR.SetReadDeadline(time.Now().Add(drainGrace))
		<-drained
		_ = errR.Close() // the reads are done: Close loses no data
		close(p.done)
	}()
	return p, nil
}

// kill ends the process group.
func (p *Process) kill() { killGroup(p.pgid) }

// Exited is closed when the program has exited (or been killed).
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stderr returns what the program wrote to stderr so far (capped, head and tail kept).
func (p *Process) Stderr() string {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.stderr.String()
}

// ExitCode is the program's exit status once it has ended, -1 before.
func (p *Process) ExitCode() int {
	select {
	case <-p.done:
		code, _ := exitStatus(p.cmd.ProcessState)
		return code
	default:
		return -1
	}
}

// Stop closes the program's stdin, gives it grace to exit by itself, then kills its
// process group (and, under bwrap, its whole PID namespace) and waits until it is reaped,
// its sandbox released and whatever it started that left the group killed (see reaper). It is safe to call more than once.
func (p *Process) Stop(grace time.Duration) {
	p.once.Do(func() {
		p.stop()
		_ = p.Stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(grace):
		}
		p.kill()
		<-p.done
		_ = p.Stdout.Close()
	})
}

// closeFiles closes files, skipping nil ones (pipe ends: Close loses no data).
func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}
