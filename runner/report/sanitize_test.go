package report

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestOneLine(t *testing.T) {
	assert.Equal(t, oneLine("  a\n\tb \x1b[31mc\x1b[0m  ", 0), "a b c")
	assert.Equal(t, oneLine("abcdef", 4), "abc…")
	assert.Equal(t, oneLine("abcd", 4), "abcd")
}
