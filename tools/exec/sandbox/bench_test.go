//go:build linux

package sandbox

import "testing"

// BenchmarkRunInTerminal measures a whole run_in_terminal call of `true` per sandbox: the
// sandbox's overhead is the difference from none.
func BenchmarkRunInTerminal(b *testing.B) {
	modes := append([]confined{{name: ModeNone, wrapper: None()}}, sandboxes(b)...)
	for _, sb := range modes {
		b.Run(sb.name, func(b *testing.B) {
			ws := workspace(b, sb.wrapper)
			for b.Loop() {
				if res := run(b, ws, "true", 10); !res.Success {
					b.Fatal(res.Output)
				}
			}
		})
	}
}
