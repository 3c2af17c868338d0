package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
)

// ciTask is an oracle task: it writes write.txt; setup runs first; assert is its check.
func ciTask(name, setup, assert string) string {
	return fmt.Sprintf(`name: %s
model: oracle
prompt: Write write.txt.
tools: [write_file]
sandbox: none
workspace:
  files: {seed.txt: "x"}
  setup: [%q]
assert:
  - %s
reference:
  - write_file: {path: write.txt, content: "done"}
  - task_complete: {summary: wrote it}
`, name, setup, assert)
}

// ciSuite writes a suite of passing, failing and erroring tasks into a fresh directory.
func ciSuite(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"alpha":   ciTask("alpha", "true", "file_exists: write.txt"),
		"bravo":   ciTask("bravo", "true", "file_contains: {path: write.txt, text: done}"),
		"charlie": ciTask("charlie", "true", "file_exists: missing.txt"),
		"delta":   ciTask("delta", "exit 3", "file_exists: write.txt"),
		"echo":    ciTask("echo", "true", "file_absent: seed.txt"),
		"foxtrot": ciTask("foxtrot", "true", "file_exists: seed.txt"),
	} {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
	}
	return dir
}

var (
	timingField = regexp.MustCompile(`"(started|\w+_ms|transcript|tokens_per_second)": ("[^"]*"|[0-9.e+-]+)`)
	junitTiming = regexp.MustCompile(`(time|timestamp|hostname)="[^"]*"|(transcript|page): \S+|time: [^\n]*`)
)

// Merging every shard's output gives the report one unsharded run writes (timings and
// output paths aside), the same JUnit and the same exit code.
func TestShardsMergeEqualsUnsharded(t *testing.T) {
	t.Parallel()
	suiteDir := ciSuite(t)
	tmp := t.TempDir()
	common := []string{"run", "-j", "2", "--repeat", "2", suiteDir}
	whole := runner(t, run{Args: append(common, "--out", filepath.Join(tmp, "whole"),
		"--json", filepath.Join(tmp, "whole.json"), "--junit", filepath.Join(tmp, "whole.xml"))})
	assert.Equal(t, whole.Code, 1, "a scenario fails")

	const n = 3
	var outs []string
	for i := 1; i <= n; i++ {
		out := filepath.Join(tmp, fmt.Sprintf("shard-%d", i))
		outs = append(outs, out)
		o := runner(t, run{Args: append(common, "--out", out, "--shard", fmt.Sprintf("%d/%d", i, n))})
		assert.Assert(t, o.Code == 0 || o.Code == 1 || o.Code == 3, "shard %d: exit %d", i, o.Code)
	}
	merged := runner(t, run{Args: append([]string{"merge", "--json", filepath.Join(tmp, "merged.json"),
		"--junit", filepath.Join(tmp, "merged.xml")}, outs...)})
	assert.Equal(t, merged.Code, whole.Code)
	assert.Assert(t, is.Contains(merged.Stdout, "12 scenarios: 6 passed, 4 failed, 2 errored"))

	norm := func(path string, re *regexp.Regexp) string {
		b, err := os.ReadFile(path)
		assert.NilError(t, err)
		return re.ReplaceAllString(string(b), "$1=X")
	}
	assert.Equal(t, norm(filepath.Join(tmp, "merged.json"), timingField), norm(filepath.Join(tmp, "whole.json"), timingField))
	assert.Equal(t, norm(filepath.Join(tmp, "merged.xml"), junitTiming), norm(filepath.Join(tmp, "whole.xml"), junitTiming))
	validateJUnit(t, filepath.Join(tmp, "merged.xml"))

	// The merged JSON report merges again to itself, and a missing path is a usage error.
	again := runner(t, run{Args: []string{"merge", filepath.Join(tmp, "merged.json"), "--json", filepath.Join(tmp, "again.json")}})
	assert.Equal(t, again.Code, 1)
	assert.Equal(t, norm(filepath.Join(tmp, "again.json"), timingField), norm(filepath.Join(tmp, "whole.json"), timingField))
	missing := runner(t, run{Args: []string{"merge", filepath.Join(tmp, "nope")}})
	assert.Equal(t, missing.Code, 2)
}

// A run killed with SIGKILL part-way is finished by --resume: the finished results are
// reused (not run again), the rest run, and the totals are those of one whole run.
func TestResumeAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "go-on")
	// The third scenario hangs in setup until the marker exists: the kill lands there.
	hang := fmt.Sprintf("test -f %s || sleep 20", marker)
	for name, body := range map[string]string{
		"a-first":  ciTask("a-first", "true", "file_exists: write.txt"),
		"b-second": ciTask("b-second", "true", "file_exists: missing.txt"),
		"c-hangs":  ciTask("c-hangs", hang, "file_exists: write.txt"),
		"d-last":   ciTask("d-last", "true", "file_exists: write.txt"),
	} {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
	}
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := command(t, ctx, run{Args: []string{"run", "-j", "1", "--out", out, dir}})
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(out, "c-hangs", "transcript.jsonl")); err == nil {
			break
		}
		assert.Assert(t, time.Now().Before(deadline), "the third scenario never started")
		time.Sleep(10 * time.Millisecond)
	}
	assert.NilError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	first, err := os.ReadFile(filepath.Join(out, "a-first", "result.json"))
	assert.NilError(t, err)

	assert.NilError(t, os.WriteFile(marker, nil, 0o644))
	rep := filepath.Join(t.TempDir(), "report.json")
	o := runner(t, run{Args: []string{"run", "-j", "1", "--resume", out, "--json", rep, dir}})
	assert.Equal(t, o.Code, 1, "b-second fails")
	got := readReport(t, rep)
	assert.DeepEqual(t, got.names(), []string{"a-first passed", "b-second failed", "c-hangs passed", "d-last passed"})
	again, err := os.ReadFile(filepath.Join(out, "a-first", "result.json"))
	assert.NilError(t, err)
	assert.Equal(t, string(again), string(first), "a finished scenario was run again")

	// The same totals as one uninterrupted run.
	whole := filepath.Join(t.TempDir(), "whole.json")
	w := runner(t, run{Args: []string{"run", "-j", "2", "--out", filepath.Join(t.TempDir(), "w"), "--json", whole, dir}})
	assert.Equal(t, w.Code, o.Code)
	assert.DeepEqual(t, readReport(t, whole).Totals, got.Totals)

	// --rerun-failed runs only b-second again.
	o = runner(t, run{Args: []string{"run", "--rerun-failed", out, "--json", rep, dir}})
	assert.Equal(t, o.Code, 1)
	assert.Assert(t, is.Contains(o.Stdout, "Running 4 scenarios"))
	events := readTranscript(t, filepath.Join(out, "b-second", "transcript.jsonl"))
	assert.Equal(t, events[0].Type, "start")
	again, err = os.ReadFile(filepath.Join(out, "a-first", "result.json"))
	assert.NilError(t, err)
	assert.Equal(t, string(again), string(first), "--rerun-failed ran a passed scenario")
}

type ciReport struct {
	Totals struct {
		Scenarios, Passed, Failed, Errored, Steps int
	} `json:"totals"`
	Scenarios []result.Scenario `json:"scenarios"`
}

func (r ciReport) names() []string {
	var out []string
	for _, s := range r.Scenarios {
		out = append(out, s.Name+" "+string(s.Status))
	}
	return out
}

func readReport(t *testing.T, path string) ciReport {
	t.Helper()
	b, err := os.ReadFile(path)
	assert.NilError(t, err)
	var r ciReport
	assert.NilError(t, json.Unmarshal(b, &r))
	return r
}
