package scrub

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// JSON returns the JSON document (or JSON lines) b with every secret replaced as a reader
// of it would see the secret: each string is scrubbed as a decoder reads it, then the
// bytes as Bytes scrubs them. A string holding an escaped form of a secret (a Go-quoted
// message, whose `\"` JSON writes as `\\\"`; a JSON document inside a string) is decoded,
// scrubbed and encoded again, so no decoding of the output, two deep, gives a secret back
// where the byte forms of Bytes alone would miss it. b itself is returned when nothing is
// replaced. With no secret known the cost is one atomic load.
func JSON(b []byte) []byte { return process.JSON(b) }

// JSON is the package's JSON with s's secrets.
func (s *Set) JSON(b []byte) []byte {
	m := s.m.Load()
	if m == nil {
		return b
	}
	var out []byte // nil until a string changes
	last := 0
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		start := i + q
		end, decode := m.stringEnd(b, start)
		if end < 0 {
			break // not JSON: the byte pass below still runs
		}
		i = end + 1
		// A string whose escapes stand for no character of any secret's forms holds each
		// form as it reads it, unescaped: the byte pass covers it.
		if !decode {
			continue
		}
		var str string
		if json.Unmarshal(b[start:end+1], &str) != nil || !m.containsString(str) {
			continue
		}
		enc, err := json.Marshal(m.r.Replace(str))
		if err != nil {
			continue
		}
		out = append(append(out, b[last:start]...), enc...)
		last = end + 1
	}
	if out != nil {
		b = append(out, b[last:]...)
	}
	if m.contains(b) {
		b = []byte(m.r.Replace(string(b)))
	}
	return b
}

// stringEnd returns the index of the quote that closes the JSON string opening at
// b[start] (-1 if none), and whether the string must be decoded to be scrubbed: whether
// one of its escapes stands for a byte that occurs in a secret's forms (a `\n` does not,
// for a secret without a newline, so ordinary text costs no decoding).
func (m *matcher) stringEnd(b []byte, start int) (end int, decode bool) {
	for i := start + 1; ; {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1, decode
		}
		q += i
		j := i // the escapes before the quote, found as fast as the quote was
		for j < q {
			k := bytes.IndexByte(b[j:q], '\\')
			if k < 0 {
				break
			}
			k += j
			decode = decode || m.escapeMatters(b[k+1:]) // k+1 <= q < len(b)
			j = k + 2
		}
		if j <= q {
			return q, decode
		}
		i = j // the quote was escaped: look further
	}
}

// escapeMatters reports whether the escape whose letter begins e stands for a byte of a
// needle. A \u escape of a character beyond ASCII counts when any needle has such bytes.
func (m *matcher) escapeMatters(e []byte) bool {
	var c byte
	switch e[0] {
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		if len(e) < 5 {
			return true
		}
		r, err := strconv.ParseUint(string(e[1:5]), 16, 32)
		if err != nil {
			return true
		}
		if r >= 0x80 {
			var buf [utf8.UTFMax]byte
			n := utf8.EncodeRune(buf[:], rune(r)) // a surrogate half encodes as U+FFFD
			return m.chars[buf[0]] || m.chars[buf[n-1]] || r >= 0xD800 && r < 0xE000 && m.anyHigh()
		}
		c = byte(r)
	default: // ", \ and /
		c = e[0]
	}
	return m.chars[c]
}

// anyHigh reports whether a needle holds a byte beyond ASCII.
func (m *matcher) anyHigh() bool {
	for c := 0x80; c < 0x100; c++ {
		if m.chars[c] {
			return true
		}
	}
	return false
}
