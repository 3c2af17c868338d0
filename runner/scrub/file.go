package scrub

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Output says how runner writes an output file that something reads back (result.json,
// changes.json, reports, bench.json, the viewer's pages): scrubbed, and atomically, through
// a temporary file in the same directory renamed over the name once it is whole. A reader
// (merge, resume, the viewer, a CI step) finds the old file or the whole new one, never
// half of one, whatever stops the writer: a kill, a full disk, a failed render.
type Output struct {
	// Perm is the file's mode (0: 0o644).
	Perm os.FileMode
	// Sync flushes the new file's data to the disk before it replaces the old one, as the
	// transcript's events are flushed: after a machine's crash the name holds the old file
	// or the whole new one, not an empty one.
	Sync bool
}

// WriteFile writes data, its secrets scrubbed as bytes (Bytes), to name.
func (o Output) WriteFile(name string, data []byte) error {
	return o.Replace(name, func(w io.Writer) error {
		_, err := w.Write(Bytes(data))
		return err
	})
}

// WriteJSON writes the JSON document data, scrubbed as JSON (every string as a decoder
// reads it), to name.
func (o Output) WriteJSON(name string, data []byte) error {
	return o.Replace(name, func(w io.Writer) error {
		_, err := w.Write(JSON(data))
		return err
	})
}

// Replace writes name with what write writes, through a Writer (a secret split across
// writes is still caught). When write fails, name is left as it was.
func (o Output) Replace(name string, write func(io.Writer) error) (err error) {
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()           // the error returned is the first one
			_ = os.Remove(tmp.Name()) // best effort: a leftover temporary file is never read
		}
	}()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	sw := NewWriter(bw)
	if err = write(sw); err != nil {
		return err
	}
	if err = sw.Flush(); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if o.Sync {
		if err = tmp.Sync(); err != nil {
			return fmt.Errorf("flush %s: %w", name, err)
		}
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// WriteFile writes data to name as Output.WriteFile does (scrubbed, atomically), with the
// mode perm.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	return Output{Perm: perm}.WriteFile(name, data)
}

// WriteJSON writes the JSON document data to name as Output.WriteJSON does (scrubbed as
// JSON, atomically), with the mode perm.
func WriteJSON(name string, data []byte, perm os.FileMode) error {
	return Output{Perm: perm}.WriteJSON(name, data)
}
