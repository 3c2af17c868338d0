package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentrunner/runner/tools"
)

// probeMarker is what the self-test command prints when it ran confined.
const probeMarker = "runner-sandbox-ok"

// selfTest runs one command through w in a scratch workspace: the only reliable way to know
// that namespaces or Landlock work here. hint is added to a failure's message. A success is
// remembered per machine (see probecache_linux.go).
func selfTest(ctx context.Context, w tools.CommandWrapper, hint string) error {
	entry := probeCacheEntry(w) // the key is computed once: stats and sysctl reads
	if probeCached(entry) {
		return nil
	}
	if err := runSelfTest(ctx, w, hint); err != nil {
		return err
	}
	rememberProbe(entry, w)
	return nil
}

// runSelfTest is selfTest without the cache.
func runSelfTest(ctx context.Context, w tools.CommandWrapper, hint string) error {
	dir, err := os.MkdirTemp("", "runner-probe-")
	if err != nil {
		return fmt.Errorf("self-test: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }() // best effort: a leftover temp file harms nothing
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		return fmt.Errorf("self-test: %w", err)
	}
	defer func() { _ = ws.Close() }() // a directory handle: Close loses no data

	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "echo "+probeMarker+" > probe; cat probe")
	cmd.Dir = ws.Dir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	if err := w.Wrap(cmd, ws); err != nil {
		return fmt.Errorf("self-test: %w", err)
	}
	out, err := cmd.CombinedOutput()
	if r, ok := w.(interface{ Release(*exec.Cmd) }); ok {
		r.Release(cmd)
	}
	if err != nil || !strings.Contains(string(out), probeMarker) {
		return fmt.Errorf("self-test command failed (%v): %s%s", err, strings.TrimSpace(string(out)), hint)
	}
	return nil
}
