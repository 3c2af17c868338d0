//go:build linux

package sandbox

// Attacks from issue 16 B, each run in every sandbox that works here, with --sandbox none
// as the control that shows the attack works unconfined.

import (
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// kernelAttack builds testdata/kernel_attack.c into dir, or skips without gcc.
func kernelAttack(t *testing.T, dir string) string {
	t.Helper()
	gcc, err := osexec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed: cannot build the attack program")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "kernel_attack.c"))
	assert.NilError(t, err)
	bin := filepath.Join(dir, "kernel_attack")
	out, err := osexec.Command(gcc, "-O", "-o", bin, src).CombinedOutput()
	assert.NilError(t, err, string(out))
	return bin
}

// io_uring's IORING_OP_SOCKET makes a socket without socket(2), which the Landlock
// helper's seccomp rule on sockets never sees: a UDP datagram reached the host's loopback
// with network: false.
func TestIOUringSocketCannotReachTheHost(t *testing.T) {
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	assert.NilError(t, err)
	defer func() { _ = udp.Close() }() // test cleanup: its error does not change what the test checked
	got := make(chan struct{}, 16)
	go func() {
		buf := make([]byte, 16)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			got <- struct{}{}
		}
	}()
	port := udp.LocalAddr().(*net.UDPAddr).Port
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			kernelAttack(t, ws.Dir())
			res := run(t, ws, fmt.Sprintf("./kernel_attack uring %d", port), 10)
			reached := false
			select {
			case <-got:
				reached = true
			case <-time.After(200 * time.Millisecond):
			}
			if sb.name == ModeNone {
				if strings.Contains(res.Output, "io_uring_setup") {
					t.Skipf("io_uring is off on this machine: %s", res.Output)
				}
				assert.Check(t, reached && strings.Contains(res.Output, "SENT"), "the control: %s", res.Output)
				return
			}
			assert.Check(t, !reached, "a datagram reached the host through io_uring: %s", res.Output)
			assert.Check(t, !strings.Contains(res.Output, "SENT"), res.Output)
		})
	}
}

// Commands stayed in the runner's session keyring, where a CI step may have put a token:
// the agent read it with keyctl.
func TestSessionKeyringIsOutOfReach(t *testing.T) {
	m := marker()
	secret := "keyring-secret-" + m
	id, err := unix.AddKey("user", "runner-test-"+m, []byte(secret), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Skipf("cannot add a key to the session keyring here: %v", err)
	}
	t.Cleanup(func() { _, _ = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0) })
	// Readable by the user, not only its possessor: Go may fork the command from a thread
	// other than the one whose session keyring holds the key, and a CI's keys may be so.
	const possessorAll, userViewRead = 0x3f000000, 0x00030000
	_, err = unix.KeyctlInt(unix.KEYCTL_SETPERM, id, possessorAll|userViewRead, 0, 0)
	assert.NilError(t, err)
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			kernelAttack(t, ws.Dir())
			res := run(t, ws, fmt.Sprintf("./kernel_attack key %d; grep -c runner-test-%s /proc/keys", id, m), 10)
			if sb.name == ModeNone {
				assert.Check(t, is.Contains(res.Output, "KEY:"+secret), "the control: %s", res.Output)
				return
			}
			assert.Check(t, !strings.Contains(res.Output, secret), res.Output)
			assert.Check(t, is.Contains(res.Output, "keyctl: Operation not permitted"))
		})
	}
}

// A user namespace gives a command capabilities over its own mounts and network, and the
// kernel's rarely used code behind them: Docker's default profile denies it, and so do
// the sandboxes. Ordinary work (threads, fork, a Go program) goes on.
func TestNewNamespacesAreDenied(t *testing.T) {
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			kernelAttack(t, ws.Dir())
			res := run(t, ws, "./kernel_attack ns; (sleep 0.1 & wait) && echo forked; python3 -c 'import threading; t = threading.Thread(target=print, args=(\"threaded\",)); t.start(); t.join()'", 10)
			assert.Check(t, is.Contains(res.Output, "forked"), res.Output)
			if _, err := osexec.LookPath("python3"); err == nil {
				assert.Check(t, is.Contains(res.Output, "threaded"), res.Output)
			}
			if sb.name == ModeNone {
				if os.Geteuid() == 0 {
					assert.Check(t, is.Contains(res.Output, "NEWNS"), "the control: %s", res.Output)
				}
				return
			}
			assert.Check(t, is.Contains(res.Output, "unshare: Operation not permitted"), res.Output)
		})
	}
}

// TCP Fast Open connects inside sendto, sendmsg or sendmmsg (MSG_FASTOPEN) on a fresh TCP
// socket, a path on which Landlock's hook on connect(2) never runs: with network: false
// the data reached a listener on the host's loopback. TCP_FASTOPEN_CONNECT defers the
// connection of connect(2) to the first write. The listener counts connections as well as
// data: a kernel whose net.ipv4.tcp_fastopen lacks the client bit (1) sends no data in
// the SYN, and refuses MSG_FASTOPEN altogether, in which case the control says so.
func TestTCPFastOpenCannotReachTheHost(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	assert.NilError(t, err)
	defer func() { _ = ln.Close() }() // test cleanup: its error does not change what the test checked
	var mu sync.Mutex
	var accepted int
	var got []string
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			go func() {
				defer func() { _ = c.Close() }() // test cleanup
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				b, _ := io.ReadAll(c)
				mu.Lock()
				got = append(got, strings.Fields(string(b))...)
				mu.Unlock()
			}()
		}
	}()
	reached := func() (int, []string) {
		time.Sleep(300 * time.Millisecond) // data in flight
		mu.Lock()
		defer mu.Unlock()
		n, g := accepted, got
		accepted, got = 0, nil
		return n, g
	}
	port := ln.Addr().(*net.TCPAddr).Port
	fastOpen, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_fastopen")
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			ws := workspace(t, sb.wrapper)
			kernelAttack(t, ws.Dir())
			res := run(t, ws, fmt.Sprintf("./kernel_attack tfo %d", port), 10)
			n, data := reached()
			if sb.name == ModeNone {
				if strings.Contains(res.Output, "sendto: Operation not supported") {
					t.Skipf("TCP Fast Open is off for clients here (net.ipv4.tcp_fastopen = %s): %s", strings.TrimSpace(string(fastOpen)), res.Output)
				}
				assert.Check(t, is.Equal(n, 4), "the control: %s", res.Output)
				assert.Check(t, is.DeepEqual(sorted(data), []string{"TFO-connect", "TFO-sendmmsg", "TFO-sendmsg", "TFO-sendto"}), "the control: %s", res.Output)
				return
			}
			assert.Check(t, is.Equal(n, 0), "%d connections reached the host: %v: %s", n, data, res.Output)
			assert.Check(t, is.Len(data, 0), res.Output)
			assert.Check(t, !strings.Contains(res.Output, "SENT"), res.Output)
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// The socket rule is an allow-list: unix, internet and routing netlink sockets, with or
// without network, so that a family nobody thought of stays closed (vsock reaches the
// hypervisor's host from a VM whatever the network namespace; AF_ALG, AF_PACKET, XDP are
// kernel surface no build needs). Under --sandbox none they open: the control.
func TestSocketFamiliesOutsideTheAllowListAreClosed(t *testing.T) {
	open := []string{"inet-tcp", "inet6-tcp", "netlink-route", "unix-pair"}
	closed := []string{"netlink-diag", "vsock", "alg", "packet", "bluetooth", "xdp"}
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		for _, network := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/network=%v", sb.name, network), func(t *testing.T) {
				ws := workspace(t, sb.wrapper)
				ws.Network = network
				kernelAttack(t, ws.Dir())
				res := run(t, ws, "./kernel_attack families", 10)
				assert.Assert(t, res.Success, res.Output)
				got := map[string]string{}
				for _, line := range strings.Split(res.Output, "\n") {
					if name, what, ok := strings.Cut(line, ": "); ok {
						got[name] = what
					}
				}
				for _, name := range open {
					assert.Check(t, is.Equal(got[name], "ok"), "%s: %s", name, res.Output)
				}
				if sb.name == ModeNone {
					t.Logf("the control, unconfined: %s", res.Output)
					return
				}
				for _, name := range closed {
					assert.Check(t, got[name] == "Address family not supported by protocol" || got[name] == "Protocol not supported",
						"%s: %q: %s", name, got[name], res.Output)
				}
			})
		}
	}
}

// Ordinary work goes on under the socket rules without network: name lookups (which ask
// routing netlink), listening on the loopback, git, a Go build, npm.
func TestOrdinaryWorkUnderTheSocketRules(t *testing.T) {
	steps := []struct{ need, cmd, ok string }{
		{"python3", `python3 -c 'import socket; socket.getaddrinfo("localhost", 80); socket.if_nameindex(); s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print("PY-OK")'`, "PY-OK"},
		{"git", `git init -q . && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && echo GIT-OK`, "GIT-OK"},
		{"go", `printf 'package main\nfunc main() { println("GO-RAN") }\n' > hello.go && go build -o hello hello.go && ./hello`, "GO-RAN"},
		{"npm", `npm init -y >/dev/null && npm install --offline --no-audit --no-fund >/dev/null && test -f package-lock.json && echo NPM-OK`, "NPM-OK"},
	}
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel()
			ws := workspace(t, sb.wrapper)
			for _, s := range steps {
				if _, err := osexec.LookPath(s.need); err != nil {
					t.Logf("%s is not installed", s.need)
					continue
				}
				res := run(t, ws, s.cmd, 300)
				assert.Check(t, is.Contains(res.Output, s.ok), "%s: %s", s.need, res.Output)
			}
		})
	}
}
