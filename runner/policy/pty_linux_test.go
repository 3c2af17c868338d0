package policy

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/task"
)

// openPTY opens a pseudo-terminal pair the posix_openpt way (/dev/ptmx, unlock, name
// from TIOCGPTN), so the test needs no pty module.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		_ = master.Close() // test cleanup: its error does not change what the test checked
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		_ = master.Close()
		t.Skipf("ptsname: %v", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		_ = master.Close()
		t.Skipf("open pts: %v", err)
	}
	t.Cleanup(func() {
		_ = slave.Close()
		_ = master.Close()
	})
	return master, slave
}

// screen collects what the terminal shows.
type screen struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until the screen shows text n times.
func (s *screen) waitFor(t *testing.T, text string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(s.String(), text) < n {
		if time.Now().After(deadline) {
			t.Fatalf("terminal never showed %q %d times; it shows:\n%s", text, n, s.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAskOnPseudoTerminal(t *testing.T) {
	master, slave := openPTY(t)
	assert.Assert(t, IsTerminal(slave), "the pty's slave side must count as a terminal")
	r, w, err := os.Pipe()
	assert.NilError(t, err)
	defer func() { _ = r.Close() }()
	defer func() { _ = w.Close() }()
	assert.Check(t, !IsTerminal(r), "a pipe is not a terminal")
	assert.Check(t, !IsTerminal(slave, r), "every file must be a terminal")

	scr := &screen{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			scr.mu.Lock()
			scr.buf.Write(buf[:n])
			scr.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()

	reg := testRegistry(t)
	ws := testWorkspace(t)
	p := newPolicy(t, task.Approval{Mode: task.ModeAsk, Rules: []task.Rule{{Tool: "read_file", Action: "allow"}}},
		Options{Asker: NewTerminalAsker(slave, slave), Resolve: reg.Canonical})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	const prompt = "Allow this call?"
	type step struct {
		tool, args string
		answer     string // typed at the prompt; "" means no prompt is expected
		allowed    bool
		source     string
	}
	steps := []step{
		{"write_file", `{"path":"existing.txt","content":"new"}`, "y", true, SourceUser},
		{"write_file", `{"path":"other.txt"}`, "n", false, SourceUser},
		{"create_file", `{"path":"a.txt"}`, "maybe\nalways", true, SourceUser},
		{"create_file", `{"path":"b.txt"}`, "", true, SourceUser},
		{"read_file", `{"path":"a.txt"}`, "", true, SourceRule},
		{"shell", `{"command":"go test ./..."}`, "yes", true, SourceUser},
	}
	prompts := 0
	for _, s := range steps {
		done := make(chan Decision, 1)
		go func() { done <- p.Decide(ctx, prepare(t, reg, s.tool, s.args), ws) }()
		if s.answer != "" {
			for _, line := range strings.Split(s.answer, "\n") {
				prompts++
				scr.waitFor(t, prompt, prompts)
				_, err := master.Write([]byte(line + "\n"))
				assert.NilError(t, err)
			}
		}
		select {
		case d := <-done:
			assert.Check(t, is.Equal(d.Allowed, s.allowed), "%s %s: %+v", s.tool, s.args, d)
			assert.Check(t, is.Equal(d.Source, s.source), "%s %s: %+v", s.tool, s.args, d)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %s: no decision; terminal shows:\n%s", s.tool, s.args, scr.String())
		}
	}
	time.Sleep(20 * time.Millisecond) // let the last output reach the screen
	out := scr.String()
	assert.Check(t, is.Equal(strings.Count(out, prompt), prompts), out)
	for _, want := range []string{
		"tool:   write_file", "risk:   safe_write; this call overwrites", "files:  existing.txt",
		`content: "new"`, "Please answer y, n or a.", "tool:   run_in_terminal (called as shell)",
		"risk:   dangerous", `command: "go test ./..."`,
	} {
		assert.Check(t, is.Contains(out, want))
	}
}

func TestTerminalAskerStopsWithContext(t *testing.T) {
	_, slave := openPTY(t)
	a := NewTerminalAsker(slave, slave)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	ans, err := a.Ask(ctx, Question{Tool: "write_file"})
	assert.Check(t, is.Equal(ans, AnswerNo))
	assert.Check(t, is.ErrorIs(err, context.DeadlineExceeded))
	assert.Check(t, time.Since(start) < 5*time.Second)
}
