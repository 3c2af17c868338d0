//go:build amd64 && !purego

package search

import "golang.org/x/sys/cpu"

// usePairSearch selects the vector pair search for literals. A variable so that tests can
// check the portable search too.
var usePairSearch = cpu.X86.HasAVX2

// indexPairAVX2 is indexPair's vector loop over the first n&^31 offsets, for n >= 32.
//
//go:noescape
func indexPairAVX2(b []byte, n, off1, off2 int, a1, b1, a2, b2 byte) int
