package search

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"gotest.tools/v3/assert"
)

// naivePair is the reference for indexPair.
func naivePair(buf []byte, n int, p *pair) int {
	for i := range n {
		c1, c2 := buf[i+p.off1], buf[i+p.off2]
		if (c1 == p.a1 || c1 == p.b1) && (c2 == p.a2 || c2 == p.b2) {
			return i
		}
	}
	return -1
}

// TestIndexPairAgainstNaive checks the vector loop, its overlapping last step and the
// scalar one against a byte-by-byte scan, for every length and offset pair up to a few
// vectors.
func TestIndexPairAgainstNaive(t *testing.T) {
	if !usePairSearch {
		t.Skip("no vector pair search on this machine")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 3000 {
		size := r.IntN(140)
		buf := []byte(randText(r, "abAB.", size))
		// Sparse hits, so that matches fall anywhere in a vector, or none at all.
		if round%2 == 0 {
			buf = bytes.Repeat([]byte{'.'}, size)
			for range r.IntN(3) {
				if size > 0 {
					buf[r.IntN(size)] = "abAB"[r.IntN(4)]
				}
			}
		}
		off1 := r.IntN(5)
		off2 := off1 + r.IntN(5)
		n := size - off2
		if n > 0 {
			n -= r.IntN(2) // sometimes fewer offsets than the buffer allows
		}
		p := &pair{off1: off1, off2: off2, a1: 'a', b1: 'A', a2: 'b', b2: 'b'}
		if round%3 == 0 {
			p.a2, p.b2 = 'a', 'B'
		}
		assert.Equal(t, indexPair(buf, n, p), naivePair(buf, max(n, 0), p), "buf %q n %d pair %+v", buf, n, p)
	}
}

func TestLiteralPairChoice(t *testing.T) {
	// The two rarest bytes, in order of their offsets, in both cases when folding.
	l := newLiteral("the Zebra", true)
	assert.Equal(t, l.pair, pair{off1: 4, off2: 6, a1: 'z', b1: 'Z', a2: 'b', b2: 'B'})
	l = newLiteral("Zebra", false)
	assert.Equal(t, l.pair, pair{off1: 0, off2: 2, a1: 'Z', b1: 'Z', a2: 'b', b2: 'b'})
	// One byte is both.
	l = newLiteral("q", true)
	assert.Equal(t, l.pair, pair{a1: 'q', b1: 'Q', a2: 'q', b2: 'Q'})
	l = newLiteral("", false)
	assert.Equal(t, l.pair, pair{})
}

// FuzzLiteralIndex compares literal.index, with each search, with searching a lower-cased
// copy of the text.
func FuzzLiteralIndex(f *testing.F) {
	f.Add([]byte("xx Deprecated: use y\n// deprecated"), "deprecated", true, 0)
	f.Add(bytes.Repeat([]byte("abcd"), 40), "dab", false, 3)
	f.Add([]byte("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzZEBRA"), "zebra", true, 1)
	f.Fuzz(func(t *testing.T, buf []byte, pat string, fold bool, from int) {
		if pat == "" || len(buf) > 1<<16 {
			return
		}
		if fold && !isASCII(pat) {
			return // folded literals are ASCII; the regexp handles the rest
		}
		from = min(max(from, 0), len(buf))
		hay, needle := buf, []byte(pat)
		if fold {
			hay, needle = asciiOnlyLower(buf), asciiOnlyLower([]byte(pat))
		}
		want := bytes.Index(hay[from:], needle)
		if want >= 0 {
			want += from
		}
		has := usePairSearch
		defer func() { usePairSearch = has }()
		for _, pair := range []bool{has, false} {
			usePairSearch = pair
			var st litState
			got := newLiteral(pat, fold).index(buf, from, &st)
			if got != want {
				t.Fatalf("pair=%v: index(%q, %q, fold %v, from %d) = %d, want %d", pair, buf, pat, fold, from, got, want)
			}
		}
	})
}

// asciiOnlyLower lower-cases the ASCII letters of b only, as literal folding does.
func asciiOnlyLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = lower[c]
	}
	return out
}
