package search

import (
	"bytes"
	"errors"
	"io"
	"slices"
)

// chunkSize is the read buffer of a grep worker. Files are searched a buffer of whole
// lines at a time, so that a large file neither grows the buffer to its own size (each
// growth is fresh memory to fault in and, across a search, garbage that makes the
// collector run) nor waits to be read in full before its first lines are searched.
// A variable so that tests can make files span many chunks.
var chunkSize = 128 << 10

// scan reads file name of directory dir through r and returns its first limit matching
// lines, rendered as "path:line: text". It reads the file into buf (reused when large enough), searches the
// complete lines read so far and moves the partial last line to the front before reading
// on; the buffer grows only for a line longer than itself. A matcher that needs the whole
// file at once (see matcher.whole) gets it. The errors are errBinary, errTooLarge (beyond
// o.limit bytes) and r's own; a file that ends in one yields no lines, as if it had been
// read in full before it was searched.
func (m *matcher) scan(r io.Reader, dir, name string, buf []byte, o readOpts, limit int) ([]string, []byte, error) {
	b := buf[:0]
	if cap(b) < 512 {
		b = make([]byte, 0, chunkSize)
	}
	var (
		out   []string
		ms    []lineMatch
		total int // bytes of the file read so far
		lines int // lines before b[0]
		found int // matching lines so far
		probe = o.textOnly
	)
	for {
		if len(b) == cap(b) {
			b = grow(b, r, o.limit, total)
		}
		want := cap(b) - len(b)
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		total += n
		eof := errors.Is(err, io.EOF) || (err == nil && (n == 0 || (o.shortEOF && n < want)))
		if probe && (total >= binaryProbe || eof) {
			// Nothing has been consumed yet, so b starts at the start of the file.
			probe = false
			if isBinary(b) {
				return nil, b, errBinary
			}
		}
		if total > o.limit {
			return nil, b, errTooLarge
		}
		if err != nil && !eof {
			return nil, b, err
		}
		end := m.searchable(b, probe, eof, found >= limit)
		if end > 0 && found < limit {
			ms = m.find(b[:end], limit-found, ms[:0])
			for _, x := range ms {
				x.line += lines
				out = append(out, formatMatch(dir, name, x))
			}
			found += len(ms)
			if !eof && found < limit {
				lines += bytes.Count(b[:end], newline)
			}
		}
		if eof {
			return out, b, nil
		}
		b = b[:copy(b, b[end:])]
	}
}

var newline = []byte{'\n'}

// grow makes room in the full buffer b: a line longer than the buffer, or a whole file.
// Past a first doubling, which suffices for most long lines, it makes room for the rest
// of the file at once when r can tell its size (up to limit, total bytes read so far),
// rather than leave a trail of doublings behind.
func grow(b []byte, r io.Reader, limit, total int) []byte {
	more := cap(b)
	if s, ok := r.(sizer); ok && cap(b) > chunkSize {
		if size, err := s.Size(); err == nil {
			more = max(more, int(min(size, int64(limit)+1))-total+1)
		}
	}
	return slices.Grow(b, more)
}

// searchable is how much of b can be searched now: its complete lines, all of it at the
// end of the file or once enough lines were found (only the file's size is still in
// question), none while the binary probe or a whole-file matcher waits for more.
func (m *matcher) searchable(b []byte, probe, eof, enough bool) int {
	switch {
	case probe:
		return 0 // too little of the file to tell text from binary yet
	case !eof && m.whole:
		return 0
	case enough, eof:
		return len(b)
	}
	return bytes.LastIndexByte(b, '\n') + 1
}

// sizer is a file that can tell its size.
type sizer interface{ Size() (int64, error) }
