//go:build !linux

package exec

import "runtime"

// stuck knows no process tree outside Linux: only the processor count.
func stuck(int) Stuck { return Stuck{CPUs: runtime.NumCPU()} }
