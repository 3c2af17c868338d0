package report

import (
	"strings"
	"unicode/utf8"

	"github.com/agentrunner/runner/runner/report/plaintext"
)

// cleanText makes model-produced text safe for XML and terminals (plaintext.Strip: the
// rules the viewer's pages share, terminal escape sequences dropped).
func cleanText(s string) string { return plaintext.Strip(s) }

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
