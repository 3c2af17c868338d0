//go:build linux

package sandbox

import (
	"crypto/sha256"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

// Issue 16 C1: the agent recompiled Go's testing with Fail() a no-op and wrote it over the
// cached archive in --cache-dir; the hidden go test passed, and so did a later clean run
// on the same cache. Here the agent overwrites a cached entry through the path its
// XDG_CACHE_HOME shows, replaces the cache's directory and adds an entry of its own; the
// shared cache must be unchanged afterwards, and another workspace (the verification,
// another scenario) must see neither.
func TestAgentCannotPoisonTheSharedCache(t *testing.T) {
	for _, sb := range append(sandboxes(t), confined{name: ModeNone, wrapper: None()}) {
		t.Run(sb.name, func(t *testing.T) {
			cache := t.TempDir()
			entry := filepath.Join(cache, "go-build", "ab", "abcd-d")
			assert.NilError(t, os.MkdirAll(filepath.Dir(entry), 0o755))
			assert.NilError(t, os.WriteFile(entry, []byte("honest archive"), 0o644))
			ws := workspace(t, sb.wrapper)
			ws.CacheDir = cache
			res := run(t, ws, `c=$XDG_CACHE_HOME/go-build
cat $c/ab/abcd-d; echo
echo poisoned > $c/ab/abcd-d || echo refused-overwrite
echo poisoned > `+entry+` || echo refused-direct
mkdir -p $c/cd && echo mine > $c/cd/new-d && echo wrote-own-entry
cat $c/cd/new-d`, 10)
			assert.Check(t, is.Contains(res.Output, "honest archive"), "the layer shows the cache: %s", res.Output)
			assert.Check(t, is.Contains(res.Output, "wrote-own-entry"), "the layer takes new entries: %s", res.Output)
			got, err := os.ReadFile(entry)
			assert.NilError(t, err)
			if sb.name == ModeNone {
				// The control: unconfined, the agent writes the cache through the link.
				assert.Check(t, string(got) != "honest archive", "the control: %s", res.Output)
				return
			}
			assert.Check(t, is.Equal(string(got), "honest archive"), res.Output)
			assert.Check(t, is.Contains(res.Output, "refused-overwrite"))
			assert.Check(t, is.Contains(res.Output, "refused-direct"))
			_, err = os.Stat(filepath.Join(cache, "go-build", "cd", "new-d"))
			assert.Check(t, os.IsNotExist(err), "the agent's entry reached the shared cache")

			// The verification opens the workspace anew: a layer of its own.
			verify, err := tools.OpenWorkspace(ws.Dir())
			assert.NilError(t, err)
			defer func() { _ = verify.Close() }() // test cleanup: its error does not change what the test checked
			verify.Sandbox, verify.CacheDir = sb.wrapper, cache
			res = run(t, verify, `cat $XDG_CACHE_HOME/go-build/ab/abcd-d; echo; cat $XDG_CACHE_HOME/go-build/cd/new-d || echo no-agent-entry`, 10)
			assert.Check(t, is.Contains(res.Output, "honest archive"), res.Output)
			assert.Check(t, is.Contains(res.Output, "no-agent-entry"), res.Output)

			// The layer goes with its workspace.
			home, err := ws.CacheHome()
			assert.NilError(t, err)
			_ = ws.Close()
			_, err = os.Stat(home)
			assert.Check(t, os.IsNotExist(err), "layer %s left behind", home)
		})
	}
}

// The attack itself, with the Go toolchain: the agent compiles a variant of a package the
// cache holds (here one without imports, so that a cold cache costs a second, not the
// minutes of the standard library) and copies its archive over the cached one, found with
// go list -export. A setup command (the task's own, CacheWritable) warmed the cache.
func TestGoBuildCacheCannotBePoisoned(t *testing.T) {
	goBin, err := osexec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	for _, sb := range sandboxes(t) {
		t.Run(sb.name, func(t *testing.T) {
			cache := t.TempDir()
			ws := workspace(t, sb.wrapper)
			ws.CacheDir = cache
			ws.Env = map[string]string{"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0", "PATH": filepath.Dir(goBin) + ":/usr/bin:/bin"}
			for name, body := range map[string]string{
				"go.mod":       "module example.com/m\n\ngo 1.21\n",
				"lib/lib.go":   "package lib\n\nfunc Answer() int { return 42 }\n",
				"evil/evil.go": "package lib\n\nfunc Answer() int { return 0 }\n",
			} {
				p := filepath.Join(ws.Dir(), name)
				assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
			}
			setup := ws.View()
			setup.CacheWritable = true
			res := run(t, setup, "go build ./lib && go list -export -f '{{.Export}}' ./lib", 120)
			assert.Assert(t, res.Success, res.Output)
			cached := strings.TrimSpace(strings.Split(strings.TrimSpace(res.Output), "\n")[0])
			assert.Assert(t, strings.HasPrefix(cached, cache), "setup wrote the shared cache: %s", res.Output)
			before := sum(t, cached)

			const attack = `target=$(go list -export -f '{{.Export}}' ./lib)
evil=$(go list -export -f '{{.Export}}' ./evil)
cp "$evil" "$target" && echo POISONED`
			res = run(t, ws, attack, 120)
			assert.Check(t, !strings.Contains(res.Output, "\nPOISONED"), res.Output)
			assert.Check(t, is.Equal(sum(t, cached), before), "the shared cache's archive changed: %s", res.Output)

			verify, err := tools.OpenWorkspace(ws.Dir())
			assert.NilError(t, err)
			defer func() { _ = verify.Close() }()
			verify.Sandbox, verify.CacheDir, verify.Env = sb.wrapper, cache, ws.Env
			res = run(t, verify, "cat $(go list -export -f '{{.Export}}' ./lib) | sha256sum", 120)
			assert.Check(t, is.Contains(res.Output, before), res.Output)

			// The control: with the cache writable, as it was for every command, the
			// same attack lands.
			res = run(t, setup, attack, 120)
			assert.Check(t, is.Contains(res.Output, "POISONED"), res.Output)
			assert.Check(t, sum(t, cached) != before, "the control: %s", res.Output)
		})
	}
}

func sum(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	assert.NilError(t, err)
	return fmt.Sprintf("%x", sha256.Sum256(b))
}
