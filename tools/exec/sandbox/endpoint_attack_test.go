//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// An external agent under Landlock reaches runner's model endpoint on one loopback port
// (tools.Workspace.EndpointPort); the attack: connect to another host service on the
// loopback. Only the endpoint's port may connect; bash's /dev/tcp does the connecting.
func TestEndpointPortIsTheOnlyTCPWayOut(t *testing.T) {
	listen := func(reached *atomic.Int32) int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		assert.NilError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				reached.Add(1)
				_ = c.Close()
			}
		}()
		return ln.Addr().(*net.TCPAddr).Port
	}
	var endpoint, other atomic.Int32
	ep, op := listen(&endpoint), listen(&other)
	attack := fmt.Sprintf(`for p in %d %d; do if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "port $p connected"; else echo "port $p refused"; fi; done`, ep, op)
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		if sb.name == ModeBwrap {
			continue // its own network: the endpoint comes in as a Unix socket (runner/scenario's tests)
		}
		t.Run(sb.name, func(t *testing.T) {
			endpoint.Store(0)
			other.Store(0)
			ws := workspace(t, sb.wrapper)
			ws.EndpointPort = ep
			res := run(t, ws, "bash -c '"+attack+"'", 10)
			assert.Assert(t, res.Success, res.Output)
			assert.Check(t, is.Contains(res.Output, fmt.Sprintf("port %d connected", ep)))
			if sb.name == ModeNone {
				assert.Check(t, is.Contains(res.Output, fmt.Sprintf("port %d connected", op)), "the control: %s", res.Output)
				return
			}
			assert.Check(t, is.Contains(res.Output, fmt.Sprintf("port %d refused", op)), res.Output)
			assert.Check(t, other.Load() == 0, "the other service was reached: %s", res.Output)
		})
	}
}
