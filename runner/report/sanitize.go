package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// cleanText makes model-produced text safe for XML and terminals: terminal escape
// sequences (CSI, OSC and friends) are dropped, invalid UTF-8 becomes U+FFFD, and
// control characters other than tab, newline and carriage return become visible
// escapes such as \x00, so nothing is silently lost.
func cleanText(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i = skipEscape(s, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f: // C1 controls: 0x9b is a one-byte CSI to some terminals
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == 0xfffe || r == 0xffff: // not XML characters
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isClean is the fast path: most text needs no change.
func isClean(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f ||
			r == utf8.RuneError || r == 0xfffe || r == 0xffff {
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

// oneLine is cleanText for a console column: whitespace runs become one space and the
// result is cut to max runes (0: no limit).
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(cleanText(s)), " ")
	if max > 0 && utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	return s
}
