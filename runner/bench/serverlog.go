package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/agentrunner/runner/runner/model/ollama"
)

// serverLog reads an Ollama server's log (--ollama-log) as the bench goes: the machine
// from the whole file, and each model's loads and parallel slots from the lines added
// during its turn. A nil *serverLog (no log given) knows nothing.
type serverLog struct {
	path string
	warn func(string)
	// start is the whole log as the bench found it.
	start ollama.ServerLog
}

func openServerLog(path string, warn func(string)) *serverLog {
	if path == "" {
		return nil
	}
	l := &serverLog{path: path, warn: warn}
	facts, err := l.read(0)
	if err != nil {
		warn(fmt.Sprintf("--ollama-log: %v: the machine, slots and logged loads are not recorded", err))
		return nil
	}
	l.start = facts
	return l
}

func (l *serverLog) ok() bool { return l != nil }

// machine is the server's devices, as its log listed them at its start.
func (l *serverLog) machine() *Machine {
	if l == nil || len(l.start.GPUs) == 0 {
		return nil
	}
	return &Machine{GPUs: l.start.GPUs, Source: "server log"}
}

// mark is the log's current end.
func (l *serverLog) mark() int64 {
	if l == nil {
		return 0
	}
	fi, err := os.Stat(l.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// since reads what the log says from mark on.
func (l *serverLog) since(mark int64) ollama.ServerLog {
	if l == nil {
		return ollama.ServerLog{}
	}
	facts, err := l.read(mark)
	if err != nil {
		l.warn(fmt.Sprintf("--ollama-log: %v", err))
	}
	return facts
}

// slots is the parallel setting of the model's load since mark, or else of the last load
// the log shows (the server's OLLAMA_NUM_PARALLEL; a model already loaded logged none);
// 0 when unknown.
func (l *serverLog) slots(mark int64) int {
	if l == nil {
		return 0
	}
	if n := l.since(mark).Parallel; n > 0 {
		return n
	}
	return l.since(0).Parallel
}

func (l *serverLog) read(from int64) (ollama.ServerLog, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return ollama.ServerLog{}, err
	}
	defer func() { _ = f.Close() }() // read only
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return ollama.ServerLog{}, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return ollama.ServerLog{}, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1] // a line still being written is read next time
	}
	return ollama.ReadServerLog(bytes.NewReader(b))
}
