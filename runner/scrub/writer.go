package scrub

import (
	"io"
	"sync"
)

// Writer scrubs everything written through it before it reaches the wrapped writer. A
// secret split across two writes is still caught: the tail of a write that could be the
// start of a secret is held back until the next write, Flush or Close.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	set     *Set
	pending []byte
}

// NewWriter wraps w with the process's secrets.
func NewWriter(w io.Writer) *Writer { return process.NewWriter(w) }

// NewWriter wraps w with s's secrets. A *Writer is not wrapped twice.
func (s *Set) NewWriter(w io.Writer) *Writer {
	if sw, ok := w.(*Writer); ok && sw.set == s {
		return sw
	}
	return &Writer{w: w, set: s}
}

// Write scrubs p and writes what is safe to write; it always consumes all of p unless
// the wrapped writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	m := w.set.m.Load()
	w.mu.Lock()
	defer w.mu.Unlock()
	if m == nil && len(w.pending) == 0 {
		return w.w.Write(p) // nothing secret is known: the cost is this check
	}
	data := p
	if len(w.pending) > 0 {
		data = append(w.pending, p...)
		w.pending = nil
	}
	if m != nil {
		if m.contains(data) {
			data = []byte(m.r.Replace(string(data)))
		}
		if cut := m.heldBack(data); cut < len(data) {
			w.pending = append([]byte(nil), data[cut:]...)
			data = data[:cut]
		}
	}
	if len(data) > 0 {
		if _, err := w.w.Write(data); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what Write held back.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	data := w.pending
	w.pending = nil
	_, err := w.w.Write(data)
	return err
}

// Close flushes, and closes the wrapped writer if it is an io.Closer.
func (w *Writer) Close() error {
	err := w.Flush()
	if c, ok := w.w.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Fd returns the wrapped file's descriptor (^0 when it is not a file), so terminal
// detection sees through the wrapper.
func (w *Writer) Fd() uintptr {
	if f, ok := w.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Unwrap returns the wrapped writer.
func (w *Writer) Unwrap() io.Writer { return w.w }
