package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentrunner/runner/tools"
)

// Releaser is implemented by a tools.CommandWrapper that holds resources for a command it
// wrapped (a private temp directory, a cgroup). Release is called after the command has
// exited and its process group has been killed, whatever the outcome.
type Releaser interface {
	Release(cmd *osexec.Cmd)
}

// Starter is implemented by a tools.CommandWrapper that starts the commands it wrapped
// itself, in place of cmd.Start (bwrap forks its launcher from inside the command's
// cgroups).
type Starter interface {
	Start(cmd *osexec.Cmd) error
}

// Remote is implemented by a tools.CommandWrapper whose commands run in another
// filesystem (a container): programs are then found by name on its PATH, not the host's.
type Remote interface {
	Remote() bool
}

// Contained is implemented by a tools.CommandWrapper whose commands' descendants can never
// outlive them nor reach the runner (bwrap's PID namespace): their commands skip the
// search for orphans, a fraction of a millisecond per command.
type Contained interface {
	ContainsDescendants() bool
}

// drainGrace bounds how long the output pipe is read after the process group is gone: a
// process that left the group (setsid) may hold the pipe open forever.
const drainGrace = 250 * time.Millisecond

// spec is one command to run.
type spec struct {
	path    string   // absolute path of the program
	args    []string // argv, args[0] included
	dir     string   // absolute working directory inside the workspace
	env     []string
	timeout time.Duration
	extra   []*os.File // inherited as fd 3, 4, ...
	// stdin, when set, is the command's standard input (a file, so no goroutine copies
	// into a pipe that a stray process could hold open); nil means /dev/null.
	stdin *os.File
	// splitStdout also captures stdout on its own pipe (stdout and stderr then interleave
	// in output by arrival across two pipes, no longer byte for byte).
	splitStdout bool
}

// outcome is what happened to a command that started.
type outcome struct {
	output   string
	total    int64  // bytes of output produced
	dropped  int64  // bytes left out of output
	stdout   string // stdout alone, capped, when spec.splitStdout
	exitCode int    // 128+signal when killed by a signal
	signal   syscall.Signal
	timedOut bool
	canceled bool
	duration time.Duration
	sandbox  string
	// stuck is what the command was doing when its timeout killed it.
	stuck Stuck
}

// run starts s in its own session and process group, stdout and stderr sharing one pipe so
// that their lines interleave as produced, and waits for it. On timeout or cancellation the
// whole group is killed; once the leader has exited the group is killed as well, so that no
// background job outlives the call or keeps the pipe open. It returns an error only when
// the command could not start.
//
// One goroutine reads the pipe; the leader is waited for on the calling goroutine.
func run(ctx context.Context, ws *tools.Workspace, s spec) (outcome, error) {
	p, err := openPipes(s.splitStdout)
	if err != nil {
		return outcome{}, err
	}
	env, mark := marked(ws, s.env)
	cmd := newCommand(s, env, p)
	out := outcome{sandbox: "none"}
	if ws.Sandbox != nil {
		out.sandbox = ws.Sandbox.Name()
		if err := ws.Sandbox.Wrap(cmd, ws); err != nil {
			closeFiles(p.r, p.w, p.sr, p.sw)
			return outcome{}, fmt.Errorf("sandbox %s: %w", ws.Sandbox.Name(), err)
		}
	}
	growPipe(p.w)
	start := time.Now()
	err = startTracked(func() error { return startCommand(ws, cmd) }, func() int { return cmd.Process.Pid }, mark)
	closeFiles(p.w, p.sw) // the child holds its own copies; EOF comes when every holder is gone
	if err != nil {
		closeFiles(p.r, p.sr)
		release(ws, cmd)
		return outcome{}, fmt.Errorf("start %s: %w", filepath.Base(s.path), err)
	}
	pgid := cmd.Process.Pid

	tctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	kill := killWhenDone(ctx, tctx, pgid)
	rd := readPipes(p)

	// Wait for the leader, without reaping it where the platform can (see awaitLeader),
	// then kill what is left of its group.
	awaitLeader(cmd, pgid)
	kill.stop()
	killGroup(pgid)
	_ = cmd.Wait() // a non-zero exit is an *ExitError; ProcessState describes it
	out.duration = time.Since(start)
	release(ws, cmd)
	sweepOrphans(ws, pgid)
	rd.finish(p, &out)

	out.timedOut = errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	if out.timedOut {
		out.stuck = kill.stuck()
	}
	out.canceled = ctx.Err() != nil
	out.exitCode, out.signal = exitStatus(cmd.ProcessState)
	return out, nil
}

// pipes are a command's output pipes: the one stdout and stderr share, and stdout's own
// when it is split (sr and sw nil otherwise).
type pipes struct {
	r, w   *os.File
	sr, sw *os.File
}

func openPipes(splitStdout bool) (pipes, error) {
	var p pipes
	var err error
	if p.r, p.w, err = os.Pipe(); err != nil {
		return pipes{}, fmt.Errorf("create output pipe: %w", err)
	}
	if splitStdout {
		if p.sr, p.sw, err = os.Pipe(); err != nil {
			closeFiles(p.r, p.w) // the error above is the one returned
			return pipes{}, fmt.Errorf("create stdout pipe: %w", err)
		}
	}
	return p, nil
}

// newCommand is s as a command writing to p, not yet wrapped by a sandbox.
func newCommand(s spec, env []string, p pipes) *osexec.Cmd {
	cmd := &osexec.Cmd{
		Path:       s.path,
		Args:       s.args,
		Dir:        s.dir,
		Env:        env,
		Stdout:     p.w,
		Stderr:     p.w,
		ExtraFiles: s.extra,
		Stdin:      stdinOf(s),
		// A new session: a process group to kill as one, and no controlling terminal, so a
		// command can neither read the user's terminal nor inject input into it.
		SysProcAttr: newSession(),
	}
	if p.sw != nil {
		cmd.Stdout = p.sw
	}
	return cmd
}

// pipeReaders capture a started command's output: one goroutine per pipe.
type pipeReaders struct {
	all, stdout         *capture // stdout nil unless split
	drained, stdoutDone chan struct{}
}

func readPipes(p pipes) pipeReaders {
	rd := pipeReaders{all: newCapture(OutputLimit), drained: make(chan struct{})}
	var all io.Writer = rd.all
	if p.sr != nil {
		// Two readers feed the combined output: it needs a lock.
		locked := &lockedWriter{w: rd.all}
		all, rd.stdout, rd.stdoutDone = locked, newCapture(OutputLimit), make(chan struct{})
		go drain(p.sr, io.MultiWriter(rd.stdout, locked), rd.stdoutDone)
	}
	go drain(p.r, all, rd.drained)
	return rd
}

// finish reads what is left in the pipes, for at most drainGrace once the command's
// group is gone, closes them and puts the output in out.
func (rd pipeReaders) finish(p pipes, out *outcome) {
	_ = p.r.SetReadDeadline(time.Now().Add(drainGrace))
	<-rd.drained
	_ = p.r.Close() // the reads are done: Close loses no data
	if p.sr != nil {
		_ = p.sr.SetReadDeadline(time.Now().Add(drainGrace))
		<-rd.stdoutDone
		_ = p.sr.Close()
		out.stdout = rd.stdout.String()
	}
	out.output, out.total, out.dropped = rd.all.String(), rd.all.Total(), rd.all.Dropped()
}

// groupKill kills a command's process group when its context (tctx, under ctx) ends.
type groupKill struct {
	stop func() bool
	mu   sync.Mutex
	at   Stuck
}

// killWhenDone arms the kill; AfterFunc costs no goroutine until the context ends. When
// the timeout ends it (not ctx), what the processes were doing is read just before they
// are killed, for the message.
func killWhenDone(ctx, tctx context.Context, pgid int) *groupKill {
	k := &groupKill{}
	k.stop = context.AfterFunc(tctx, func() {
		if ctx.Err() == nil {
			st := stuck(pgid)
			k.mu.Lock()
			k.at = st
			k.mu.Unlock()
		}
		killGroup(pgid)
	})
	return k
}

// stuck is what the processes were doing when the timeout killed them (see Stuck).
func (k *groupKill) stuck() Stuck {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.at
}

// stdinOf keeps a nil *os.File from becoming a non-nil io.Reader.
func stdinOf(s spec) io.Reader {
	if s.stdin == nil {
		return nil
	}
	return s.stdin
}

// drain copies a pipe into w until EOF or the read deadline, then closes done.
func drain(r *os.File, w io.Writer, done chan<- struct{}) {
	defer close(done)
	chunk := chunks.Get().(*[]byte)
	defer chunks.Put(chunk)
	_, _ = io.CopyBuffer(w, onlyReader{r}, *chunk)
}

// lockedWriter serialises writes from several pipe readers into one capture.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// chunks are the read buffers of output pipes, reused across commands: a fresh 64 KiB
// buffer per command was most of a short command's allocations.
var chunks = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// onlyReader hides *os.File's WriterTo/ReaderFrom so io.CopyBuffer uses the given buffer.
type onlyReader struct{ io.Reader }

// marked returns env with a new command mark, and the mark (see reaper), for a command
// whose orphans may come back to the runner: not one whose sandbox contains its
// descendants, nor one in a container.
func marked(ws *tools.Workspace, env []string) ([]string, string) {
	if c, ok := ws.Sandbox.(Contained); ok && c.ContainsDescendants() {
		return env, ""
	}
	if r, ok := ws.Sandbox.(Remote); ok && r.Remote() {
		return env, ""
	}
	mark := newMark()
	if mark == "" {
		return env, ""
	}
	return append(slices.Clip(env), markVar+"="+mark), mark
}

// sweepOrphans ends the tracking of a leader that has been reaped: the orphans that left
// its group (setsid, double fork) and came back to the runner are killed, unless the
// sandbox keeps every descendant in (bwrap's PID namespace).
func sweepOrphans(ws *tools.Workspace, leader int) {
	if c, ok := ws.Sandbox.(Contained); ok && c.ContainsDescendants() {
		forget(leader)
		return
	}
	finished(leader)
}

// startCommand starts cmd, through the workspace's sandbox if it is a Starter.
func startCommand(ws *tools.Workspace, cmd *osexec.Cmd) error {
	if s, ok := ws.Sandbox.(Starter); ok {
		return s.Start(cmd)
	}
	return cmd.Start()
}

func release(ws *tools.Workspace, cmd *osexec.Cmd) {
	if rel, ok := ws.Sandbox.(Releaser); ok {
		rel.Release(cmd)
	}
}

// exitStatus returns the exit code, or 128+signal (as a shell reports it) and the signal.
func exitStatus(st *os.ProcessState) (int, syscall.Signal) {
	if st == nil {
		return -1, 0
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal()
	}
	return st.ExitCode(), 0
}

// lookPath finds an executable the way a shell with the command's PATH would. exec.LookPath
// would use the runner's PATH, but a task may set its own (a virtualenv, a toolchain).
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(lookupEnv(env, "PATH")) {
		if !filepath.IsAbs(dir) {
			continue // a relative PATH entry would resolve against the workspace
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, osexec.ErrNotFound)
}
