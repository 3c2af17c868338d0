// Package transcript writes and reads a scenario's transcript.jsonl: one JSON event per
// line. Every event is handed to the kernel as soon as it happens, so a crash or kill -9
// of the runner loses nothing; fsync, which only matters if the machine itself goes
// down, runs at step boundaries (see Writer.Write) to keep it off the per-event path.
package transcript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/scrub"
)

// Event types, in the order a scenario produces them.
const (
	TypeStart        = "start"         // resolved config: task, model, limits, sandbox
	TypeSetup        = "setup"         // a workspace setup command
	TypeRequest      = "request"       // a model request (step, message count)
	TypeResponse     = "response"      // a model response (text, tool calls, usage, timing)
	TypeModelErr     = "model_error"   // a failed model request
	TypeRetry        = "retry"         // a failed model request that will be retried
	TypeDecision     = "decision"      // a policy decision about a tool call
	TypeToolCall     = "tool_call"     // a tool call with arguments, result and duration
	TypeReminder     = "reminder"      // the loop reminded the model to call a tool
	TypeAssertion    = "assertion"     // an assertion outcome
	TypeFilesChanged = "files_changed" // what the agent created, changed or deleted
	TypeMCP          = "mcp"           // an MCP server started or stopped
	TypeJudge        = "judge"         // a judge assertion's prompt and verdict
	TypeEnvironment  = "environment"   // a task's container, started
	TypeAgent        = "agent"         // an external agent program started or ended
	TypeEnd          = "end"           // the scenario's final status
)

// Event is one line of a transcript. Data holds the type-specific payload.
type Event struct {
	Type string          `json:"type"`
	Time time.Time       `json:"time"`
	Step int             `json:"step,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Writer appends events to a transcript file. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	buf  *bufio.Writer
	now  func() time.Time
	sync bool
	err  error
	// kick asks the background syncer for one more fdatasync (nil: no syncer running);
	// stopped is closed when it has exited. syncErr, under smu, is its first failure.
	kick    chan struct{}
	stopped chan struct{}
	smu     sync.Mutex
	syncErr error
}

// Options tune a Writer.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NoSync skips fsync after each event (benchmarks only: it gives up crash safety).
	NoSync bool
}

// Create creates (truncating) the transcript file at path.
func Create(path string, opts Options) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Writer{f: f, buf: bufio.NewWriterSize(f, 16<<10), now: now, sync: !opts.NoSync}, nil
}

// Write appends one event, of data's type (data.Type()) with data marshalled to JSON,
// and writes it to the file at once. Events that start a step (request), and the first and last events, are
// also synced to disk, so every finished step is durable even across a power loss: the
// fsync of each event cost more than the rest of a step (804 fsyncs for 200 steps).
// The sync of a request (and of the first event and a model error) runs in a background
// goroutine, so it stays off the step's critical path: it starts after the event is
// written, and requests that come while one runs are covered by the next, started as
// soon as it ends. The last event waits for those and is synced before Write returns.
// After the first failure every later Write returns that error (a failed background
// sync is reported by the next Write, or by Close).
func (w *Writer) Write(step int, data Payload) error {
	typ := data.Type()
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("transcript %s event: %w", typ, err)
	}
	// Secrets go before the cap: a cut must not leave the first half of one. Every string
	// is scrubbed as a reader decodes it (scrub.JSON): a Go-quoted secret in a message
	// is escaped once more by JSON, a form the byte scrub alone does not know.
	raw, err := capStrings(scrub.JSON(b))
	if err != nil {
		return fmt.Errorf("transcript %s event: %w", typ, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reapSync()
	if w.err != nil {
		return w.err
	}
	line, err := json.Marshal(Event{Type: typ, Time: w.now().UTC(), Step: step, Data: raw})
	if err != nil {
		return fmt.Errorf("transcript %s event: %w", typ, err)
	}
	line = append(line, '\n')
	if _, err := w.buf.Write(line); err != nil {
		w.err = fmt.Errorf("write transcript: %w", err)
		return w.err
	}
	if err := w.buf.Flush(); err != nil {
		w.err = fmt.Errorf("flush transcript: %w", err)
		return w.err
	}
	if w.sync && syncPoint(typ) {
		if typ != TypeEnd {
			w.syncLater()
			return nil
		}
		w.stopSyncer()
		if w.err != nil {
			return w.err
		}
		if err := fdatasync(w.f); err != nil {
			w.err = fmt.Errorf("sync transcript: %w", err)
			return w.err
		}
	}
	return nil
}

// syncLater has the background syncer run an fdatasync that starts after this call,
// starting the syncer on first use. The caller holds w.mu.
func (w *Writer) syncLater() {
	if w.kick == nil {
		w.kick, w.stopped = make(chan struct{}, 1), make(chan struct{})
		go w.syncer(w.kick, w.stopped)
	}
	select {
	case w.kick <- struct{}{}:
	default: // a sync not yet started is pending: it will cover this event too
	}
}

func (w *Writer) syncer(kick <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	for range kick {
		if err := fdatasync(w.f); err != nil {
			w.smu.Lock()
			if w.syncErr == nil {
				w.syncErr = err
			}
			w.smu.Unlock()
		}
	}
}

// stopSyncer waits for the pending background syncs and ends the syncer, so the file
// outlives every sync that uses its descriptor. The caller holds w.mu.
func (w *Writer) stopSyncer() {
	if w.kick == nil {
		return
	}
	close(w.kick)
	<-w.stopped
	w.kick, w.stopped = nil, nil
	w.reapSync()
}

// reapSync turns a failed background sync into the writer's error. The caller holds w.mu.
func (w *Writer) reapSync() {
	w.smu.Lock()
	err := w.syncErr
	w.syncErr = nil
	w.smu.Unlock()
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("sync transcript: %w", err)
	}
}

// Path returns the transcript file's path.
func (w *Writer) Path() string { return w.f.Name() }

// Close flushes and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	hadErr := w.err != nil
	w.stopSyncer()
	ferr := w.buf.Flush()
	cerr := w.f.Close()
	if ferr != nil {
		return fmt.Errorf("close transcript: %w", ferr)
	}
	if cerr != nil {
		return fmt.Errorf("close transcript: %w", cerr)
	}
	if !hadErr && w.err != nil {
		return fmt.Errorf("close transcript: %w", w.err) // a background sync failed
	}
	return nil
}

// Read parses a transcript. A torn last line (the process died mid-write) is ignored, so
// every finished event is still returned.
func Read(r io.Reader) ([]Event, error) {
	var events []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var pendingErr error
	line := 0
	for sc.Scan() {
		line++
		if pendingErr != nil {
			return events, pendingErr // a bad line that was not the last one
		}
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(b, &ev); err != nil {
			pendingErr = fmt.Errorf("transcript line %d: %w", line, err)
			continue
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		return events, fmt.Errorf("read transcript: %w", err)
	}
	return events, nil
}

// ReadFile parses the transcript at path.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	return Read(f)
}

// syncPoint reports whether an event of type typ marks a step boundary worth an fsync.
func syncPoint(typ string) bool {
	switch typ {
	case TypeStart, TypeRequest, TypeModelErr, TypeEnd:
		return true
	}
	return false
}
