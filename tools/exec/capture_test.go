package exec

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestCapture(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		writes  []string
		want    string
		dropped int64
	}{
		{name: "empty", limit: 10, want: ""},
		{name: "under the limit", limit: 10, writes: []string{"abc", "de"}, want: "abcde"},
		{name: "exactly the limit", limit: 10, writes: []string{"01234", "56789"}, want: "0123456789"},
		{name: "one over", limit: 10, writes: []string{"0123456789x"}, want: "01234\n\n[... 1 bytes of output omitted ...]\n\n6789x", dropped: 1},
		{name: "byte by byte", limit: 6, writes: strings.Split("abcdefghij", ""), want: "abc\n\n[... 4 bytes of output omitted ...]\n\nhij", dropped: 4},
		{name: "one huge write", limit: 6, writes: []string{"abcdefghijklmnop"}, want: "abc\n\n[... 10 bytes of output omitted ...]\n\nnop", dropped: 10},
		{name: "ring wraps in pieces", limit: 8, writes: []string{"abcd", "ef", "gh", "ij", "k", "lmn"}, want: "abcd\n\n[... 6 bytes of output omitted ...]\n\nklmn", dropped: 6},
		{name: "odd limit", limit: 5, writes: []string{"abcdefg"}, want: "ab\n\n[... 2 bytes of output omitted ...]\n\nefg", dropped: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(tc.limit)
			var total int64
			for _, w := range tc.writes {
				n, err := c.Write([]byte(w))
				assert.NilError(t, err)
				assert.Equal(t, n, len(w))
				total += int64(len(w))
			}
			assert.Equal(t, c.String(), tc.want)
			assert.Equal(t, c.Dropped(), tc.dropped)
			assert.Equal(t, c.Total(), total)
			assert.Equal(t, int64(c.Kept())+c.Dropped(), total)
		})
	}
}

func TestCaptureRepairsCutRunes(t *testing.T) {
	c := newCapture(4)
	_, _ = c.Write([]byte("aéxxéb")) // é is two bytes: the head and the tail each cut one
	assert.Equal(t, c.String(), "a\uFFFD\n\n[... 4 bytes of output omitted ...]\n\n\uFFFDb")
	c = newCapture(3)
	_, _ = c.Write([]byte("aé"))
	_, _ = c.Write([]byte("bcdé"))
	assert.Equal(t, c.String(), "a\n\n[... 5 bytes of output omitted ...]\n\né")
}
