package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
)

// hostileTaskFiles are task files that once stopped a whole suite (issue 24 D), each
// with the positioned problem it gets now.
var hostileTaskFiles = map[string]struct{ body, want string }{
	// 117 KB; goccy/go-yaml's parser used 1.4 GB on it and the process died.
	"brackets.yaml": {strings.Repeat("[", 60000), "brackets.yaml:1:65: nested more than 64 levels deep"},
	"braces.yaml":   {"name: braces\nprompt: " + strings.Repeat("{a: ", 60000), "braces.yaml:2:261: prompt: nested more than 64 levels deep"},
	"indented.yaml": {blockNesting(200), "indented.yaml:65:65: k0.k1.k2.k3.….k61.k62.k63: nested more than 64 levels deep"},
	// goccy/go-yaml nests this without indentation: 48 KB of it made the parser allocate 795 MB.
	"same-column.yaml": {strings.Repeat("a:\n-\n", 20000), "same-column.yaml:65:1: a.a.a.a.….a.a.a: nested more than 64 levels deep"},
	"flood.yaml":       {"name: flood\nprompt: [" + strings.Repeat("x,", 300000) + "]\n", "flood.yaml:2:100005: prompt: more than 100000 values"},
}

func blockNesting(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i), i)
	}
	return b.String()
}

// hostileSuite writes a suite of one good task and every hostile file, plus a 1 GiB
// (sparse) file, and returns its directory.
func hostileSuite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	good := "name: good\nprompt: Write done.txt.\ntools: [write_file]\nassert:\n  - file_exists: done.txt\n" +
		"reference:\n  - write_file: {path: done.txt, content: ok}\n  - task_complete: {summary: done}\n"
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "good.yaml"), []byte(good), 0o644))
	for name, f := range hostileTaskFiles {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(f.body), 0o644))
	}
	huge := filepath.Join(dir, "huge.yaml")
	assert.NilError(t, os.WriteFile(huge, nil, 0o644))
	assert.NilError(t, os.Truncate(huge, 1<<30))
	return dir
}

// gnuTime is GNU time's path (Debian's package time, which .ci/run installs).
func gnuTime(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("GNU time (/usr/bin/time) is needed to measure a run's peak memory: %v", err)
		}
		t.Skipf("GNU time (/usr/bin/time) is not installed: %v", err)
	}
	return p
}

// runMeasured runs the binary and also returns its peak resident memory.
func runMeasured(t *testing.T, args ...string) (outcome, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(t, ctx, run{Args: args})
	// GNU time forks the binary and reports its own child's peak: the rusage of a child Go
	// starts directly counts this test process too (Go starts children with vfork, and
	// exec records the shared address space's peak), which made a 20 ms run "peak" at the
	// size of the test process.
	peakFile := filepath.Join(t.TempDir(), "peak")
	cmd.Args = append([]string{gnuTime(t), "-f", "%M", "-o", peakFile, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = cmd.Args[0]
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	o := outcome{Stdout: stdout.String(), Stderr: stderr.String(), Took: time.Since(start)}
	if exit := (*exec.ExitError)(nil); err != nil {
		assert.Assert(t, errors.As(err, &exit), "runner %v: %v", args, err)
		o.Code = exit.ExitCode()
	}
	assert.Assert(t, ctx.Err() == nil, "runner %v did not finish", args)
	peak, err := os.ReadFile(peakFile)
	assert.NilError(t, err)
	lines := strings.Split(strings.TrimSpace(string(peak)), "\n") // "Command exited with non-zero status N" first
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	assert.NilError(t, err, "GNU time wrote %q", peak)
	rss := kib << 10
	t.Logf("runner %s -> exit %d in %s, peak RSS %d MiB\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), o.Code, o.Took.Round(time.Millisecond), rss>>20, o.Stdout, o.Stderr)
	return o, rss
}

// TestHostileTaskFilesStopNoOtherTask performs issue 24's attack on loading: a suite
// holding, beside a good task, the 60,000-[ file, deep {, deep indentation, the
// same-column nesting goccy/go-yaml builds without indentation, a flood of values and a
// 1 GiB file (and, named to validate, a link to /dev/zero). run and bench run the good task (it passes), list
// every other file with its position, and exit 2; validate lists them all; and none of
// it costs more than 64 MiB over the same run of the good task alone.
func TestHostileTaskFilesStopNoOtherTask(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds hostile files of a few hundred KB")
	}
	dir := hostileSuite(t)
	alone := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, "good.yaml"))
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(alone, "good.yaml"), data, 0o644))

	base, baseRSS := runMeasured(t, "run", "--sandbox", "none", "--out", filepath.Join(t.TempDir(), "out"), alone)
	assert.Equal(t, base.Code, 0)
	out := filepath.Join(t.TempDir(), "out")
	o, rss := runMeasured(t, "run", "--sandbox", "none", "--out", out, dir)
	assert.Equal(t, o.Code, 2, "a task file that does not load is a usage error, after the others ran")
	assert.Check(t, is.Contains(o.Stdout, "1 scenario: 1 passed"))
	assert.Equal(t, readResult(t, filepath.Join(out, "good", "result.json")).Status, result.Passed)
	for _, f := range hostileTaskFiles {
		assert.Check(t, is.Contains(o.Stderr, f.want))
	}
	assert.Check(t, is.Contains(o.Stderr, "huge.yaml:1:1: 1073741824 bytes, more than the 4 MiB a task file may have"))
	assert.Check(t, is.Contains(o.Stderr, "6 problems in 6 files"))
	assert.Assert(t, rss-baseRSS < 64<<20, "the hostile files cost %d MiB", (rss-baseRSS)>>20)

	// A link to /dev/zero named on the command line is refused unread.
	zero := filepath.Join(t.TempDir(), "zero.yaml")
	assert.NilError(t, os.Symlink("/dev/zero", zero))
	v, vRSS := runMeasured(t, "validate", dir, zero)
	assert.Equal(t, v.Code, 2)
	assert.Check(t, is.Contains(v.Stderr, "zero.yaml:1:1: not a regular file (a device)"))
	assert.Check(t, is.Contains(v.Stderr, "7 problems in 7 files"))
	assert.Assert(t, vRSS < baseRSS+64<<20, "validate peaked at %d MiB", vRSS>>20)

	b, _ := runMeasured(t, "bench", "--model", "oracle", "--repeat", "1", "--sandbox", "none", "--out", t.TempDir(), dir)
	assert.Equal(t, b.Code, 2)
	assert.Check(t, is.Contains(b.Stderr, hostileTaskFiles["brackets.yaml"].want))
}

// TestHostileSettingsAndRecordsAreRefused: the other inputs runner parses and did not
// write are bounded too, each refused with its position: a --vars file of aliases of
// aliases (a few hundred bytes that expand to a billion values), a --prices file, a
// cassette's index and a report given to merge, each 60,000 levels deep.
func TestHostileSettingsAndRecordsAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	task := writeTask(t, "hello", "vars: {who: x}\nprompt: hi {{.who}}\nreference:\n  - task_complete: {summary: x}\n")
	var laughs strings.Builder
	laughs.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "l%d: &l%d [*l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d]\n", i, i, i-1)
	}
	laughs.WriteString("who: *l9\n")
	deep := strings.Repeat("[", 60000)
	files := map[string]string{"laughs.yaml": laughs.String(), "deep.yaml": "who: " + deep, "prices.yaml": "models: " + deep,
		"report.json": `{"scenarios": ` + deep, "cassette/index.json": `{"entries": ` + deep}
	for name, body := range files {
		assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--vars", p("laughs.yaml"), task}, p("laughs.yaml") + ": expands to more than 100000 values"},
		{[]string{"run", "--vars", p("deep.yaml"), task}, p("deep.yaml") + ":1:69: who: nested more than 64 levels deep"},
		{[]string{"run", "--prices", p("prices.yaml"), task}, p("prices.yaml") + ":1:72: models: nested more than 64 levels deep"},
		{[]string{"merge", p("report.json")}, p("report.json") + ":1:142: nested more than 128 levels deep"},
		{[]string{"run", "--model", "replay:" + p("cassette"), task}, p("cassette/index.json") + ":1:140: nested more than 128 levels deep"},
	} {
		args := tc.args
		if args[0] == "run" {
			args = append([]string{"run", "--out", t.TempDir()}, args[1:]...)
		}
		o, rss := runMeasured(t, args...)
		assert.Check(t, o.Code != 0)
		assert.Check(t, is.Contains(o.Stderr, tc.want))
		assert.Check(t, rss < 64<<20, "peak RSS %d MiB", rss>>20) // issue 24 D: under 64 MiB
	}
}
