package command

import (
	"testing"
	"time"
)

// FuzzCheck: any line gets a verdict, never a panic, and a denial always says why.
func FuzzCheck(f *testing.F) {
	for _, d := range dangerous {
		f.Add(d.line)
	}
	for _, line := range ordinary {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		done := make(chan Verdict, 1)
		go func() { done <- Check(line, testOpts) }()
		var v Verdict
		select {
		case v = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%q: no verdict after 5s", line)
		}
		if !v.Allowed && (v.Name == "" || v.Reason == "" || v.Suggestion == "") {
			t.Fatalf("%q: denial without a name, reason or suggestion: %+v", line, v)
		}
	})
}

// BenchmarkCheck measures one pass over the corpus (every dangerous and ordinary line).
func BenchmarkCheck(b *testing.B) {
	for b.Loop() {
		for _, d := range dangerous {
			Check(d.line, testOpts)
		}
		for _, line := range ordinary {
			Check(line, testOpts)
		}
	}
}
