//go:build linux

package confine

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
)

// inIsolation runs f on a goroutine locked to a thread of its own, which Go discards with
// the goroutine: whatever f restricts stays there.
func inIsolation(f func() error) error {
	done := make(chan error)
	go func() {
		runtime.LockOSThread()                               // never unlocked: the thread ends with the goroutine
		_ = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) // as run does before seccomp
		done <- f()
	}()
	return <-done
}

// Each step of confinement that the kernel refuses is an error: the command never runs.
func TestConfinementFailuresAreErrors(t *testing.T) {
	eperm := func() (uintptr, uintptr, unix.Errno) { return 0, 0, unix.EPERM }
	failSyscall := func(trap, flags uintptr) func() {
		return func() {
			syscall3 = func(tr, a1, a2, a3 uintptr) (uintptr, uintptr, unix.Errno) {
				if tr == trap && (flags == ^uintptr(0) || a3 == flags) {
					return eperm()
				}
				return unix.Syscall(tr, a1, a2, a3)
			}
		}
	}
	failPrctl := func(option int) func() {
		return func() {
			prctl = func(o int, a2, a3, a4, a5 uintptr) error {
				if o == option {
					return unix.EPERM
				}
				return unix.Prctl(o, a2, a3, a4, a5)
			}
		}
	}
	rules := &Rules{Read: []string{"/usr", "/etc/hostname"}, Write: []string{t.TempDir()}}
	landlock := func() error { return restrictThread(rules) }
	seccomp := func() error { return installSeccomp(Seccomp{Sockets: true}) }
	limits := func() error { return ApplyLimits(0, Limits{CPUSeconds: 100}) }
	tests := []struct {
		name   string
		inject func()
		call   func() error
		want   string
	}{
		{"no landlock", failSyscall(unix.SYS_LANDLOCK_CREATE_RULESET, unix.LANDLOCK_CREATE_RULESET_VERSION), landlock, "does not support Landlock"},
		{"ruleset", failSyscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0), landlock, "create ruleset"},
		{"restrict", failSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, ^uintptr(0)), landlock, "restrict"},
		{"add rule", func() {
			syscall6 = func(uintptr, uintptr, uintptr, uintptr, uintptr, uintptr, uintptr) (uintptr, uintptr, unix.Errno) {
				return eperm()
			}
		}, landlock, "grant /usr"},
		{"stat", func() { fstat = func(int, *unix.Stat_t) error { return unix.EIO } }, landlock, "stat /usr"},
		{"no_new_privs", failPrctl(unix.PR_SET_NO_NEW_PRIVS), landlock, "set no_new_privs"},
		{"seccomp no_new_privs", failPrctl(unix.PR_SET_NO_NEW_PRIVS), seccomp, "set no_new_privs"},
		{"seccomp", failPrctl(unix.PR_SET_SECCOMP), seccomp, "install seccomp filter"},
		{"get limit", func() {
			prlimit = func(int, int, *unix.Rlimit, *unix.Rlimit) error { return unix.EPERM }
		}, limits, "get cpu limit"},
		{"set limit", func() {
			prlimit = func(pid, res int, set, get *unix.Rlimit) error {
				if set != nil {
					return unix.EPERM
				}
				return unix.Prlimit(pid, res, set, get)
			}
		}, limits, "set cpu limit"},
		{"bounding set", failPrctl(unix.PR_CAPBSET_DROP), dropCapabilities, "drop capability 0"},
		{"ambient", failPrctl(unix.PR_CAP_AMBIENT), dropCapabilities, "clear ambient capabilities"},
		{"capset", func() {
			capset = func(*unix.CapUserHeader, *unix.CapUserData) error { return unix.EPERM }
		}, dropCapabilities, "drop capabilities"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if os.Geteuid() != 0 && (tc.name == "bounding set" || tc.name == "ambient" || tc.name == "capset") {
				t.Skip("capabilities are dropped only as root")
			}
			defer restoreSyscalls()
			tc.inject()
			assert.ErrorContains(t, inIsolation(tc.call), tc.want)
		})
	}
}

// run stops at the first step that fails.
func TestRunStopsAtAFailingStep(t *testing.T) {
	defer restoreSyscalls()
	cfg := Config{Landlock: &Rules{Read: []string{"/usr"}}, Seccomp: Seccomp{Metadata: true}, Limits: Limits{CPUSeconds: 100}}
	for _, step := range []struct {
		want   string
		inject func()
	}{
		{"become a subreaper", func() {
			prctl = func(o int, a2, a3, a4, a5 uintptr) error {
				if o == unix.PR_SET_CHILD_SUBREAPER {
					return unix.EPERM
				}
				return unix.Prctl(o, a2, a3, a4, a5)
			}
		}},
		{"landlock: restrict", func() {
			syscall3 = func(tr, a1, a2, a3 uintptr) (uintptr, uintptr, unix.Errno) {
				if tr == unix.SYS_LANDLOCK_RESTRICT_SELF {
					return 0, 0, unix.EPERM
				}
				return unix.Syscall(tr, a1, a2, a3)
			}
		}},
		{"get cpu limit", func() { prlimit = func(int, int, *unix.Rlimit, *unix.Rlimit) error { return unix.EPERM } }},
		{"drop capabilities", func() { capset = func(*unix.CapUserHeader, *unix.CapUserData) error { return unix.EPERM } }},
		{"install seccomp filter", func() {
			prctl = func(o int, a2, a3, a4, a5 uintptr) error {
				if o == unix.PR_SET_SECCOMP {
					return unix.EPERM
				}
				return unix.Prctl(o, a2, a3, a4, a5)
			}
		}},
	} {
		if step.want == "drop capabilities" && os.Geteuid() != 0 {
			continue
		}
		restoreSyscalls()
		step.inject()
		assert.ErrorContains(t, runIsolated(t, configFD(t, cfg), "/bin/true", "true"), step.want)
	}
}

func TestRunIfRequestedReportsAFailure(t *testing.T) {
	args := os.Args
	defer func() { os.Args, exit = args, os.Exit }()
	os.Args = []string{"runner", Arg, "not-a-descriptor", "/bin/true", "true"}
	code := make(chan int, 1)
	exit = func(c int) { code <- c; panic("exit") }
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		RunIfRequested()
	}()
	<-done
	assert.Equal(t, <-code, Failed)

	os.Args = []string{"runner", "run"}
	RunIfRequested() // not the helper: returns at once
}

func restoreSyscalls() {
	syscall3, syscall6, prctl, prlimit, capset, fstat = unix.Syscall, unix.Syscall6, unix.Prctl, unix.Prlimit, unix.Capset, unix.Fstat
}
