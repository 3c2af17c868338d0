//go:build !linux

package confine

import "errors"

func run([]string) error { return errors.New("the sandbox helper needs Linux") }

// ABI returns 0: Landlock is Linux's.
func ABI() int { return 0 }

// ApplyLimits is not implemented outside Linux.
func ApplyLimits(int, Limits) error { return errors.New("resource limits need Linux") }
