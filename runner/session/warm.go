package session

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	toolexec "github.com/agentrunner/runner/tools/exec"
)

// A cold build cache made the README's first command fail on a busy 2-core machine:
// every Go scenario compiled the standard library packages `go test` needs (testing and
// its ~60 dependencies, their vet facts) twice, in the agent's private cache layer and
// again in the verification's, two scenarios at once. Measured on the shared VM at load
// 7-11: a cold `go test` of a one-file package took 18 s; after warming (the step below,
// 17.6 s once) it took 0.3 s; fix-failing-go-test took 57.9 s cold at load 2. The
// task's own packages cannot be compiled ahead: that would run task code before any
// agent on runner's account. So runner builds, once per run and as itself, a module of
// its own that imports what the tasks' Go files import from the standard library.

// toolchain is a row of the table of toolchains whose shared build cache runner warms
// before any scenario (Session.Warm): how to tell that a task uses it, what of the
// task's settings changes what it builds (tasks that agree warm together) and the
// warming itself. Go is the one whose cold start costs minutes; pip and npm fetch
// from the network, which a scenario's commands do not get by default.
type toolchain struct {
	name string
	// cacheDirs are its entries in the shared cache (XDG_CACHE_HOME): a task that does
	// not use the toolchain gets a layer without them (CacheSkip).
	cacheDirs []string
	// uses reports whether the task builds with the toolchain.
	uses func(t *task.Task) bool
	// config is the task's environment that changes what the toolchain builds.
	config func(t *task.Task) map[string]string
	// needs lists what the task's own files want built ahead (Go: the standard
	// packages they import).
	needs func(t *task.Task) []string
	// warm builds them in ws, a fresh directory whose commands may write the shared
	// cache, and says what it built.
	warm func(ctx context.Context, ws *tools.Workspace, needs []string) (detail string, err error)
}

var toolchains = []toolchain{{name: "go", cacheDirs: []string{"go-build"}, uses: usesGo, config: goConfig, needs: goImports, warm: warmGo}}

// CacheSkip is what of the shared cache the layers of t's commands leave out: the
// caches of the toolchains t does not use. A layer costs a link per cached file (0.7 ms
// each at load 9 on the 2-core VM): over the warmed Go cache (1,044 files) it made the
// suite's non-Go scenarios 17 s slower in all, for nothing.
func CacheSkip(t *task.Task) []string {
	var skip []string
	for _, tc := range toolchains {
		if !tc.uses(t) {
			skip = append(skip, tc.cacheDirs...)
		}
	}
	return skip
}

// warmTimeout bounds one toolchain's warming: the standard library's test dependencies
// compiled in 18 s at load 10 on 2 cores; a machine at load 40 takes minutes.
const warmTimeout = 10 * time.Minute

// warmGroup is the tasks that warm together: one toolchain, one sandbox, one config.
type warmGroup struct {
	tc    toolchain
	wrap  tools.CommandWrapper
	env   map[string]string
	needs map[string]bool
	tasks int
}

// Warm warms the shared build cache (CacheDir) once for the toolchains the tasks use,
// before any scenario, writing it as runner itself: the code built is runner's (a module
// of its own and the toolchain's standard library), in a sandbox of the tasks' mode with
// the cache writable, as only setup commands otherwise get it. It prints a line before
// and after each toolchain on progress and returns what it did (nil when nothing was to
// warm: no cache, no task that needs it). A failure is reported and costs only time.
func (s *Session) Warm(ctx context.Context, progress io.Writer) *result.Warmup {
	if s.CacheDir == "" || progress == nil {
		return nil
	}
	groups := s.warmGroups()
	if len(groups) == 0 {
		return nil
	}
	start := time.Now()
	w := &result.Warmup{}
	for _, g := range groups {
		what := fmt.Sprintf("%s (%s)", g.tc.name, plural(g.tasks, "task"))
		_, _ = fmt.Fprintf(progress, "runner: warming the build cache %s for %s...\n", s.CacheDir, what) // console output: a failed write has nowhere to be reported
		t0 := time.Now()
		detail, err := g.run(ctx, s.CacheDir)
		done := result.Warmed{Name: g.tc.name, Detail: detail, Tasks: g.tasks, Duration: result.Millis(time.Since(t0))}
		if err != nil {
			done.Error = err.Error()
			_, _ = fmt.Fprintf(progress, "runner: warning: warming the build cache for %s failed after %s (its scenarios build from a colder cache): %v\n", what, seconds(done.Duration), err)
		} else {
			_, _ = fmt.Fprintf(progress, "runner: build cache warmed for %s in %s: %s\n", what, seconds(done.Duration), detail)
		}
		w.Toolchains = append(w.Toolchains, done)
		if ctx.Err() != nil {
			break
		}
	}
	w.Duration = result.Millis(time.Since(start))
	return w
}

func seconds(m result.Millis) string { return fmt.Sprintf("%.1fs", m.Seconds()) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// warmGroups sorts the tasks into what to warm: tasks in a container are left out (it
// does not see the shared cache), as are those whose sandbox did not probe.
func (s *Session) warmGroups() []*warmGroup {
	var groups []*warmGroup
	byKey := map[string]*warmGroup{}
	for _, t := range s.Tasks {
		if t.Environment != nil {
			continue
		}
		wrap, err := s.Sandboxes.Get(t.Sandbox)
		if err != nil {
			continue
		}
		for _, tc := range toolchains {
			if !tc.uses(t) {
				continue
			}
			env := tc.config(t)
			key := tc.name + "\x00" + sandboxName(wrap) + "\x00" + envKey(env)
			g := byKey[key]
			if g == nil {
				g = &warmGroup{tc: tc, wrap: wrap, env: env, needs: map[string]bool{}}
				byKey[key] = g
				groups = append(groups, g)
			}
			g.tasks++
			for _, n := range tc.needs(t) {
				g.needs[n] = true
			}
		}
	}
	return groups
}

func sandboxName(w tools.CommandWrapper) string {
	if w == nil {
		return "none"
	}
	return w.Name()
}

func envKey(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + env[k] + "\x00")
	}
	return b.String()
}

// run warms one group in a directory of runner's own, removed after.
func (g *warmGroup) run(ctx context.Context, cacheDir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, warmTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "runner-warm-"+g.tc.name+"-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temp dir: a leftover harms nothing
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		return "", err
	}
	defer func() { _ = ws.Close() }() // the workspace's handles: Close loses no data
	// The sandbox's default limits: runner's own step, not bound by one task's limits.
	ws.Env, ws.Sandbox, ws.CacheDir = g.env, g.wrap, cacheDir
	ws.CacheWritable = true
	needs := make([]string, 0, len(g.needs))
	for n := range g.needs {
		needs = append(needs, n)
	}
	sort.Strings(needs)
	return g.tc.warm(ctx, ws, needs)
}

// goCommand finds `go` as a command of the task would: a word at the start of a command
// or after a shell operator, followed by one of the subcommands that build.
var goCommand = regexp.MustCompile(`(^|[\s;&|(` + "`" + `])go\s+(build|test|vet|run|install|generate|list)\b`)

// usesGo: the task's setup, command assertions or reference run the go command, or it
// is a Go module (a go.mod in its files) that runs commands of its own (make test). Go
// files alone do not count: a task that only reads them (find a constant) builds nothing.
func usesGo(t *task.Task) bool {
	var commands []string
	commands = append(commands, t.Workspace.Setup...)
	for _, a := range t.Assert {
		if c, ok := a.Spec.(task.CommandCheck); ok {
			commands = append(commands, c.Run)
		}
	}
	for _, c := range t.Reference {
		if s, ok := c.Args["command"].(string); ok {
			commands = append(commands, s)
		}
	}
	for _, c := range commands {
		if goCommand.MatchString(c) {
			return true
		}
	}
	if len(commands) == 0 {
		return false
	}
	for _, files := range []map[string]string{t.Workspace.Files, t.Verify.Files} {
		for p := range files {
			if path.Base(p) == "go.mod" {
				return true
			}
		}
	}
	for _, dir := range []string{t.Workspace.Copy, t.Verify.Copy} {
		if dir == "" {
			continue
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(t.Dir, dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return true
		}
	}
	return false
}

func isGoFile(p string) bool { return strings.HasSuffix(p, ".go") }

// goConfig is what of the task's environment changes what Go builds, and so the cache
// entries its commands look up: the toolchain's own variables (GOFLAGS, CGO_ENABLED,
// GOOS, GOARCH, GOEXPERIMENT...) and PATH, which picks the go binary. Nothing else of
// the task's environment reaches the warming.
func goConfig(t *task.Task) map[string]string {
	env := map[string]string{}
	for k, v := range t.Env {
		if strings.HasPrefix(k, "GO") || strings.HasPrefix(k, "CGO_") || k == "PATH" {
			env[k] = v
		}
	}
	// No toolchain download (the warming has no network anyway), and the module of
	// runner's own needs no module fetched.
	env["GOTOOLCHAIN"], env["GOPROXY"] = "local", "off"
	return env
}

// goImports are the import paths of the task's Go files (inline, copied in, verify
// files, and the reference's written files) that may be standard packages: no dot in
// their first element. warmGo keeps those the toolchain has.
func goImports(t *task.Task) []string {
	seen := map[string]bool{}
	add := func(name string, src []byte) {
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			return
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, "\"`")
			first, _, _ := strings.Cut(p, "/")
			if p != "C" && !strings.Contains(first, ".") && stdPathSafe(p) {
				seen[p] = true
			}
		}
	}
	for _, files := range []map[string]string{t.Workspace.Files, t.Verify.Files} {
		for p, content := range files {
			if isGoFile(p) {
				add(p, []byte(content))
			}
		}
	}
	for _, c := range t.Reference {
		p, _ := c.Args["path"].(string)
		content, _ := c.Args["content"].(string)
		if isGoFile(p) && content != "" {
			add(p, []byte(content))
		}
	}
	walkGo(t, func(p string, src []byte) bool { add(p, src); return true })
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// stdPathSafe: an import path that can be written into the warming module's source as
// it is, and that a package outside the standard library may import (no internal or
// vendor element).
func stdPathSafe(p string) bool {
	if p == "" || len(p) > 200 {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	for _, e := range strings.Split(p, "/") {
		if e == "internal" || e == "vendor" || e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}

// maxWalked bounds the Go files read from a task's copied directories.
const maxWalked = 2000

// walkGo calls fn with each .go file of the task's copied directories (workspace.copy,
// verify.copy) until it returns false.
func walkGo(t *task.Task, fn func(p string, src []byte) bool) {
	n := 0
	for _, rel := range []string{t.Workspace.Copy, t.Verify.Copy} {
		if rel == "" {
			continue
		}
		root := rel
		if !filepath.IsAbs(root) {
			root = filepath.Join(t.Dir, rel)
		}
		stop := false
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || stop {
				return fs.SkipAll
			}
			if d.IsDir() && (d.Name() == "vendor" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != root) {
				return fs.SkipDir
			}
			if d.IsDir() || !d.Type().IsRegular() || !isGoFile(p) {
				return nil
			}
			if n++; n > maxWalked {
				stop = true
				return fs.SkipAll
			}
			src, err := os.ReadFile(p)
			if err == nil && !fn(p, src) {
				stop = true
				return fs.SkipAll
			}
			return nil
		})
		if stop {
			return
		}
	}
}

// warmGo builds, in ws, a module of runner's own whose test imports testing and the
// standard packages the tasks import, with `go test -run ^$`: what a task's first `go
// test` or `go build` would compile of the standard library (packages, their vet facts,
// the test main's dependencies) lands in the shared cache. A second run finds it all
// cached and takes a second.
func warmGo(ctx context.Context, ws *tools.Workspace, needs []string) (string, error) {
	root, err := toolexec.RunShell(ctx, ws, "go env GOROOT", time.Minute)
	if err != nil {
		return "", err
	}
	if root.ExitCode != 0 {
		return "", fmt.Errorf("go env GOROOT: exit %d: %s", root.ExitCode, lastLine(root.Output))
	}
	goroot := strings.TrimSpace(root.Stdout)
	imports := []string{"testing"}
	for _, p := range needs {
		if p == "testing" {
			continue
		}
		// What the toolchain has is standard; anything else is the task's own module.
		if fi, err := os.Stat(filepath.Join(goroot, "src", filepath.FromSlash(p))); err == nil && fi.IsDir() {
			imports = append(imports, p)
		}
	}
	var src strings.Builder
	src.WriteString("package warm\n\nimport (\n")
	for _, p := range imports {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n")
	for name, content := range map[string]string{
		"go.mod":       "module runnerwarm\n",
		"warm.go":      "// Package warm is runner's own: building it warms the shared Go build cache.\npackage warm\n",
		"warm_test.go": src.String(),
	} {
		if err := os.WriteFile(filepath.Join(ws.Dir(), name), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	res, err := toolexec.RunShell(ctx, ws, "go test -run '^$' ./...", warmTimeout)
	switch {
	case err != nil:
		return "", err
	case res.TimedOut:
		return "", fmt.Errorf("go test timed out after %s while %s", warmTimeout, res.Stuck)
	case res.Canceled:
		return "", ctx.Err()
	case res.ExitCode != 0:
		return "", fmt.Errorf("go test: exit %d: %s", res.ExitCode, lastLine(res.Output))
	}
	detail := "testing"
	if n := len(imports) - 1; n > 0 {
		detail += fmt.Sprintf(" and %d more standard package(s) the tasks import", n)
	}
	return detail + " (" + goSettings(ws.Env) + ")", nil
}

// goSettings names the task settings the warming used: "CGO_ENABLED=0, GOFLAGS=-mod=mod",
// or "the default settings".
func goSettings(env map[string]string) string {
	var parts []string
	for _, kv := range strings.Split(strings.TrimSuffix(envKey(env), "\x00"), "\x00") {
		if kv != "" && !strings.HasPrefix(kv, "GOTOOLCHAIN=") && !strings.HasPrefix(kv, "GOPROXY=") {
			parts = append(parts, kv)
		}
	}
	if len(parts) == 0 {
		return "the default settings"
	}
	return strings.Join(parts, ", ")
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
