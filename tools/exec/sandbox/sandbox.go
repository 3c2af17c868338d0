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

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/agentrunner/runner/tools"
)

// Sandbox modes, as a task file's sandbox key spells them.
const (
	ModeAuto     = "auto"
	ModeBwrap    = "bwrap"
	ModeLandlock = "landlock"
	ModeNone     = "none"
)

// Mode is one row of the registry of sandbox modes: the task file's sandbox key, the
// --sandbox flags, their help and messages, and the task schema all read Modes.
type Mode struct {
	Name string
	// Help is the one line the schema and --help show.
	Help string
}

// Modes are the sandbox modes, strongest choice first.
var Modes = []Mode{
	{ModeAuto, "the strongest that works here: bwrap, then landlock, else none with a warning"},
	{ModeBwrap, "bubblewrap: own mount, PID and network namespaces, the view bind-mounted read-only"},
	{ModeLandlock, "Landlock and seccomp applied by a re-executed helper"},
	{ModeNone, "no confinement: commands run as the runner"},
}

// ModeNames lists the names of Modes, in order.
func ModeNames() []string {
	out := make([]string, len(Modes))
	for i, m := range Modes {
		out[i] = m.Name
	}
	return out
}

// ModeChoices is "auto, bwrap, landlock or none", for help and messages.
func ModeChoices() string {
	names := ModeNames()
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ErrUnknownMode is what CheckMode and Probe return for a name not in Modes.
var ErrUnknownMode = errors.New("unknown sandbox mode")

// CheckMode returns nil for a mode in Modes or "" (auto), else an error wrapping
// ErrUnknownMode that lists the modes.
func CheckMode(mode string) error {
	if mode == "" || slices.Contains(ModeNames(), mode) {
		return nil
	}
	return fmt.Errorf("%w %q (want %s)", ErrUnknownMode, mode, ModeChoices())
}

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

// None returns the wrapper that runs commands unconfined.
func None() tools.CommandWrapper { return none{} }

type none struct{}

func (none) Name() string                           { return ModeNone }
func (none) Wrap(*exec.Cmd, *tools.Workspace) error { return nil }

type probeResult struct {
	wrapper tools.CommandWrapper
	reason  string
	err     error
}

// probes caches each mode's probe: the machine does not change during a run, and a probe
// runs a command.
var probes = struct {
	sync.Mutex
	done map[string]probeResult
}{done: map[string]probeResult{}}

// Probe returns the wrapper for mode (one of Modes; "" means auto) and a
// sentence describing the confinement for the run's log. auto takes the first of bwrap and
// landlock that works, and otherwise returns the none wrapper with a warning as the reason;
// an explicit mode that does not work is an error. Each mode is probed once per process,
// by running a command through it.
func Probe(ctx context.Context, mode string) (tools.CommandWrapper, string, error) {
	switch mode {
	case "", ModeAuto:
		var why []string
		for _, m := range []string{ModeBwrap, ModeLandlock} {
			w, reason, err := probeOnce(ctx, m)
			if err == nil {
				return w, reason, nil
			}
			why = append(why, fmt.Sprintf("%s: %v", m, err))
		}
		return none{}, "WARNING: no sandbox works on this machine, commands run unconfined (" + strings.Join(why, "; ") + ")", nil
	case ModeNone:
		return none{}, "sandbox none: commands run unconfined", nil
	case ModeBwrap, ModeLandlock:
		return probeOnce(ctx, mode)
	}
	if err := CheckMode(mode); err != nil {
		return nil, "", err
	}
	return nil, "", fmt.Errorf("sandbox mode %q has no probe", mode) // Modes and this switch disagree
}

func probeOnce(ctx context.Context, mode string) (tools.CommandWrapper, string, error) {
	probes.Lock()
	defer probes.Unlock()
	if r, ok := probes.done[mode]; ok {
		return r.wrapper, r.reason, r.err
	}
	var r probeResult
	switch mode {
	case ModeBwrap:
		r.wrapper, r.reason, r.err = probeBwrap(ctx)
	case ModeLandlock:
		r.wrapper, r.reason, r.err = probeLandlock(ctx)
	}
	if r.err != nil {
		r.err = fmt.Errorf("sandbox %s: %w", mode, r.err)
		r.wrapper = nil
	}
	// A cancelled probe says nothing about the machine: let the next caller try again.
	if ctx.Err() == nil {
		probes.done[mode] = r
	}
	return r.wrapper, r.reason, r.err
}

// How memory_mb applies, as Gaps and the probe's reason say it.
const (
	MemoryPerCommand = "for all of a command's processes together (memory cgroup)"
	MemoryPerProcess = "per process (RLIMIT_DATA; no memory cgroup here, so several processes may use more together)"
)
