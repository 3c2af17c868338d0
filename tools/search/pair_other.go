//go:build !amd64 || purego

package search

// usePairSearch is false: the pair search is written for amd64 only.
var usePairSearch = false

func indexPairAVX2(b []byte, n, off1, off2 int, a1, b1, a2, b2 byte) int {
	panic("search: no vector pair search on this platform")
}
