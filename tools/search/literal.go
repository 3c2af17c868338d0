package search

import "bytes"

// literal finds a fixed string. With the vector pair search (see pair_amd64.s), it looks
// for the spots where the pattern's two rarest bytes both stand at their offsets, in
// either case when folding, and compares the whole pattern only there: few spots pass
// both tests, and the scan handles 32 bytes per step. Otherwise a case-sensitive search is
// bytes.Index, and a case-insensitive (ASCII) one looks for the rarest byte in both cases
// with bytes.IndexByte, which is vectorised, and compares the rest only at those spots:
// much cheaper than a (?i) regexp, which walks every byte.
type literal struct {
	pat    []byte // lower-cased when fold
	fold   bool
	rare   int  // offset in pat of the byte to scan for
	lo, up byte // that byte in both cases (equal when it has no case)
	pair   pair // the two bytes the pair search looks for
}

// pair is what indexPair looks for: at offset off1, a byte equal to a1 or b1, and at
// offset off2, one equal to a2 or b2.
type pair struct {
	off1, off2     int
	a1, b1, a2, b2 byte
}

// litState caches, for one buffer, where each case of the rare byte next occurs, so that
// a case which is common does not make the scan for the other one start over each time.
type litState struct {
	lo, up int
	init   bool
}

func newLiteral(s string, fold bool) *literal {
	l := &literal{pat: []byte(s), fold: fold}
	if fold {
		for i := range l.pat {
			l.pat[i] = lower[l.pat[i]]
		}
	}
	// Rank each offset by how common its byte is, in the more common of its cases.
	score := func(i int) int {
		c := l.pat[i]
		if !fold {
			return int(byteRank[c])
		}
		return max(int(byteRank[c]), int(byteRank[upper(c)]))
	}
	rare, second := 0, -1
	for i := 1; i < len(l.pat); i++ {
		switch {
		case score(i) < score(rare):
			rare, second = i, rare
		case second < 0 || score(i) < score(second):
			second = i
		}
	}
	if len(l.pat) == 0 {
		return l
	}
	if second < 0 {
		second = rare
	}
	l.rare, l.lo, l.up = rare, l.pat[rare], l.pat[rare]
	if fold {
		l.up = upper(l.lo)
	}
	off1, off2 := min(rare, second), max(rare, second)
	l.pair = pair{off1: off1, off2: off2, a1: l.pat[off1], b1: l.pat[off1], a2: l.pat[off2], b2: l.pat[off2]}
	if fold {
		l.pair.b1, l.pair.b2 = upper(l.pair.a1), upper(l.pair.a2)
	}
	return l
}

// index returns the offset of the first occurrence at or after from, or -1.
func (l *literal) index(buf []byte, from int, st *litState) int {
	n := len(l.pat)
	if usePairSearch && n > 0 {
		for {
			i := indexPair(buf[from:], len(buf)-from-n+1, &l.pair)
			if i < 0 {
				return -1
			}
			s := from + i
			if l.fold && equalFold(buf[s:s+n], l.pat) || !l.fold && bytes.Equal(buf[s:s+n], l.pat) {
				return s
			}
			from = s + 1
		}
	}
	if !l.fold || n == 0 {
		i := bytes.Index(buf[from:], l.pat)
		if i < 0 {
			return -1
		}
		return from + i
	}
	for {
		p := l.nextRare(buf, from+l.rare, st)
		if p < 0 {
			return -1
		}
		s := p - l.rare
		if s+n > len(buf) {
			return -1
		}
		if equalFold(buf[s:s+n], l.pat) {
			return s
		}
		from = s + 1
	}
}

// indexPair returns the first i < n at which buf holds p (see pair), or -1. n is the
// number of offsets to try: at most len(buf)-p.off2.
func indexPair(buf []byte, n int, p *pair) int {
	if n <= 0 {
		return -1
	}
	_ = buf[n-1+p.off2] // the vector loads stay inside buf
	i := 0
	if n >= 32 {
		if j := indexPairAVX2(buf, n, p.off1, p.off2, p.a1, p.b1, p.a2, p.b2); j >= 0 {
			return j
		}
		// The last n%32 offsets: one more step, over a window that overlaps the last one.
		i = n &^ 31
		if i == n {
			return -1
		}
		if j := indexPairAVX2(buf[n-32:], 32, p.off1, p.off2, p.a1, p.b1, p.a2, p.b2); j >= 0 {
			return n - 32 + j
		}
		return -1
	}
	for ; i < n; i++ {
		c1, c2 := buf[i+p.off1], buf[i+p.off2]
		if (c1 == p.a1 || c1 == p.b1) && (c2 == p.a2 || c2 == p.b2) {
			return i
		}
	}
	return -1
}

// nextRare returns the position of the first byte at or after at that is l.lo or l.up.
func (l *literal) nextRare(buf []byte, at int, st *litState) int {
	if at >= len(buf) {
		return -1
	}
	if l.lo == l.up {
		i := bytes.IndexByte(buf[at:], l.lo)
		if i < 0 {
			return -1
		}
		return at + i
	}
	if !st.init {
		st.lo, st.up, st.init = -1, -1, true
	}
	none := len(buf) // "no further occurrence": never below at
	if st.lo < at {
		st.lo = none
		if i := bytes.IndexByte(buf[at:], l.lo); i >= 0 {
			st.lo = at + i
		}
	}
	if st.up < at {
		st.up = none
		if i := bytes.IndexByte(buf[at:], l.up); i >= 0 {
			st.up = at + i
		}
	}
	p := min(st.lo, st.up)
	if p >= none {
		return -1
	}
	return p
}

// equalFold reports whether text equals pat (already lower-case) ignoring ASCII case.
func equalFold(text, pat []byte) bool {
	for i, c := range pat {
		if lower[text[i]] != c {
			return false
		}
	}
	return true
}

// lower maps ASCII upper-case letters to lower case and every other byte to itself.
var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// byteRank orders bytes from rarest (0) to most common (255) in source code, measured
// over the Go source tree. Only the order matters: it picks which byte to scan for.
var byteRank = [256]uint8{
	0, 22, 14, 18, 28, 23, 36, 42, 2, 252, 248, 15, 1, 80, 49, 3,
	24, 46, 47, 43, 8, 37, 64, 38, 13, 4, 9, 34, 32, 19, 25, 26,
	255, 177, 224, 163, 166, 169, 175, 172, 232, 231, 185, 181, 243, 188, 235, 233,
	251, 236, 229, 220, 221, 205, 218, 200, 212, 201, 226, 182, 174, 223, 171, 159,
	157, 230, 193, 207, 203, 215, 192, 186, 184, 208, 165, 173, 197, 199, 191, 206,
	202, 178, 213, 219, 216, 187, 194, 183, 195, 180, 167, 190, 204, 189, 160, 217,
	164, 247, 222, 241, 238, 254, 239, 227, 225, 246, 168, 198, 240, 228, 249, 244,
	234, 170, 250, 245, 253, 237, 211, 196, 242, 214, 176, 210, 179, 209, 156, 20,
	155, 143, 154, 148, 124, 145, 138, 96, 149, 131, 133, 88, 110, 73, 97, 89,
	106, 90, 93, 111, 136, 139, 87, 137, 144, 135, 69, 75, 132, 140, 103, 76,
	85, 95, 86, 94, 128, 123, 108, 112, 91, 134, 107, 116, 122, 114, 98, 82,
	83, 130, 121, 120, 99, 100, 84, 161, 102, 147, 125, 104, 141, 117, 129, 81,
	10, 16, 162, 127, 60, 58, 35, 67, 57, 79, 78, 61, 119, 77, 153, 109,
	71, 66, 29, 54, 52, 72, 74, 92, 150, 152, 63, 65, 53, 5, 30, 51,
	113, 146, 158, 151, 101, 126, 142, 115, 105, 70, 68, 56, 59, 55, 17, 62,
	118, 21, 39, 50, 40, 31, 45, 6, 44, 11, 12, 7, 27, 48, 41, 33,
}
