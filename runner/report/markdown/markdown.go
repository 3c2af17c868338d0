// Package markdown makes text safe inside runner's Markdown reports (bench.md, the
// GitHub job summary): text that an agent, a task file or a model server wrote is shown
// as text, never as a link, an image, HTML, emphasis or a new table cell or block.
package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s as one line of literal Markdown text: control characters and
// whitespace runs become one space, and every ASCII punctuation character is
// backslash-escaped (CommonMark allows it for all of them), so `[a](u)`, `![x](u)`,
// `<img>`, `*`, `|`, backticks and autolinks (the ':' of "https://", the '.' of "www.")
// render as the characters they are. It is the one escape of every Markdown report.
func Escape(s string) string {
	s = oneLine(s)
	n := 0
	for i := 0; i < len(s); i++ {
		if isPunct(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + n)
	for i := 0; i < len(s); i++ {
		if isPunct(s[i]) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Cell is Escape for a table cell, cut to at most max runes of the original text (0: no
// bound) so an escape is never cut in half.
func Cell(s string, max int) string {
	s = oneLine(s)
	if max > 0 && utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	return Escape(s)
}

// oneLine turns control characters (and invalid UTF-8) into spaces and collapses
// whitespace runs, trimming the ends.
func oneLine(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				return ' '
			}
			return r
		}, s)
	}
	if !strings.Contains(s, "  ") && strings.TrimSpace(s) == s {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
