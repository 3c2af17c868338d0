package search

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// withChunkSize runs the rest of a test with a smaller read buffer.
func withChunkSize(t *testing.T, n int) {
	t.Helper()
	old := chunkSize
	chunkSize = n
	t.Cleanup(func() { chunkSize = old })
}

// wholeFind is the reference for scan: the file in one buffer, searched at once.
func wholeFind(m *matcher, rel string, data []byte, limit int) []string {
	var out []string
	for _, x := range m.find(data, limit, nil) {
		out = append(out, formatMatch(".", rel, x))
	}
	return out
}

// TestScanChunksAgainstWholeFile compares reading in small chunks, through readers that
// return full, short and one-byte reads, with searching the file in one piece.
func TestScanChunksAgainstWholeFile(t *testing.T) {
	withChunkSize(t, 512)
	r := rand.New(rand.NewPCG(3, 4))
	patterns := []struct {
		pat          string
		regex, cased bool
	}{
		{"ab", false, false}, {"aB c", false, true}, {"needle", false, false},
		{`^a`, true, false}, {`b$`, true, true}, {`x*`, true, false}, {`^$`, true, false},
		{`\Aab`, true, false}, {`c\z`, true, false}, {`(?-m)^a`, true, false}, {`a\s+b`, true, true},
		{`\A[ab]`, true, false}, {`[bc]\z`, true, false}, {`(?-m)^[ab]`, true, true}, {`(?-m)x*$`, true, false},
		{`(?s)a.b`, true, false}, {`\bab`, true, false}, {`[ab]{3}`, true, true},
	}
	for round := range 200 {
		// Lines of varied length, some longer than the buffer; CRLF in some files.
		var sb strings.Builder
		nl := "\n"
		if round%5 == 0 {
			nl = "\r\n"
		}
		for range r.IntN(60) {
			n := r.IntN(40)
			if r.IntN(20) == 0 {
				n = 300 + r.IntN(1500)
			}
			sb.WriteString(randText(r, "abcAB x-", n))
			sb.WriteString(nl)
		}
		if r.IntN(2) == 0 {
			sb.WriteString("ab c needle") // no final newline
		}
		data := []byte(sb.String())
		p := patterns[round%len(patterns)]
		m, err := newMatcher(p.pat, p.regex, p.cased)
		assert.NilError(t, err)
		limit := 1 + r.IntN(40)
		want := wholeFind(m, "f", data, limit)
		readers := map[string]func() (ioReader, bool){
			"full":  func() (ioReader, bool) { return bytes.NewReader(data), true },
			"half":  func() (ioReader, bool) { return iotest.HalfReader(bytes.NewReader(data)), false },
			"bytes": func() (ioReader, bool) { return iotest.OneByteReader(bytes.NewReader(data)), false },
		}
		for name, mk := range readers {
			rd, short := mk()
			// Without textOnly, nothing holds the first binaryProbe bytes back from the search.
			got, _, err := m.scan(rd, ".", "f", nil, readOpts{limit: 1 << 20, shortEOF: short}, limit)
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(got, want), "%s reader, pattern %q, limit %d, on %q", name, p.pat, limit, data)
		}
	}
}

type ioReader = interface{ Read([]byte) (int, error) }

func TestScanLimitsAndErrors(t *testing.T) {
	withChunkSize(t, 512)
	m, err := newMatcher("hit", false, false)
	assert.NilError(t, err)
	text := []byte(strings.Repeat("hit\n", 2000)) // 8000 bytes, 16 chunks

	// A file over the size limit yields nothing, even once the match limit is reached early.
	_, _, err = m.scan(bytes.NewReader(text), ".", "f", nil, readOpts{limit: len(text) - 1, shortEOF: true}, 3)
	assert.Assert(t, errors.Is(err, errTooLarge))
	got, _, err := m.scan(bytes.NewReader(text), ".", "f", nil, readOpts{limit: len(text), shortEOF: true}, 3)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, []string{"f:1: hit", "f:2: hit", "f:3: hit"})

	// Line numbers carry across chunks.
	got, _, err = m.scan(bytes.NewReader(text), ".", "f", nil, readOpts{limit: 1 << 20, shortEOF: true}, 5000)
	assert.NilError(t, err)
	assert.Equal(t, len(got), 2000)
	assert.Equal(t, got[1999], "f:2000: hit")

	// A NUL in the first binaryProbe bytes makes the file binary, however it is read.
	bin := append(bytes.Repeat([]byte("hit\n"), binaryProbe/4-1), 0)
	for _, rd := range []ioReader{bytes.NewReader(bin), iotest.OneByteReader(bytes.NewReader(bin))} {
		_, _, err = m.scan(rd, ".", "f", nil, readOpts{limit: 1 << 20, textOnly: true}, 10)
		assert.Assert(t, errors.Is(err, errBinary))
	}
	// Beyond the probe it does not.
	late := append(bytes.Repeat([]byte("hit\n"), binaryProbe/4), 0)
	got, _, err = m.scan(bytes.NewReader(late), ".", "f", nil, readOpts{limit: 1 << 20, textOnly: true, shortEOF: true}, 1)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, []string{"f:1: hit"})

	// A read error is returned, with no lines.
	boom := errors.New("boom")
	got, _, err = m.scan(iotest.ErrReader(boom), ".", "f", nil, readOpts{limit: 1 << 20}, 10)
	assert.Assert(t, errors.Is(err, boom))
	assert.Assert(t, got == nil)
	rd := iotest.TimeoutReader(bytes.NewReader(text)) // fails on the second read
	got, _, err = m.scan(rd, ".", "f", nil, readOpts{limit: 1 << 20, shortEOF: true}, 10)
	assert.Assert(t, errors.Is(err, iotest.ErrTimeout))
	assert.Assert(t, got == nil)

	// The buffer grows for a line longer than itself, and is handed back for reuse.
	long := strings.Repeat("x", 5000) + "hit\nhit\n"
	got, buf, err := m.scan(strings.NewReader(long), ".", "f", make([]byte, 0, 1024), readOpts{limit: 1 << 20, shortEOF: true}, 10)
	assert.NilError(t, err)
	assert.Equal(t, len(got), 2)
	assert.Assert(t, cap(buf) >= 5000)
}

func TestReadAll(t *testing.T) {
	text := strings.Repeat("x", 10000) // grows the buffer twice
	got, err := readAll(strings.NewReader(text), readOpts{limit: len(text), shortEOF: true})
	assert.NilError(t, err)
	assert.Equal(t, string(got), text)
	got, err = readAll(iotest.HalfReader(strings.NewReader(text)), readOpts{limit: len(text)})
	assert.NilError(t, err)
	assert.Equal(t, string(got), text)
	_, err = readAll(strings.NewReader(text), readOpts{limit: len(text) - 1})
	assert.Assert(t, errors.Is(err, errTooLarge))
	_, err = readAll(iotest.TimeoutReader(strings.NewReader(text)), readOpts{limit: len(text)})
	assert.Assert(t, errors.Is(err, iotest.ErrTimeout))
}

// sizedReader is a reader that tells its size, as a file does.
type sizedReader struct {
	*bytes.Reader
	err error
}

func (r sizedReader) Size() (int64, error) { return r.Reader.Size(), r.err }

// A line longer than the buffer doubles it once, then makes room for the rest of a file
// whose size is known, in one step.
func TestScanGrowsForLongLines(t *testing.T) {
	withChunkSize(t, 512)
	m, err := newMatcher("needle", false, false)
	assert.NilError(t, err)
	text := []byte("a\n" + strings.Repeat("x", 20000) + "needle\nneedle\n")
	for _, sizeErr := range []error{nil, errors.New("no size")} {
		got, buf, err := m.scan(sizedReader{bytes.NewReader(text), sizeErr}, ".", "f", nil, readOpts{limit: 1 << 20, shortEOF: true}, 10)
		assert.NilError(t, err)
		assert.Equal(t, len(got), 2)
		assert.Equal(t, got[1], "f:3: needle")
		if sizeErr == nil {
			assert.Assert(t, cap(buf) < 2*len(text), "grown to the file, not past it: %d", cap(buf))
		}
	}
	// Through the workspace, where files tell their size.
	ws, _ := newWorkspace(t, map[string]string{"long.txt": string(text)})
	res := ok(t, ws, "grep_search", `{"pattern":"needle"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"long.txt:2: …" + strings.Repeat("x", maxLineBytes-len("needle")) + "needle", "long.txt:3: needle"})
}
