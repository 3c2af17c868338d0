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
// whitespace runs become one space, and every character that can begin markup is
// backslash-escaped (CommonMark allows it for all ASCII punctuation), so `[a](u)`,
// `![x](u)`, `<img>`, `*em*`, `|`, backticks, `$math$`, entities and autolinks (the ':' of
// "https://", the '.' of "www.", the '@' of an address) render as the characters they are,
// and text cannot open a block (`# `, `- `, `> `, `1. `) where it starts a line or list item.
// Ordinary punctuation (`-`, `.`, `/`, `:` elsewhere) stays as it is, so the file reads well
// raw. It is the one escape of every Markdown report.
func Escape(s string) string {
	s = oneLine(s)
	first := -1
	for i := 0; i < len(s); i++ {
		if needsEscape(s, i) {
			first = i
			break
		}
	}
	if first < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:first])
	for i := first; i < len(s); i++ {
		if needsEscape(s, i) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// needsEscape reports whether s[i] could begin markup.
func needsEscape(s string, i int) bool {
	switch c := s[i]; c {
	case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '&', '$', '@', '!':
		return true
	case ':': // a URL scheme's "://"
		return strings.HasPrefix(s[i+1:], "//")
	case '.': // "www.", and a numbered list item ("1. ") at the start
		return i >= 3 && strings.EqualFold(s[i-3:i], "www") || leadingDigits(s, i)
	case ')':
		return leadingDigits(s, i)
	case '#', '-', '+', '=':
		return i == 0
	}
	return false
}

// leadingDigits reports whether s[:i] is all digits (and not empty).
func leadingDigits(s string, i int) bool {
	if i == 0 {
		return false
	}
	for j := range i {
		if s[j] < '0' || s[j] > '9' {
			return false
		}
	}
	return true
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
