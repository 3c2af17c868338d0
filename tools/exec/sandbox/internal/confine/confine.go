// Package confine is the sandbox helper: the code that runs in the runner re-executed as
// os.Args = [exe, Arg, fd, program, argv...], reads its Config from descriptor fd, confines
// itself (cgroup, Landlock, seccomp, resource limits, capabilities) and executes the
// program in its place with the Config's environment.
//
// The config travels through a descriptor, not argv, and the helper starts with an empty
// environment: /proc/<pid>/cmdline is world-readable and names paths, and the agent's
// variables (LD_PRELOAD) must reach only the confined program, never the helper itself.
//
// It runs from this package's init, as early as Go allows. Go initialises a package as
// soon as its imports are, the first in import-path order, and this one imports only the
// standard library and x/sys: so it runs before the runner's other packages and their
// libraries initialise, which would cost every sandboxed command several milliseconds
// (jsonschema alone compiles its metaschemas in init). It must therefore never import
// anything else, in particular go-landlock, whose psx dependency sorts last.
package confine

import (
	"errors"
	"fmt"
	"os"
	"runtime/coverage"
)

// Arg is the hidden first argument that makes the runner the helper.
const Arg = "__runner-sandbox-exec"

// Failed is the helper's exit status when it cannot confine and start the command, the
// shell's "found but cannot execute".
const Failed = 126

// Config is what the sandbox tells the helper, as JSON read from the descriptor named by
// the argument after Arg.
type Config struct {
	// Env is the confined program's environment.
	Env    []string `json:"env"`
	Limits Limits   `json:"limits"`
	// Cgroups are the cgroup directories (pids, memory) the helper moves itself into.
	Cgroups []string `json:"cgroups,omitempty"`
	// Tmp is the command's private temp directory (removed by the sandbox afterwards).
	Tmp string `json:"tmp,omitempty"`
	// Landlock, when set, are the rules the helper applies.
	Landlock *Rules `json:"landlock,omitempty"`
	// Seccomp are the system calls the helper's filter denies.
	Seccomp Seccomp `json:"seccomp"`
	// CoverDir, in coverage builds (tests, make cover), is where the helper writes its
	// coverage counters before it executes the program: execve would discard them.
	CoverDir string `json:"cover_dir,omitempty"`
}

// Limits are resource limits, with tools.Limits' fields (which converts to it).
type Limits struct {
	CPUSeconds int `json:"cpu_seconds,omitempty"`
	MemoryMB   int `json:"memory_mb,omitempty"`
	FileSizeMB int `json:"file_size_mb,omitempty"`
	Processes  int `json:"processes,omitempty"`
}

// Rules are the Landlock and seccomp rules for one command. Nothing outside Read, List
// and Write can be opened.
type Rules struct {
	// Read are the trees and files the command may read and execute (system and
	// toolchain directories, see Readable).
	Read []string `json:"read"`
	// List are directories the command may only list (on the way to a hidden path).
	List []string `json:"list,omitempty"`
	// Write are the directories the command may write (the workspace, its temp dir).
	Write []string `json:"write"`
	// Network allows TCP connections, UDP and unix sockets.
	Network bool `json:"network,omitempty"`
	// ConnectPorts are the TCP ports the command may connect to without Network (ABI 4+):
	// runner's model endpoint on the loopback, for an external agent.
	ConnectPorts []int `json:"connect_ports,omitempty"`
}

// Seccomp says which system calls the helper's filter denies. Landlock does not cover them:
// it has no right for changing a file's metadata, and before ABI 9 and 10 none for unix
// socket connections or UDP.
type Seccomp struct {
	// Sockets limits socket(2) and socketpair(2) to an allow-list of protocol families
	// (unix, internet, routing netlink): every other family is closed by default.
	Sockets bool `json:"sockets,omitempty"`
	// NoNetwork narrows Sockets for a command without network under Landlock, which rules
	// connect(2) and bind(2) only: no unix sockets (socketpair stays), no internet sockets
	// but TCP, and no TCP Fast Open (MSG_FASTOPEN, TCP_FASTOPEN_CONNECT), which connects
	// inside a send where Landlock's hook on connect never runs: so no connection to a host
	// service's socket, no UDP, no TCP past Landlock.
	NoNetwork bool `json:"no_network,omitempty"`
	// Metadata denies setting extended attributes and set-user/group-ID mode bits: Landlock
	// lets a process change the metadata of any file it owns, which as root is every file.
	Metadata bool `json:"metadata,omitempty"`
	// Kernel denies the kernel interfaces that ordinary builds and tests never use and that
	// reach past the other rules (see KernelDenied): io_uring, whose IORING_OP_SOCKET makes
	// sockets without socket(2); the keyrings, which commands would otherwise share with
	// the runner's session; new namespaces; mounts; eBPF, perf, userfaultfd; modules,
	// kexec, the clock, swap, reboot. Adapted from Docker's default seccomp profile.
	Kernel bool `json:"kernel,omitempty"`
}

// inInit is true while the package's init runs the helper; pending holds the config when
// the helper had to wait for main (see run).
var (
	inInit  bool
	pending *Config
)

func init() {
	inInit = true
	RunIfRequested()
	inInit = false
}

// RunIfRequested turns the process into the helper when it was started as one: it never
// returns then, executing the command or exiting with Failed and a message on stderr.
// Otherwise it returns at once.
func RunIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return
	}
	err := run(os.Args[2:]) // returns only on failure, or when deferred to main
	if err == errDeferred {
		return
	}
	fmt.Fprintf(os.Stderr, "runner sandbox: %v\n", err)
	flushCoverage()
	exit(Failed)
}

// exit is os.Exit (a test's panic in tests).
var exit = os.Exit

// errDeferred is run's answer, in init, for a config with a CoverDir: a coverage build
// registers its counters after every package's init, so the helper then runs from main.
var errDeferred = errors.New("deferred to main for coverage")

// coverDir is the config's CoverDir, once read.
var coverDir string

// flushCoverage writes the helper's coverage counters to coverDir, if any. Outside a
// coverage build it fails, harmlessly.
func flushCoverage() {
	if coverDir != "" {
		_ = coverage.WriteMetaDir(coverDir)
		_ = coverage.WriteCountersDir(coverDir)
	}
}
