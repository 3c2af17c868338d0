//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

func TestWritesOutsideTheWorkspaceFail(t *testing.T) {
	outside := t.TempDir() // on the host, beside the workspace
	home, err := os.UserHomeDir()
	assert.NilError(t, err)
	targets := map[string]string{
		"sibling temp dir": filepath.Join(outside, "escaped"),
		"system dir":       filepath.Join("/usr/local", "runner-sandbox-test-"+marker()),
		"home dir":         filepath.Join(home, "runner-sandbox-test-"+marker()),
	}
	modes := append(sandboxes(t), confined{name: ModeNone, wrapper: None()})
	for _, sb := range modes {
		for what, target := range targets {
			t.Run(sb.name+"/"+what, func(t *testing.T) {
				t.Cleanup(func() { _ = os.Remove(target) }) // test cleanup: its error does not change what the test checked
				ws := workspace(t, sb.wrapper)
				res := run(t, ws, fmt.Sprintf("echo inside > inside.txt && echo x > %s", target), 5)
				_, statErr := os.Stat(target)
				if sb.name == ModeNone {
					if what != "sibling temp dir" {
						t.Skip("only the sibling temp dir is surely writable without a sandbox")
					}
					// The control: unconfined, the write lands (so the assertion below can fail).
					assert.Assert(t, res.Success, res.Output)
					assert.NilError(t, statErr)
					return
				}
				assert.Assert(t, os.IsNotExist(statErr), "%s exists on the host: %s", target, res.Output)
				if !(sb.name == ModeBwrap && what == "home dir") { // bwrap's home is a private tmpfs
					assert.Assert(t, !res.Success, "write to %s succeeded: %s", target, res.Output)
				}
				b, err := os.ReadFile(filepath.Join(ws.Dir(), "inside.txt"))
				assert.NilError(t, err)
				assert.Equal(t, string(b), "inside\n")
			})
		}
	}
}

func TestNetworkIsCutUnlessAllowed(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	assert.NilError(t, err)
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello from the host\n"))
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && head -n1 <&3'`, port)

	for _, sb := range sandboxes(t) {
		for _, network := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/network=%v", sb.name, network), func(t *testing.T) {
				ws := workspace(t, sb.wrapper)
				ws.Network = network
				res := run(t, ws, connect, 5)
				if network {
					assert.Assert(t, res.Success, res.Output)
					assert.Check(t, is.Contains(res.Output, "hello from the host"))
				} else {
					assert.Assert(t, !res.Success, "connected: %s", res.Output)
					assert.Check(t, !strings.Contains(res.Output, "hello from the host"))
				}
			})
		}
	}
}

func TestForkBombIsContained(t *testing.T) {
	if os.Geteuid() == 0 {
		if _, err := findCgroups(); err != nil {
			// Nothing would cap the bomb but the timeout: it could exhaust the machine's pids.
			t.Skipf("running as root without a pids cgroup (%v): RLIMIT_NPROC is not enforced for root", err)
		}
	}
	bombs := []struct {
		name    string
		command string // %s is the marker
		timeout int
	}{
		// Each copy forks until a fork fails, which ends dash: the wave dies at the cap.
		{name: "shell", command: "bomb() { while :; do bomb & done; }; bomb; : %s", timeout: 3},
		// Each copy keeps trying: only the timeout ends it.
		{name: "persistent", command: "python3 -c 'import os\nwhile True:\n  try: os.fork()\n  except OSError: pass' %s", timeout: 2},
	}
	for _, sb := range sandboxes(t) {
		for _, b := range bombs {
			t.Run(sb.name+"/"+b.name, func(t *testing.T) {
				ws := workspace(t, sb.wrapper)
				ws.Limits.Processes = 30
				m := marker()
				start := time.Now()
				res := run(t, ws, fmt.Sprintf(b.command, m), b.timeout)
				elapsed := time.Since(start)
				assert.Assert(t, !res.Success)
				t.Logf("%s after %s: %.100q", res.Error.Code, elapsed, res.Output)
				assert.Assert(t, elapsed < time.Duration(b.timeout+3)*time.Second, "took %s", elapsed)
				eventuallyNone(t, m)

				// The runner and the sandbox still work.
				res = run(t, ws, "echo alive", 5)
				assert.Equal(t, res.Output, "alive\n[exit code 0]")
			})
		}
	}
}

// secretChild names the sandbox mode in which a re-executed test binary plays the runner.
const secretChild = "SANDBOX_TEST_SECRET_CHILD"

func TestSecretsOfTheRunnerAreInvisible(t *testing.T) {
	const secret = "sk-runner-secret"
	if mode := os.Getenv(secretChild); mode != "" {
		// The runner, started with the secret in its environment as in CI. The command
		// reads its own environment and its parent's, the runner's, through /proc.
		w, _, err := Probe(context.Background(), mode)
		assert.NilError(t, err)
		res := run(t, workspace(t, w), "env; echo; tr '\\0' '\\n' < /proc/$PPID/environ", 5)
		fmt.Printf("OUTPUT<<%s>>OUTPUT\n", res.Output)
		return
	}
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			runner := osexec.Command(os.Args[0], "-test.run=^TestSecretsOfTheRunnerAreInvisible$", "-test.count=1")
			runner.Env = append(os.Environ(), secretChild+"="+sb.name, "OPENAI_API_KEY="+secret)
			out, err := runner.CombinedOutput()
			assert.NilError(t, err, string(out))
			_, output, _ := strings.Cut(string(out), "OUTPUT<<")
			output, _, _ = strings.Cut(output, ">>OUTPUT")
			assert.Check(t, is.Contains(output, "TERM=dumb"))
			if sb.name == ModeNone {
				// The control: unconfined, the runner's environment is readable.
				assert.Check(t, is.Contains(output, secret))
				return
			}
			assert.Check(t, !strings.Contains(output, secret), output)
		})
	}
}

func TestCredentialDirectoriesAreUnreadable(t *testing.T) {
	home := t.TempDir()
	files := map[string]string{
		".ssh/id_ed25519":             "ssh-secret",
		".aws/credentials":            "aws-secret",
		".config/gcloud/adc.json":     "gcloud-secret",
		".docker/config.json":         "docker-secret",
		".kube/config":                "kube-secret",
		".npmrc":                      "npm-secret",
		".cargo/credentials.toml":     "cargo-secret",
		".cargo/bin/mytool":           "#!/bin/sh\necho tool-runs\n",
		".config/other/settings.json": "not a secret",
	}
	for rel, content := range files {
		p := filepath.Join(home, rel)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(content), 0o755))
	}
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			// A wrapper of the same kind that treats home as the runner's home directory.
			w := withHomes(sb.wrapper, home)
			ws := workspace(t, w)
			ws.Env = map[string]string{"PATH": filepath.Join(home, ".cargo/bin") + ":/usr/bin:/bin"}
			var cmd strings.Builder
			for rel := range files {
				fmt.Fprintf(&cmd, "cat %s/%s 2>/dev/null; ", home, rel)
			}
			cmd.WriteString("echo; mytool")
			res := run(t, ws, cmd.String(), 5)
			assert.Assert(t, res.Success, res.Output)
			assert.Check(t, !strings.Contains(res.Output, "-secret"), res.Output)
			assert.Check(t, is.Contains(res.Output, "tool-runs"))
			// Both hide the whole home but the toolchains on PATH.
			assert.Check(t, !strings.Contains(res.Output, "not a secret"), res.Output)
		})
	}
}

// A credential file that appears in a toolchain directory bound into the sandbox
// (~/.cargo/credentials.toml after a `cargo login` on the host) while a scenario runs is
// hidden from the next command, and one that goes away stops being masked.
func TestCredentialCreatedMidScenarioIsHidden(t *testing.T) {
	home := t.TempDir()
	tool := filepath.Join(home, ".cargo/bin/mytool")
	assert.NilError(t, os.MkdirAll(filepath.Dir(tool), 0o755))
	assert.NilError(t, os.WriteFile(tool, []byte("#!/bin/sh\necho tool-runs\n"), 0o755))
	creds := filepath.Join(home, ".cargo/credentials.toml")
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, withHomes(sb.wrapper, home))
			ws.Env = map[string]string{"PATH": filepath.Dir(tool) + ":/usr/bin:/bin"}
			command := "cat " + creds + " 2>/dev/null; mytool"
			res := run(t, ws, command, 5)
			assert.Assert(t, res.Success, res.Output)
			assert.NilError(t, os.WriteFile(creds, []byte("cargo-secret"), 0o600))
			res = run(t, ws, command, 5)
			assert.Check(t, !strings.Contains(res.Output, "cargo-secret"), res.Output)
			assert.Check(t, is.Contains(res.Output, "tool-runs"))
			assert.NilError(t, os.Remove(creds))
			res = run(t, ws, command, 5)
			assert.Check(t, res.Success, res.Output)
			assert.Check(t, is.Contains(res.Output, "tool-runs"))
		})
	}
}

// withHomes returns a copy of a probed wrapper whose home directories are homes.
func withHomes(w tools.CommandWrapper, homes ...string) tools.CommandWrapper {
	switch s := w.(type) {
	case *bwrapSandbox:
		return &bwrapSandbox{launcher: &launcher{cgroup: s.cgroup, homes: homes}, bwrap: s.bwrap}
	case *landlockSandbox:
		c := *s
		c.launcher = &launcher{cgroup: s.cgroup, homes: homes}
		return &c
	}
	panic(fmt.Sprintf("unexpected wrapper %T", w))
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name    string
		limits  tools.Limits
		command string
		code    int
		output  string
	}{
		{
			name:    "cpu",
			limits:  tools.Limits{CPUSeconds: 1},
			command: "while :; do :; done",
			code:    128 + 24, // SIGXCPU
			output:  "SIGXCPU, CPU time limit exceeded",
		},
		{
			name:    "memory",
			limits:  tools.Limits{MemoryMB: 64},
			command: `python3 -c 'b = bytearray(256 << 20); print("allocated")'`,
			code:    1,
			output:  "MemoryError",
		},
		{
			name:    "file size",
			limits:  tools.Limits{FileSizeMB: 1},
			command: "head -c 2000000 /dev/zero > big",
			code:    128 + 25, // SIGXFSZ
			output:  "SIGXFSZ, file size limit exceeded",
		},
	}
	for _, sb := range sandboxes(t) {
		for _, tc := range tests {
			t.Run(sb.name+"/"+tc.name, func(t *testing.T) {
				ws := workspace(t, sb.wrapper)
				ws.Limits = tc.limits
				start := time.Now()
				res := run(t, ws, tc.command, 20)
				assert.Equal(t, exitCode(res), tc.code, res.Output)
				assert.Check(t, is.Contains(res.Output, tc.output))
				assert.Assert(t, time.Since(start) < 10*time.Second)
			})
		}
	}
}

func TestTimeoutKillsEverythingInTheSandbox(t *testing.T) {
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			m := marker()
			start := time.Now()
			res := run(t, ws, fmt.Sprintf("sleep 100 %s & echo started; sleep 100 %s", m, m), 1)
			assert.Equal(t, res.Error.Code, tools.CodeTimeout, res.Output)
			assert.Check(t, is.Contains(res.Output, "started\n"))
			assert.Assert(t, time.Since(start) < 4*time.Second)
			eventuallyNone(t, m)
		})
	}
}

func TestPrivateTempAndRelease(t *testing.T) {
	hostFile := filepath.Join(os.TempDir(), "runner-sandbox-visible-"+marker())
	assert.NilError(t, os.WriteFile(hostFile, []byte("host tmp"), 0o644))
	t.Cleanup(func() { _ = os.Remove(hostFile) })
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			res := run(t, ws, `t=${TMPDIR:-/tmp}; echo private > "$t/scratch" && cat "$t/scratch" && echo "$t"`, 5)
			assert.Assert(t, res.Success, res.Output)
			tmp := strings.Split(res.Output, "\n")[1]
			// Whatever the command wrote to its temp dir is gone from the host.
			_, err := os.Stat(filepath.Join(tmp, "scratch"))
			assert.Check(t, os.IsNotExist(err), "%s/scratch survived", tmp)
			if sb.name == ModeBwrap {
				res = run(t, ws, "cat "+hostFile, 5)
				assert.Check(t, !res.Success, "the host's /tmp is visible: %s", res.Output)
			}
		})
	}
}

func TestCommandsHaveNoCapabilities(t *testing.T) {
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			// No capabilities, and no_new_privs so that no execve (setuid, file caps, or
			// root's own) can give any back.
			res := run(t, workspace(t, sb.wrapper), "grep -E '^(CapPrm|CapEff|NoNewPrivs)' /proc/self/status", 5)
			assert.Assert(t, res.Success, res.Output)
			assert.Check(t, is.Regexp(`CapPrm:\s+0+\n`, res.Output))
			assert.Check(t, is.Regexp(`CapEff:\s+0+\n`, res.Output))
			assert.Check(t, is.Regexp(`NoNewPrivs:\s+1\n`, res.Output))
		})
	}
}

// The run's shared cache is visible, read-only, inside every sandbox, even inside the home
// that bwrap masks; the workspace's layer over it is writable and lasts between commands;
// a setup command (CacheWritable) writes the cache itself.
func TestSharedCacheDirUnderAWritableLayer(t *testing.T) {
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			home, err := os.UserHomeDir()
			assert.NilError(t, err)
			// Inside the home, as the default ~/.cache/runner is: bwrap masks the home.
			cache, err := os.MkdirTemp(home, ".runner-cache-test-")
			assert.NilError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(cache) })
			ws := workspace(t, sb.wrapper)
			ws.CacheDir = cache
			setup := ws.View()
			setup.CacheWritable = true
			res := run(t, setup, `echo warm > "$XDG_CACHE_HOME/entry" && echo "$XDG_CACHE_HOME"`, 5)
			assert.Assert(t, res.Success, res.Output)
			assert.Check(t, is.Contains(res.Output, cache))
			b, err := os.ReadFile(filepath.Join(cache, "entry"))
			assert.NilError(t, err)
			assert.Equal(t, string(b), "warm\n")

			res = run(t, ws, `cat "$XDG_CACHE_HOME/entry"; echo mine > "$XDG_CACHE_HOME/new" && echo wrote; touch `+cache+`/direct || echo refused`, 5)
			assert.Check(t, is.Contains(res.Output, "warm"))
			assert.Check(t, is.Contains(res.Output, "wrote"))
			assert.Check(t, is.Contains(res.Output, "refused"))
			res = run(t, ws, `cat "$XDG_CACHE_HOME/new"`, 5)
			assert.Check(t, is.Contains(res.Output, "mine"), "the layer lasts between commands")
			_, err = os.Stat(filepath.Join(cache, "new"))
			assert.Check(t, os.IsNotExist(err))
		})
	}
}
