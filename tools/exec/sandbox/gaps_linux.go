package sandbox

import (
	"fmt"
	"os"
)

// Gaps lists, in short phrases, what w does not confine on this machine for a command with
// or without network: what the console's sandbox note, the transcript's start event and
// result.json's sandbox_gaps report. Empty means none known. A wrapper this package did not
// make has none to report.
func Gaps(w any, network bool) []string {
	if g, ok := w.(interface{ gaps(network bool) []string }); ok {
		return g.gaps(network)
	}
	return nil
}

func (none) gaps(bool) []string {
	return []string{"no confinement: commands read and write whatever the runner can, reach the network and host sockets, and have no resource limits"}
}

// limitGaps are the launcher's: memory per process without a memory cgroup, no process
// cap as root without a pids cgroup.
func (l *launcher) limitGaps() []string {
	var g []string
	if l.memoryScope() != MemoryPerCommand {
		g = append(g, "memory_mb per process, not per command (no memory cgroup)")
	}
	if l.cgroup == nil && os.Geteuid() == 0 {
		g = append(g, "no process limit (root without a pids cgroup)")
	}
	return g
}

func (b *bwrapSandbox) gaps(network bool) []string {
	g := b.limitGaps()
	if network {
		g = append(g, "network: true shares the host's network namespace: loopback services and abstract unix sockets are reachable")
	}
	return g
}

func (l *landlockSandbox) gaps(network bool) []string {
	g := l.limitGaps()
	g = append(g, "other processes' command lines, the runner's included, readable in /proc")
	owner := "the user's own files"
	if os.Geteuid() == 0 {
		owner = "any file (running as root)"
	}
	g = append(g, "timestamps and mode bits of "+owner+" outside the workspace can change (Landlock has no right for them; auto prefers bwrap)")
	if l.abi < 4 && !network {
		g = append(g, fmt.Sprintf("TCP not blocked (Landlock ABI %d, needs 4)", l.abi))
	}
	if l.abi < 6 {
		g = append(g, fmt.Sprintf("signals to processes outside not blocked (Landlock ABI %d, needs 6)", l.abi))
	}
	switch {
	case !l.seccomp:
		g = append(g, "no seccomp filter for this architecture: unix sockets, UDP, TCP Fast Open, extended attributes and set-user-ID bits open")
	case network:
		g = append(g, "network: true opens UDP and host unix sockets too")
	}
	return g
}
