//go:build linux

package sandbox

import (
	"os"
	osexec "os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec"
)

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

// BenchmarkSandboxedStep sets a run_in_terminal call of `true` against its reference, the
// same confinement started bare, alternating the two in one loop so that both see the same
// load on a shared machine:
//
//   - bwrap: the very argv the runner computes for the call (mounts, namespaces,
//     environment, command), exec'd directly, with no cgroup and none of the runner's work;
//   - landlock: the helper re-executed with the config the runner computes for the call,
//     without cgroups, private temp directory or any of the runner's work.
//
// It reports the medians per call: step-ms (the runner's), bare-ms (the reference's),
// gap-ms (the median of the per-iteration differences) and ratio (step over bare); and
// the CPU time of this process alone per call, step-cpu-ms and bare-cpu-ms: the runner's
// own work, which a loaded machine inflates less than wall time. (Not its children's: the
// runner reaps the sandbox's first process, which bare bwrap leaves a zombie, and would be
// charged with the namespace's teardown.)
func BenchmarkSandboxedStep(b *testing.B) {
	for _, sb := range sandboxes(b) {
		b.Run(sb.name, func(b *testing.B) {
			ws := workspace(b, sb.wrapper)
			bare := bareStep(b, sb.wrapper, ws)
			var steps, bares, gaps, stepCPU, bareCPU []time.Duration
			i := 0
			for b.Loop() {
				var step, ref time.Duration
				timeStep := func() {
					t, cpu := time.Now(), cpuTime()
					if res := run(b, ws, "true", 10); !res.Success {
						b.Fatal(res.Output)
					}
					step = time.Since(t)
					stepCPU = append(stepCPU, cpuTime()-cpu)
				}
				timeBare := func() {
					t, cpu := time.Now(), cpuTime()
					bare()
					ref = time.Since(t)
					bareCPU = append(bareCPU, cpuTime()-cpu)
				}
				if i%2 == 0 { // alternate the order: neither always follows the other
					timeStep()
					timeBare()
				} else {
					timeBare()
					timeStep()
				}
				i++
				steps, bares, gaps = append(steps, step), append(bares, ref), append(gaps, step-ref)
			}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			b.ReportMetric(ms(median(steps)), "step-ms")
			b.ReportMetric(ms(median(bares)), "bare-ms")
			b.ReportMetric(ms(median(gaps)), "gap-ms")
			b.ReportMetric(float64(median(steps))/float64(median(bares)), "ratio")
			b.ReportMetric(ms(median(stepCPU)), "step-cpu-ms")
			b.ReportMetric(ms(median(bareCPU)), "bare-cpu-ms")
		})
	}
}

// cpuTime is this process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano())
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// bareStep returns the reference run of `sh -c true` for w (see BenchmarkSandboxedStep),
// prepared as run_in_terminal prepares the call: the workspace's environment, its root as
// the working directory.
func bareStep(b *testing.B, w tools.CommandWrapper, ws *tools.Workspace) func() {
	b.Helper()
	cmd := &osexec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "true"}, Env: exec.WorkspaceEnv(ws, nil), Dir: ws.Dir()}
	var argv []string
	var env []string
	var config *os.File
	switch s := w.(type) {
	case *bwrapSandbox:
		argv = append(append([]string{s.bwrap}, s.args(cmd, ws)...), "--", cmd.Path)
		argv = append(argv, cmd.Args[1:]...)
		env = []string{}
	case *landlockSandbox:
		// The config of one wrapped call, minus its cgroups: the helper alone.
		probe := *cmd
		assertNil(b, s.Wrap(&probe, ws))
		cfg, _ := s.configOf(&probe)
		b.Cleanup(func() { s.Release(&probe) })
		cfg.Cgroups = nil
		var err error
		config, err = configFile(cfg)
		assertNil(b, err)
		b.Cleanup(func() { _ = config.Close() }) // test cleanup: its error does not change what the test checked
		argv = append([]string{helperExe, HelperArg, "3", cmd.Path}, cmd.Args...)
		env = probe.Env
	default:
		b.Fatalf("no reference for %s", w.Name())
	}
	return func() {
		c := osexec.Command(argv[0], argv[1:]...)
		c.Env = env
		if config != nil {
			// A fresh descriptor per run: the helper reads its config to the end.
			f, err := os.Open("/proc/self/fd/" + strconv.Itoa(int(config.Fd())))
			assertNil(b, err)
			defer func() { _ = f.Close() }()
			c.ExtraFiles = []*os.File{f}
		}
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

func assertNil(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
