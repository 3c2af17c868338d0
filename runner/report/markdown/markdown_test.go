package markdown

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"rename-function":                                        "rename-function",
		"ollama:qwen3:4b on scenarios/x.yaml:9":                  "ollama:qwen3:4b on scenarios/x.yaml:9",
		"[Approve the deployment](https://evil.example/approve)": `\[Approve the deployment\](https\://evil.example/approve)`,
		"![](https://evil.example/t.png)":                        `\!\[\](https\://evil.example/t.png)`,
		`<img src=x onerror=alert(1)>`:                           `\<img src=x onerror=alert(1)\>`,
		"a|b `code` *em* _u_ ~s~ $x$ &amp;":                      "a\\|b \\`code\\` \\*em\\* \\_u\\_ \\~s\\~ \\$x\\$ \\&amp;",
		"visit www.evil.example or me@evil.example":              `visit www\.evil.example or me\@evil.example`,
		"# heading":                 `\# heading`,
		"- item":                    `\- item`,
		"12. item":                  `12\. item`,
		"3) item":                   `3\) item`,
		"> quote":                   `\> quote`,
		"two\nlines\r\n\x1b[31mred": `two lines \[31mred`,
		`back\slash`:                `back\\slash`,
	} {
		assert.Equal(t, Escape(in), want, in)
	}
	assert.Equal(t, Cell("abcdefgh", 4), "abc…")
	assert.Equal(t, Cell("[[[[[[", 3), `\[\[…`, "cut before escaping: no escape is cut in half")
}

// Whatever the text, Escape leaves no unescaped character that could begin markup.
func TestEscapeLeavesNoLiveMarkup(t *testing.T) {
	hostile := "[x](http://e) ![i](http://e/t.png) <a href=http://e>x</a> `c` |col| www.e.com a@b.c $m$ &#60;"
	out := Escape(hostile)
	for i := 0; i < len(out); i++ {
		if strings.ContainsRune("[]<>`|$&@!", rune(out[i])) {
			assert.Assert(t, i > 0 && out[i-1] == '\\', "unescaped %q at %d in %s", out[i], i, out)
		}
	}
}
