package plaintext

import (
	"testing"

	"gotest.tools/v3/assert"
)

// TestCleanAndStrip: the rules every report and page shares, tested once; Strip differs
// from Clean only in dropping whole terminal escape sequences.
func TestCleanAndStrip(t *testing.T) {
	for _, tc := range []struct{ in, clean, strip string }{
		{"plain text\twith\ttabs\nand lines\r\n", "plain text\twith\ttabs\nand lines\r\n", ""},
		{"a\x00b\x1b[2Jc\xffd\r\n\te", `a\x00b\x1b[2Jc` + "\uFFFDd\r\n\te", `a\x00bc` + "\uFFFDd\r\n\te"},
		{"\x1b[1;31mbold red\x1b[0m", `\x1b[1;31mbold red\x1b[0m`, "bold red"},
		{"\x1b[?25lhidden cursor\x1b[?25h", `\x1b[?25lhidden cursor\x1b[?25h`, "hidden cursor"},
		{"\x1b]0;window title\x07after", `\x1b]0;window title\x07after`, "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://x\x1b\link\x1b]8;;\x1b\`, "link"},
		{"\x1b(Bcharset", `\x1b(Bcharset`, "charset"},
		{"\x1bcreset", `\x1bcreset`, "reset"},
		{"unterminated \x1b[31", `unterminated \x1b[31`, "unterminated "},
		{"unterminated osc \x1b]0;title", `unterminated osc \x1b]0;title`, "unterminated osc "},
		{"csi broken \x1b[3\x00x", `csi broken \x1b[3\x00x`, `csi broken \x00x`},
		{"trailing escape \x1b", `trailing escape \x1b`, "trailing escape "},
		{"nul\x00 bell\x07 vt\x0b del\x7f", `nul\x00 bell\x07 vt\x0b del\x7f`, ""},
		{"passed\rFAILED", `passed\rFAILED`, ""}, // a lone CR would overwrite the line on a terminal
		{"c1 \u009b31m", `c1 \u009b31m`, ""},
		{"bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8", ""},
		{"nonchar \uFFFE\uFFFF", "nonchar \uFFFD\uFFFD", ""},
		{"é\u202e \u2066x\u2069 a\u2028b", `é\u202e \u2066x\u2069 a\u2028b`, ""},
		{"emoji 🎉 and ünïcode and \uFFFD", "emoji 🎉 and ünïcode and \uFFFD", ""},
	} {
		if tc.strip == "" {
			tc.strip = tc.clean
		}
		assert.Equal(t, Clean(tc.in), tc.clean, "Clean(%q)", tc.in)
		assert.Equal(t, Strip(tc.in), tc.strip, "Strip(%q)", tc.in)
	}
}
