//go:build linux

package confine

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func itoa(n int) string { return strconv.Itoa(n) }

func startSleep(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// containsLine reports whether /proc/<pid>/limits has the named limit with these values.
func containsLine(limits, name, soft, hard string) bool {
	for _, line := range strings.Split(limits, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			return len(f) >= 2 && f[0] == soft && f[1] == hard
		}
	}
	return false
}
