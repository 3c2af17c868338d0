// Package bounded keeps input runner did not write (task files, datasets, imported tasks,
// cassettes, --vars and --prices files, the results and reports merge reads) from
// stopping a suite: every such file is read with a size cap, and its nesting depth and
// number of values are counted by a scanner that allocates nothing before a parser sees
// it. A parser given 60,000 nested `[` (117 KB) used 1.4 GB; here the file gets a
// positioned error in microseconds. The scanners understand each format well enough to
// find its nesting (strings, comments, YAML block scalars and indentation), and err on
// the side of counting: they never see less nesting than the parser would build.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Limits bound one kind of input.
type Limits struct {
	// What names the kind in messages ("a task file").
	What string
	// Bytes is the largest file; Depth the deepest nesting of collections (a YAML block
	// level, a flow collection, a JSON array or object, a TOML array or inline table);
	// Nodes the most values, keys, punctuation and comments (what a parser makes tokens of).
	Bytes int64
	Depth int
	Nodes int
}

// The limits of each input. Real files stay far below them: this repository's task files
// nest 8 levels and hold a few hundred values; a goccy/go-yaml parse costs about 1 KB of
// memory per value, so a file at the task file's limits parses in about 100 MB.
var (
	TaskFile = Limits{What: "a task file", Bytes: 4 << 20, Depth: 64, Nodes: 100_000}
	// Dataset is for .yaml and .json datasets, parsed like task files; .csv and .jsonl ones
	// are read a row at a time and need only the size cap (and, per JSON line, Depth).
	Dataset = Limits{What: "a dataset", Bytes: 64 << 20, Depth: 64, Nodes: 200_000}
	// Settings is a --vars or --prices file.
	Settings = Limits{What: "a settings file", Bytes: 1 << 20, Depth: 64, Nodes: 100_000}
	// Imported is a file of a task runner import reads (task.yaml, task.toml, a compose file).
	Imported = Limits{What: "an imported task's file", Bytes: 1 << 20, Depth: 64, Nodes: 100_000}
	// Record is a JSON record runner reads back: a result, a report, a cassette file, a
	// bench report. They are written by runner, but may come from anywhere (a download).
	Record = Limits{What: "a record", Bytes: 256 << 20, Depth: 128, Nodes: 20_000_000}
	// EndpointRequest is a model request an external agent sends to runner's endpoint
	// (runner/endpoint): a whole conversation, its tools' schemas (Claude Code's nest 12
	// levels), images as base64. The agent is untrusted, and a request is read while the
	// scenario runs, so it is bounded as a record is, at the endpoint's own size cap.
	EndpointRequest = Limits{What: "a request to runner's endpoint", Bytes: 64 << 20, Depth: 128, Nodes: 20_000_000}
	// AgentOutput is one line of an external agent's JSON output (Claude Code's
	// stream-json, Codex's events), read for how it ended (runner/agent/kinds).
	AgentOutput = Limits{What: "a line of the agent's output", Bytes: 4 << 20, Depth: 64, Nodes: 1_000_000}
)

// Error is input refused before it was parsed, with where and, for a YAML block
// mapping, under which key.
type Error struct {
	File         string
	Line, Column int // 0 when the whole file is refused (its size)
	Field        string
	Msg          string
	// Err is what kind of refusal it is, for errors.Is: ErrTooLarge, ErrNotRegular or nil
	// (too deep or too many values).
	Err error
}

// Unwrap returns the kind of refusal.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	pos := e.File
	if e.Line > 0 {
		pos += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	if e.Field != "" {
		return pos + ": " + e.Field + ": " + e.Msg
	}
	return pos + ": " + e.Msg
}

// Kinds of refusal (errors.Is): a file over its size cap; a device, FIFO or directory.
var (
	ErrTooLarge   = errors.New("file too large")
	ErrNotRegular = errors.New("not a regular file")
)

// ReadFile reads the regular file at path (a symbolic link to one is followed), refusing
// a larger file than lim allows before reading it, and again if it grows while read; a
// device, FIFO or directory is refused unread, so a link to /dev/zero cannot fill memory.
func ReadFile(path string, lim Limits) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	return ReadOpened(f, path, lim)
}

// ReadOpened is ReadFile of a file already open (through an os.Root, say), named path in
// messages; the caller closes it.
func ReadOpened(f *os.File, path string, lim Limits) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &Error{File: path, Msg: fmt.Sprintf("not a regular file (%s)", typeOf(info.Mode())), Err: ErrNotRegular}
	}
	if info.Size() > lim.Bytes {
		return nil, tooLarge(path, info.Size(), lim)
	}
	data, err := io.ReadAll(io.LimitReader(f, lim.Bytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > lim.Bytes {
		return nil, tooLarge(path, int64(len(data)), lim)
	}
	return data, nil
}

// CheckSize refuses data larger than lim allows, for input read some other way.
func CheckSize(path string, data []byte, lim Limits) error {
	if int64(len(data)) > lim.Bytes {
		return tooLarge(path, int64(len(data)), lim)
	}
	return nil
}

func tooLarge(path string, size int64, lim Limits) error {
	return &Error{File: path, Msg: fmt.Sprintf("%d bytes, more than the %s %s may have", size, mib(lim.Bytes), lim.What), Err: ErrTooLarge}
}

func mib(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// counter tracks a scan's position and tallies against the limits; the format scanners
// share it.
type counter struct {
	path      string
	lim       Limits
	data      []byte
	pos       int
	line      int // 1-based line of pos
	lineStart int // offset of that line's first byte
	nodes     int
	err       *Error
	// field names where the scan is, for a message; called only when one is made.
	field func() string
}

func newCounter(path string, data []byte, lim Limits) *counter {
	return &counter{path: path, lim: lim, data: data, line: 1}
}

// failAt records the first problem at byte offset at, on the current line.
func (c *counter) failAt(at int, format string, args ...any) {
	if c.err != nil {
		return
	}
	c.err = &Error{File: c.path, Line: c.line, Column: at - c.lineStart + 1, Msg: fmt.Sprintf(format, args...)}
	if c.field != nil {
		c.err.Field = c.field()
	}
}

// node counts one value (or token) at offset at.
func (c *counter) node(at int) {
	if c.nodes++; c.nodes > c.lim.Nodes {
		c.failAt(at, "more than %d values; %s may hold at most that many", c.lim.Nodes, c.lim.What)
	}
}

// depth checks a nesting of d at offset at.
func (c *counter) depth(d, at int) {
	if d > c.lim.Depth {
		c.failAt(at, "nested more than %d levels deep; %s may nest at most that deep", c.lim.Depth, c.lim.What)
	}
}

// newline records that the byte at c.pos is a line feed and moves past it.
func (c *counter) newline() {
	c.pos++
	c.line++
	c.lineStart = c.pos
}

func (c *counter) done() bool { return c.err != nil || c.pos >= len(c.data) }

func (c *counter) result() error {
	if c.err != nil {
		return c.err
	}
	return nil
}

// Values counts the values of a decoded document v (maps, slices and their elements),
// refusing more than lim.Nodes: a decoder shares an anchor's value among its aliases, so
// a few lines of aliases of aliases (the "billion laughs") decode cheaply and explode
// only when something walks them (a template, a JSON record).
func Values(path string, v any, lim Limits) error {
	n := 0
	var walk func(any) bool
	walk = func(v any) bool {
		if n++; n > lim.Nodes {
			return false
		}
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		}
		return true
	}
	if !walk(v) {
		return &Error{File: path, Msg: fmt.Sprintf("expands to more than %d values (aliases of aliases?); %s may hold at most that many", lim.Nodes, lim.What)}
	}
	return nil
}
