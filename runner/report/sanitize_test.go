package report

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestCleanText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\twith\ttabs\nand lines\r\n", "plain text\twith\ttabs\nand lines\r\n"},
		{"\x1b[1;31mbold red\x1b[0m", "bold red"},
		{"\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"},
		{"\x1b]0;window title\x07after", "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1b(Bcharset", "charset"},
		{"\x1bcreset", "reset"},
		{"unterminated \x1b[31", "unterminated "},
		{"unterminated osc \x1b]0;title", "unterminated osc "},
		{"csi broken \x1b[3\x00x", `csi broken \x00x`},
		{"trailing escape \x1b", "trailing escape "},
		{"nul\x00 bell\x07 vt\x0b del\x7f", `nul\x00 bell\x07 vt\x0b del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8"},
		{"nonchar \uFFFE\uFFFF", "nonchar \uFFFD\uFFFD"},
		{"emoji 🎉 and ünïcode and \uFFFD", "emoji 🎉 and ünïcode and \uFFFD"},
	} {
		assert.Equal(t, cleanText(tc.in), tc.want, "%q", tc.in)
	}
}

func TestOneLine(t *testing.T) {
	assert.Equal(t, oneLine("  a\n\tb \x1b[31mc\x1b[0m  ", 0), "a b c")
	assert.Equal(t, oneLine("abcdef", 4), "abc…")
	assert.Equal(t, oneLine("abcd", 4), "abcd")
}
