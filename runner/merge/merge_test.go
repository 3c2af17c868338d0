package merge_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/workspace"
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

	got, err := merge.Load([]string{root}, merge.Options{})
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
	_, err := merge.Load([]string{empty}, merge.Options{})
	assert.ErrorContains(t, err, "no results.manifest.jsonl listing result files")
	bad := filepath.Join(t.TempDir(), "x.json")
	assert.NilError(t, os.WriteFile(bad, []byte(`{"hello": 1}`), 0o644))
	_, err = merge.Load([]string{bad}, merge.Options{})
	assert.ErrorContains(t, err, "not a result file")
	_, err = merge.Load([]string{filepath.Join(empty, "missing")}, merge.Options{})
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
		func(d string) ([]result.Scenario, error) { return merge.Load([]string{d}, merge.Options{}) },
		func(d string) ([]result.Scenario, error) { return merge.LoadDir(d, merge.Options{}) },
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
	_, err = merge.Load([]string{out}, merge.Options{})
	assert.ErrorContains(t, err, "a/result.json was changed after runner wrote it")
	_, err = merge.LoadDir(out, merge.Options{})
	assert.ErrorContains(t, err, "was changed after runner wrote it")

	// A manifest line that leaves the directory is refused.
	bad := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(bad, merge.ManifestFile), []byte(`{"path":"../x/result.json","sha256":"`+strings.Repeat("0", 64)+`"}`+"\n"), 0o644))
	_, err = merge.Load([]string{bad}, merge.Options{})
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

	got, err := merge.Load([]string{filepath.Join(root, "dir"), filepath.Join(root, "report.json")}, merge.Options{})
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
	got, err = merge.Load([]string{filepath.Join(root, "dir")}, merge.Options{})
	assert.NilError(t, err)
	run := merge.Combine(got)
	assert.Equal(t, len(run.Scenarios), 1)
	assert.Equal(t, run.Scenarios[0].Status, result.Failed)
}

// TestManifestKey: with RUNNER_MANIFEST_KEY set, a reader holding it reads only the lines
// it signed; a line claiming the key with a wrong MAC (forged), one signed with another
// key and an unsigned one are each named and not read. Without the key, signed lines are
// read for where they lie, and the note says they were not checked.
func TestManifestKey(t *testing.T) {
	root := t.TempDir()
	signed, other, unsigned := filepath.Join(root, "signed"), filepath.Join(root, "other"), filepath.Join(root, "unsigned")
	t.Setenv(merge.KeyEnv, "the-ci-secret")
	writeResult(t, signed, result.Scenario{Name: "a", File: "a.yaml", Status: result.Failed, Started: t0})
	t.Setenv(merge.KeyEnv, "another-secret")
	writeResult(t, other, result.Scenario{Name: "b", File: "b.yaml", Status: result.Passed, Started: t0})
	t.Setenv(merge.KeyEnv, "")
	writeResult(t, unsigned, result.Scenario{Name: "c", File: "c.yaml", Status: result.Passed, Started: t0})
	// A forged line: the real key's id, a MAC of the agent's making, over a passing result.
	forged := filepath.Join(root, "forged")
	writeResult(t, forged, result.Scenario{Name: "a", File: "a.yaml", Status: result.Passed, Started: t0.Add(time.Hour)})
	line, err := os.ReadFile(filepath.Join(signed, merge.ManifestFile))
	assert.NilError(t, err)
	var e map[string]string
	assert.NilError(t, json.Unmarshal(line, &e))
	b, err := os.ReadFile(filepath.Join(forged, "a", merge.ResultFile))
	assert.NilError(t, err)
	sum := sha256.Sum256(b)
	fake, err := json.Marshal(map[string]string{"path": "a/result.json", "sha256": hex.EncodeToString(sum[:]), "key": e["key"], "mac": strings.Repeat("ab", 32)})
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(forged, merge.ManifestFile), append(fake, '\n'), 0o644))

	t.Setenv(merge.KeyEnv, "the-ci-secret")
	var notes strings.Builder
	got, err := merge.Load([]string{root}, merge.Options{Notes: &notes})
	assert.NilError(t, err)
	assert.Equal(t, len(got), 1)
	assert.Equal(t, got[0].Status, result.Failed)
	for _, want := range []string{
		filepath.Join(forged, merge.ManifestFile) + ": 1 line whose signature does not verify with RUNNER_MANIFEST_KEY (forged or altered): not read",
		filepath.Join(other, merge.ManifestFile) + ": 1 line signed with another key: not read",
		filepath.Join(unsigned, merge.ManifestFile) + ": 1 line not signed (RUNNER_MANIFEST_KEY was not set where they were written): not read",
	} {
		assert.Check(t, strings.Contains(notes.String(), want), "want %q in:\n%s", want, notes.String())
	}

	t.Setenv(merge.KeyEnv, "")
	notes.Reset()
	got, err = merge.Load([]string{signed}, merge.Options{Notes: &notes})
	assert.NilError(t, err)
	assert.Equal(t, len(got), 1)
	assert.Check(t, strings.Contains(notes.String(), "1 line signed, not checked (this process has no RUNNER_MANIFEST_KEY)"), notes.String())
}

// TestPlantedManifestCannotErrorTheMerge: a manifest in a kept workspace, or in a
// directory a result names as its kept workspace, is never read, so what the agent left
// there (a FIFO as the manifest, a listed file whose SHA-256 is wrong) can neither block
// nor error the merge: both are named and the real result stands.
func TestPlantedManifestCannotErrorTheMerge(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "workspaces", "runner-a-123")
	writeResult(t, filepath.Join(root, "out"), result.Scenario{Name: "a", File: "a.yaml", Status: result.Failed, Started: t0, Workspace: "/elsewhere/runner-a-123"})
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, "x"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, merge.ManifestFile), []byte(`{"path":"x/result.json","sha256":"`+strings.Repeat("0", 64)+`"}`+"\n"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, "x", merge.ResultFile), []byte(`{"name":"a","file":"a.yaml","status":"passed"}`), 0o644))
	fifo := filepath.Join(root, "workspaces", "runner-b-456", "deep")
	assert.NilError(t, os.MkdirAll(fifo, 0o755))
	assert.NilError(t, mkfifo(filepath.Join(fifo, merge.ManifestFile)))
	assert.NilError(t, os.WriteFile(filepath.Join(root, "workspaces", "runner-b-456", workspace.KeptMarker), nil, 0o644))

	var notes strings.Builder
	got, err := merge.Load([]string{root}, merge.Options{Notes: &notes})
	assert.NilError(t, err)
	assert.Equal(t, len(got), 1)
	assert.Equal(t, got[0].Status, result.Failed)
	assert.Check(t, strings.Contains(notes.String(), filepath.Join(ws, merge.ManifestFile)+": not read: it lies in a workspace that"), notes.String())
	assert.Check(t, strings.Contains(notes.String(), filepath.Join(fifo, merge.ManifestFile)+": not read: it lies in the kept workspace"), notes.String())
}
