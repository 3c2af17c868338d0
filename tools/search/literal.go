package search

import "bytes"

// literal finds a fixed string. Case-insensitive (ASCII) search looks for the pattern's
// rarest byte in both cases with bytes.IndexByte, which is vectorised, and compares the
// rest only at those spots: much cheaper than a (?i) regexp, which walks every byte.
type literal struct {
	pat    []byte // lower-cased when fold
	fold   bool
	rare   int  // offset in pat of the byte to scan for
	lo, up byte // that byte in both cases (equal when it has no case)
}

// litState caches, for one buffer, where each case of the rare byte next occurs, so that
// a case which is common does not make the scan for the other one start over each time.
type litState struct {
	lo, up int
	init   bool
}

func newLiteral(s string, fold bool) *literal {
	l := &literal{pat: []byte(s), fold: fold}
	if !fold {
		return l
	}
	for i := range l.pat {
		l.pat[i] = lower[l.pat[i]]
	}
	best := 1 << 30
	for i, c := range l.pat {
		score := max(int(byteRank[c]), int(byteRank[upper(c)]))
		if score < best {
			best, l.rare = score, i
		}
	}
	if len(l.pat) > 0 {
		l.lo, l.up = l.pat[l.rare], upper(l.pat[l.rare])
	}
	return l
}

// index returns the offset of the first occurrence at or after from, or -1.
func (l *literal) index(buf []byte, from int, st *litState) int {
	if !l.fold || len(l.pat) == 0 {
		i := bytes.Index(buf[from:], l.pat)
		if i < 0 {
			return -1
		}
		return from + i
	}
	n := len(l.pat)
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
