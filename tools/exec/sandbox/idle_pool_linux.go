package sandbox

import (
	"sync"

	"github.com/agentrunner/runner/tools"
)

// idlePool keeps what a workspace's commands leave for the next one (their cgroups, see
// cgroupsFor; Landlock's temp directories, see privateTemp), at most maxIdlePerWorkspace
// of them, and discards the rest, and all of it when the workspace closes.
type idlePool[T any] struct {
	mu      sync.Mutex
	idle    []T
	closed  bool
	discard func(T)
}

// maxIdlePerWorkspace bounds what a workspace keeps: its commands rarely overlap.
const maxIdlePerWorkspace = 4

// workspacePool returns ws's pool under key, made on first use and emptied when ws closes.
func workspacePool[T any](l *launcher, ws *tools.Workspace, key any, discard func(T)) *idlePool[T] {
	l.poolMu.Lock()
	defer l.poolMu.Unlock()
	if p, ok := ws.Value(key).(*idlePool[T]); ok {
		return p
	}
	p := &idlePool[T]{discard: discard}
	ws.SetValue(key, p)
	ws.OnClose(p.close)
	return p
}

// take returns the item kept last that fit accepts, discarding those it does not (checked
// here, when it counts: a kept item may have been changed from outside), or false.
func (p *idlePool[T]) take(fit func(T) bool) (T, bool) {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			var none T
			return none, false
		}
		x := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if fit(x) {
			return x, true
		}
		p.discard(x)
	}
}

// put keeps x for a later command, or discards it if the pool is closed or full.
func (p *idlePool[T]) put(x T) {
	p.mu.Lock()
	keep := !p.closed && len(p.idle) < maxIdlePerWorkspace
	if keep {
		p.idle = append(p.idle, x)
	}
	p.mu.Unlock()
	if !keep {
		p.discard(x)
	}
}

// close discards what is kept; what is in use is discarded when put back.
func (p *idlePool[T]) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, x := range idle {
		p.discard(x)
	}
}
