package merge_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/result"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func writeResult(t *testing.T, dir string, s result.Scenario) {
	t.Helper()
	d := filepath.Join(dir, s.Name)
	assert.NilError(t, os.MkdirAll(d, 0o755))
	b, err := json.Marshal(s)
	assert.NilError(t, err)
	assert.NilError(t, merge.WriteResult(dir, s.Name+"/"+merge.ResultFile, b))
}

// Results from several directories (nested, as downloaded artifacts are) come back in
// whole-run order; a scenario present twice keeps its later run.
func TestLoadAndCombine(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "shard-1", "runner-out"), filepath.Join(root, "shard-2")
	writeResult(t, a, result.Scenario{Name: "c", File: "c.yaml", Index: 2, Status: result.Passed, Started: t0.Add(2 * time.Second), Duration: result.Millis(time.Second)})
	writeResult(t, a, result.Scenario{Name: "a", File: "a.yaml", Index: 0, Status: result.Failed, Started: t0, Duration: result.Millis(time.Second)})
	writeResult(t, b, result.Scenario{Name: "b", File: "b.yaml", Index: 1, Status: result.Errored, Started: t0.Add(time.Second), Duration: result.Millis(5 * time.Second)})
	rerun := filepath.Join(root, "rerun")
	writeResult(t, rerun, result.Scenario{Name: "a", File: "a.yaml", Index: 0, Status: result.Passed, Started: t0.Add(10 * time.Second), Duration: result.Millis(time.Second)})

	got, err := merge.Load([]string{root})
	assert.NilError(t, err)
	assert.Equal(t, len(got), 4)
	run := merge.Combine(got)
	var names []string
	for _, s := range run.Scenarios {
		names = append(names, s.Name+" "+string(s.Status))
	}
	assert.DeepEqual(t, names, []string{"a passed", "b error", "c passed"})
	assert.Equal(t, run.Started, t0.Add(time.Second), "the earliest start of the kept results")
	assert.Equal(t, run.Duration.Duration(), 10*time.Second)
}

func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	_, err := merge.Load([]string{empty})
	assert.ErrorContains(t, err, "no results.manifest.jsonl listing result files")
	bad := filepath.Join(t.TempDir(), "x.json")
	assert.NilError(t, os.WriteFile(bad, []byte(`{"hello": 1}`), 0o644))
	_, err = merge.Load([]string{bad})
	assert.ErrorContains(t, err, "not a result file")
	_, err = merge.Load([]string{filepath.Join(empty, "missing")})
	assert.ErrorContains(t, err, "no such file")
}

func TestDone(t *testing.T) {
	interrupted := result.Scenario{Status: result.Errored, Stop: result.StopInterrupt}
	failed := result.Scenario{Status: result.Failed, Stop: result.StopCompleted}
	passed := result.Scenario{Status: result.Passed, Stop: result.StopCompleted}
	assert.Assert(t, !merge.Done(interrupted, false) && merge.Done(failed, false) && merge.Done(passed, false))
	assert.Assert(t, !merge.Done(failed, true) && merge.Done(passed, true))
}

// TestForgedResultInKeptWorkspaceIsNotRead performs the second review's attack: with kept
// workspaces under the output directory, the failed agent wrote a result.json of its own
// (status passed, dated 2030, so it would win as the latest) into its workspace. Merge and
// resume must read only what runner listed in the manifest, and a listed result file that
// was changed afterwards is an error, never a pass.
func TestForgedResultInKeptWorkspaceIsNotRead(t *testing.T) {
	out := t.TempDir()
	writeResult(t, out, result.Scenario{Name: "a", File: "a.yaml", Status: result.Failed, Started: t0})
	forged, err := json.Marshal(result.Scenario{Name: "a", File: "a.yaml", Status: result.Passed, Started: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
	assert.NilError(t, err)
	ws := filepath.Join(out, "workspaces", "runner-ws-a")
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, merge.ResultFile), forged, 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, "sub", merge.ResultFile), forged, 0o644))
	// A manifest of its own inside the workspace is below the output directory's: unread.
	assert.NilError(t, merge.WriteResult(ws, "sub/"+merge.ResultFile, forged))

	for _, load := range []func(string) ([]result.Scenario, error){
		func(d string) ([]result.Scenario, error) { return merge.Load([]string{d}) },
		merge.LoadDir,
	} {
		got, err := load(out)
		assert.NilError(t, err)
		assert.Equal(t, len(got), 1)
		s := merge.Index(got)[merge.Key{File: "a.yaml", Name: "a"}]
		assert.Equal(t, s.Status, result.Failed)
		assert.Assert(t, !merge.Done(s, true), "--rerun-failed must run it again")
	}

	// The listed file itself overwritten: detected.
	assert.NilError(t, os.WriteFile(filepath.Join(out, "a", merge.ResultFile), forged, 0o644))
	_, err = merge.Load([]string{out})
	assert.ErrorContains(t, err, "a/result.json was changed after runner wrote it")
	_, err = merge.LoadDir(out)
	assert.ErrorContains(t, err, "was changed after runner wrote it")

	// A manifest line that leaves the directory is refused.
	bad := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(bad, merge.ManifestFile), []byte(`{"path":"../x/result.json","sha256":"`+strings.Repeat("0", 64)+`"}`+"\n"), 0o644))
	_, err = merge.Load([]string{bad})
	assert.ErrorContains(t, err, "leaves")
}

// TestMergesOlderNanosecondOutput: a --json report and a result directory written before
// every duration became *_ms (duration_ns, model_time_ns, ...) merge with their times.
func TestMergesOlderNanosecondOutput(t *testing.T) {
	root := t.TempDir()
	old := `{"name":"x","file":"x.yaml","index":0,"status":"passed","stop_reason":"completed","started":"2026-01-02T03:04:05Z","duration_ns":2500000000,"model_time_ns":1000000000,"tool_time_ns":0,"steps":1,"tool_calls":0,"denied":0,"usage":{"prompt_tokens":0,"completion_tokens":0},"assertions":[],"tool_errors":0}`
	assert.NilError(t, os.MkdirAll(filepath.Join(root, "dir", "x"), 0o755))
	assert.NilError(t, merge.WriteResult(filepath.Join(root, "dir"), "x/"+merge.ResultFile, []byte(old)))
	report, err := os.ReadFile("../report/testdata/report-ns.json") // the --json report of before
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(root, "report.json"), report, 0o644))

	got, err := merge.Load([]string{filepath.Join(root, "dir"), filepath.Join(root, "report.json")})
	assert.NilError(t, err)
	assert.Equal(t, len(got), 6)
	assert.Equal(t, got[0].Duration.Duration(), 2500*time.Millisecond)
	assert.Equal(t, got[0].ModelTime.Duration(), time.Second)
	var total time.Duration
	for _, s := range got[1:] {
		total += s.Duration.Duration()
	}
	assert.Equal(t, total, (1234+12345+65500+7000+980)*time.Millisecond)

	// The older format counted repeats from 0: its first run is the run a newer runner's
	// rerun numbers 1, so a rerun over an older directory replaces it rather than adding one.
	rerun := `{"name":"x","file":"x.yaml","repeat":1,"index":0,"status":"failed","stop_reason":"completed","started":"2026-01-03T03:04:05Z","duration_ms":1,"steps":1,"tool_calls":0,"denied":0,"usage":{"prompt_tokens":0,"completion_tokens":0},"assertions":[],"tool_errors":0}`
	assert.NilError(t, os.MkdirAll(filepath.Join(root, "dir", "x.r1"), 0o755))
	assert.NilError(t, merge.WriteResult(filepath.Join(root, "dir"), "x.r1/"+merge.ResultFile, []byte(rerun)))
	got, err = merge.Load([]string{filepath.Join(root, "dir")})
	assert.NilError(t, err)
	run := merge.Combine(got)
	assert.Equal(t, len(run.Scenarios), 1)
	assert.Equal(t, run.Scenarios[0].Status, result.Failed)
}
