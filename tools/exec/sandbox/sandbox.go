// Package sandbox confines the commands the agent runs (run_in_terminal, run_code) by the
// strongest means that works on the machine, chosen once per process by Probe. Both real
// sandboxes show a command only a view of the machine (see view): the system and
// toolchain directories read-only, minus secrets such as /etc/shadow and the home's
// credentials, its workspace, the shared build cache and a private temp directory.
//
//   - bwrap (bubblewrap): the view mounted into an empty root, a private /tmp and home
//     (the toolchains on PATH bound back read-only), no network unless the task allows it,
//     its own PID, IPC and UTS namespaces, no capabilities. bwrap itself runs with an empty
//     environment; the command's comes as --setenv.
//   - landlock: for machines where user namespaces are blocked (GitHub's ubuntu-24.04
//     runners). The runner re-executes itself as a small helper (see RunHelperIfRequested),
//     which reads its config from a memfd (never argv: /proc/<pid>/cmdline is readable by
//     all), and grants reads to the view only and writes to the workspace and a private
//     temp directory; a seccomp filter denies what Landlock cannot (unix sockets, UDP and
//     TCP Fast Open without network, socket families outside an allow-list, extended
//     attributes, set-user-ID bits), and the helper makes the command's first process a
//     child subreaper, so that its daemons stay its own (see tools/exec's reaper). See Gaps
//     for what stays open.
//   - none: the command runs as it is, with a warning.
//
// Each mode is a row of Modes (modes.go) that carries its name, help, probe and place in
// auto's order, and a file of its own: its wrapper, probe and gaps (bwrap_linux.go,
// landlock_linux.go, none.go).
//
// Both set resource limits (see DefaultLimits), where they cost least and cannot be raced:
// the Landlock helper calls setrlimit before it executes the command; bwrap holds the
// sandbox's first process (--block-fd) until the runner has applied them with prlimit(2),
// which spares bwrap a helper process in front. Each command has cgroups of its own while
// it runs (pids, and memory for the command as a whole, where the runner can create them),
// which a workspace keeps, emptied, for its next command (see cgroupPool); on cgroup v1
// bwrap is forked from inside them and the Landlock helper moves only its own thread in,
// sparing the RCU grace period that moving a whole process waits for (see
// cgroups.forkInside). Landlock's private temp directory is likewise emptied for the next
// command rather than made anew (see tempPool).
//
// The helper runs from the init of an internal package that imports only the standard
// library and x/sys, before the runner's other packages initialise (see
// internal/confine), so re-executing the runner costs about as much as starting a small Go
// program. BenchmarkSandboxedStep (make bench-sandbox) sets a run_in_terminal call of
// `true` against the same bwrap argv, or helper config, started bare in the same loop; on
// a shared 2-core VM the runner adds about 0.6 ms to either (bwrap's namespaces and mounts
// themselves take ~5 ms, the helper ~5 ms). As root, Landlock's hiding of /etc/shadow
// costs a grant per entry of /etc, ~1.8 ms.
//
// Wrapped commands must be released (Release, see tools/exec.Releaser) once finished.
package sandbox

import "github.com/agentrunner/runner/tools"

// DefaultLimits are the resource limits of a sandboxed command when the task sets none.
// Each applies to every process of the command (except Processes, see below):
//
//   - CPUSeconds 300 (RLIMIT_CPU): the longest timeout a call can ask for. At the limit the
//     process gets SIGXCPU, a second later SIGKILL.
//   - MemoryMB 4096 (RLIMIT_DATA): heap and private writable mappings. Not RLIMIT_AS:
//     Go, V8 and the JVM reserve far more address space than they use, and would not start.
//   - FileSizeMB 1024 (RLIMIT_FSIZE): the largest file a process may write (SIGXFSZ).
//   - Processes 512 (RLIMIT_NPROC): counts all the processes of the user, and the kernel
//     does not enforce it for root; when running as root each command also gets a pids
//     cgroup of its own with pids.max = Processes if the machine lets it (see Probe's
//     reason), in which bwrap itself, forked inside on cgroup v1, counts as one. Otherwise
//     a fork bomb is contained only by bwrap's PID namespace and the call's timeout, which
//     kills the whole process group or namespace.
//
// Core dumps are disabled (RLIMIT_CORE 0) so that a crash does not write into the workspace.
var DefaultLimits = tools.Limits{CPUSeconds: 300, MemoryMB: 4096, FileSizeMB: 1024, Processes: 512}

// EffectiveLimits returns l with its zero fields taken from DefaultLimits.
func EffectiveLimits(l tools.Limits) tools.Limits {
	if l.CPUSeconds <= 0 {
		l.CPUSeconds = DefaultLimits.CPUSeconds
	}
	if l.MemoryMB <= 0 {
		l.MemoryMB = DefaultLimits.MemoryMB
	}
	if l.FileSizeMB <= 0 {
		l.FileSizeMB = DefaultLimits.FileSizeMB
	}
	if l.Processes <= 0 {
		l.Processes = DefaultLimits.Processes
	}
	return l
}

// How memory_mb applies, as Gaps and the probe's reason say it.
const (
	MemoryPerCommand = "for all of a command's processes together (memory cgroup)"
	MemoryPerProcess = "per process (RLIMIT_DATA; no memory cgroup here, so several processes may use more together)"
)
