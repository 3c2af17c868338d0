package scenario

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/tools"
	toolexec "github.com/agentrunner/runner/tools/exec"
	"github.com/agentrunner/runner/tools/exec/container"
)

// Where an external agent's way to runner's endpoint appears inside the task's container:
// runner's own executable (the forwarder), the endpoint's Unix socket and the files of
// the task's directory its command names ($TASK_DIR), each bound in read-only.
const (
	boxDir     = "/.runner-agent"
	boxRunner  = boxDir + "/runner"
	boxSocket  = boxDir + "/endpoint.sock"
	boxTaskDir = boxDir + "/task"
)

// lookTimeout bounds finding the agent's program in the container.
const lookTimeout = 30 * time.Second

// ErrNotStatic is why runner cannot forward the endpoint into a container: its
// executable needs a dynamic loader (a cgo build) the image may not have.
var ErrNotStatic = errors.New("runner's executable is not a static Linux program")

// agentBox is runner's endpoint for an external agent in the task's container, opened
// before the container starts, since what is bound into a container is decided then. A
// container has a network namespace of its own whether or not network: is true, where
// the host's loopback is out of reach, so the agent reaches the endpoint as under bwrap
// without network: runner re-executed in front of its program listens on
// 127.0.0.1:41471 inside and carries each connection to the Unix socket (package
// forward).
type agentBox struct {
	l      net.Listener
	dir    string // the socket's host directory
	mounts []container.Mount
}

// openAgentBox listens on a Unix socket in a fresh host directory and lists what the
// container must bind: the socket, runner's executable and the agent's task files.
func (r *runState) openAgentBox() (*agentBox, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find runner's executable for the forwarder: %w", err)
	}
	if err := staticELF(self); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "runner-endpoint-")
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	sock := filepath.Join(dir, "endpoint.sock")
	l, err := net.Listen("unix", sock)
	if err == nil {
		// The container's user may not be runner's (user:, or the image's USER): the
		// socket itself is bound in, so anyone there may connect; on the host its
		// directory stays 0700. The per-run token is what guards the endpoint.
		err = os.Chmod(sock, 0o666)
	}
	if err != nil {
		if l != nil {
			_ = l.Close() // a listener: Close loses no data
		}
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	mounts := []container.Mount{{Host: self, Path: boxRunner}, {Host: sock, Path: boxSocket}}
	for _, f := range r.t.Agent.Files {
		if rel, err := filepath.Rel(r.t.Agent.Dir, f); err == nil && filepath.IsLocal(rel) {
			mounts = append(mounts, container.Mount{Host: f, Path: path.Join(boxTaskDir, filepath.ToSlash(rel))})
		}
	}
	return &agentBox{l: l, dir: dir, mounts: mounts}, nil
}

// close stops listening and removes the socket's directory.
func (b *agentBox) close() {
	_ = b.l.Close() // a listener, maybe closed already by the endpoint: nothing to lose
	_ = os.RemoveAll(b.dir)
}

// staticELF checks that the executable at name runs in any Linux image: an ELF file
// with no program interpreter (CGO_ENABLED=0, as the Makefile builds runner).
func staticELF(name string) error {
	f, err := elf.Open(name)
	if err != nil {
		return fmt.Errorf("%w: %s cannot run in the task's container as the endpoint's forwarder (%v)", ErrNotStatic, name, err)
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%w: %s is dynamically linked (built with cgo), so it cannot run in the task's container as the endpoint's forwarder; build runner with CGO_ENABLED=0 (make build does)", ErrNotStatic, name)
		}
	}
	return nil
}

// lookScript prints the first executable file $1 in an absolute directory of the
// container's PATH, as kinds.Find looks on the host. (Not command -v: busybox's sh
// answers a bare name for its own applets.)
const lookScript = `IFS=:; for d in $PATH; do case $d in /*) [ -f "$d/$1" ] && [ -x "$d/$1" ] && { echo "$d/$1"; exit 0; };; esac; done; exit 1`

// containerProgram finds the kind's program on the PATH of the task's container (the
// image's, or the task's env:): an installed agent lives in the image, as in Harbor and
// Terminal-Bench; the host's PATH and $RUNNER_AGENTS_DIR are not looked at.
func containerProgram(ctx context.Context, aw *tools.Workspace, k kinds.Kind) (string, error) {
	if strings.Contains(k.Program, "/") {
		return k.Program, nil
	}
	// The rows' program names are plain words (sh, claude, codex): nothing to quote.
	res, err := toolexec.RunShell(ctx, aw, "set -- "+k.Program+"; "+lookScript, lookTimeout)
	if err != nil {
		return "", fmt.Errorf("look for %s in the container: %w", k.Program, err)
	}
	found := strings.TrimSpace(res.Stdout)
	if i := strings.LastIndexByte(found, '\n'); i >= 0 {
		found = found[i+1:]
	}
	if res.ExitCode == 0 && strings.HasPrefix(found, "/") {
		return found, nil
	}
	hint := ""
	if k.Install != "" {
		hint = "; install it in the image (" + k.Install + ", which needs node there)"
	}
	return "", fmt.Errorf("%w: %s (%s) is not on the PATH of the task's container%s", kinds.ErrNotInstalled, k.Program, k.Name, hint)
}
