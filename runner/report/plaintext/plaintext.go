// Package plaintext is the one cleaning of text that an agent, a task file or a model
// server wrote, before runner shows it anywhere but Markdown (runner/report/markdown):
// the console, JUnit XML, workflow commands, `runner show` and the viewer's pages. Such
// text can neither drive a terminal, break a document, nor read differently from what it
// is. Markup is left to each output's own escaping (encoding/xml, html/template).
package plaintext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Clean returns s with every character that could act on a reader shown as a visible
// escape, so nothing is silently lost:
//   - invalid UTF-8 and the non-characters U+FFFE and U+FFFF (not XML) become U+FFFD;
//   - tab, newline and CRLF stay; a lone carriage return (which can overwrite a terminal
//     line) becomes \r, ESC (a terminal's escape sequences) \x1b, and every other C0
//     control and DEL \xNN;
//   - C1 controls (0x9b is a one-byte CSI to some terminals), the line and paragraph
//     separators and the bidirectional embeddings, overrides and isolates (which can make
//     text read differently from what it is) become \uNNNN.
func Clean(s string) string { return clean(s, false) }

// Strip is Clean with whole terminal escape sequences (CSI, OSC, DCS and friends) dropped
// instead of shown: for the console and the reports a CI job shows, where the colours of
// a test tool's output would only be noise.
func Strip(s string) string { return clean(s, true) }

func clean(s string, strip bool) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] == 0x1b && strip {
			i = skipEscape(s, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == 0xfffe, r == 0xffff:
			b.WriteRune(utf8.RuneError)
		case r == '\t' || r == '\n' || r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case shownAsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// shownAsEscape: C1 controls, line and paragraph separators, bidirectional controls.
func shownAsEscape(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// isClean is the fast path: most text is ASCII without controls, and needs no change.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' || c == 0x7f || c >= 0x80 {
			return cleanRunes(s)
		}
	}
	return true
}

func cleanRunes(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || shownAsEscape(r) || r == utf8.RuneError || r == 0xfffe || r == 0xffff {
			return false
		}
	}
	return true
}

// skipEscape returns the index just past the escape sequence starting at s[i] (ESC).
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[': // CSI: parameter and intermediate bytes, then one final byte
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		// OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \).
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2f: // nF sequences such as ESC ( B: intermediates, then a final byte
		for ; i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f; i++ {
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7e: // two-byte sequences such as ESC c, ESC 7
		return i + 1
	}
	return i
}

// skipCSI returns the index just past a control sequence's final byte, whose parameters
// start at s[i]; a malformed one ends before its stray byte.
func skipCSI(s string, i int) int {
	for ; i < len(s); i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
		if s[i] < 0x20 || s[i] > 0x7e {
			return i
		}
	}
	return i
}

// skipString returns the index just past a control string starting at s[i], ended by BEL
// or ST (ESC \), or the end of s.
func skipString(s string, i int) int {
	for ; i < len(s); i++ {
		if s[i] == 0x07 {
			return i + 1
		}
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
			return i + 2
		}
	}
	return i
}
