package view

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
)

// hostile is text an agent (or a task) controls, written to break out of every place a
// page puts text: element content, attributes, the script, URLs.
const hostile = `</pre></script><script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">x</a>` +
	`' onmouseover='alert(4) <!-- --> ]]> ` + "\x1b[31mred\x1b[0m \x00\x07 \xff\xfe \u202eevil"

// writeScenario writes a result.json and transcript.jsonl like a run's under out/dir.
func writeScenario(t testing.TB, out, dir string, s result.Scenario, events [][2]any) {
	t.Helper()
	d := filepath.Join(out, dir)
	assert.NilError(t, os.MkdirAll(d, 0o755))
	b, err := json.Marshal(s)
	assert.NilError(t, err)
	// Listed in the manifest, as runner writes a result: Load reads nothing else.
	assert.NilError(t, merge.WriteResult(out, filepath.ToSlash(dir)+"/result.json", b))
	var tr bytes.Buffer
	for i, ev := range events {
		data, err := json.Marshal(ev[1])
		assert.NilError(t, err)
		line, err := json.Marshal(transcript.Event{Type: ev[0].(string), Time: time.Unix(int64(i), 0).UTC(), Step: stepOf(ev[0].(string), i), Data: data})
		assert.NilError(t, err)
		tr.Write(append(line, '\n'))
	}
	assert.NilError(t, os.WriteFile(filepath.Join(d, "transcript.jsonl"), tr.Bytes(), 0o644))
}

func stepOf(typ string, i int) int {
	switch typ {
	case transcript.TypeStart, transcript.TypeEnd, transcript.TypeAssertion, transcript.TypeFilesChanged, transcript.TypeJudge:
		return 0
	}
	return 1
}

func hostileScenario(output string) (result.Scenario, [][2]any) {
	score := 0.25
	s := result.Scenario{
		Name: "hostile " + hostile, File: "tasks/" + hostile + ".yaml", Model: "fake:" + hostile, Status: result.Failed,
		Stop: result.StopCompleted, Reason: "command: " + hostile, Line: 7, Steps: 1, ToolCalls: 1, Summary: hostile,
		Assertions: []result.Assertion{
			{Kind: "command", Line: 7, Message: hostile, Tests: []result.Test{{Name: hostile, Status: result.TestFailed, Message: hostile}}},
			{Kind: "judge", Line: 9, Passed: true, Message: "ok", Judge: &result.Verdict{Model: hostile, Score: 0.9, MinScore: 0.5, Reasoning: hostile}},
		},
		SandboxGaps: []string{hostile}, Sandbox: "bwrap", Score: &score,
		FilesChanged: &result.FileChanges{Created: []string{hostile}, Total: 1},
	}
	args, _ := json.Marshal(map[string]string{"command": hostile, "path": hostile})
	events := [][2]any{
		{transcript.TypeStart, transcript.Start{Task: hostile, System: hostile, Prompt: hostile, Tools: []string{hostile}, Warnings: []string{hostile}, MaxSteps: 5}},
		{transcript.TypeSetup, transcript.Setup{Command: hostile, Output: hostile}},
		{transcript.TypeAgent, transcript.Agent{Kind: hostile, Argv: []string{"/bin/sh", "-c", hostile}, Protocol: hostile, Endpoint: hostile}},
		{transcript.TypeRequest, transcript.Request{Messages: 2, Last: "user", Sent: []transcript.Sent{{Role: "user", Bytes: 3, Content: hostile}}, Tools: []string{hostile}}},
		{transcript.TypeRetry, transcript.Retry{Attempt: 1, Error: hostile}},
		{transcript.TypeResponse, transcript.Response{Content: hostile, ToolCalls: []model.ToolCall{{ID: "c1", Name: hostile, Arguments: args}, {ID: "c2", Name: hostile, Arguments: args}}}},
		{transcript.TypeDecision, transcript.Decision{ID: "c1", Tool: "run_in_terminal", Decision: policy.Decision{Allowed: false, By: hostile, Rule: hostile, Reason: hostile}}},
		{transcript.TypeToolCall, transcript.ToolCall{ID: "c1", Name: hostile, Tool: "run_in_terminal", Args: args, Result: result.ToolResult{Output: output, Error: &result.ToolError{Code: "DENIED", Message: hostile, Suggestion: hostile}}}},
		{transcript.TypeRequest, transcript.Request{Refused: hostile}},
		{transcript.TypeAgent, transcript.Agent{Kind: hostile, Exited: true, ExitCode: 3, Reason: hostile, Killed: true, Output: hostile}},
		{transcript.TypeFilesChanged, result.FileChanges{Created: []string{hostile}, Protected: []string{hostile}, Total: 1}},
		{transcript.TypeJudge, transcript.Judge{Line: 9, Model: hostile, Prompt: hostile, Verdict: &result.Verdict{Reasoning: hostile}, Text: []string{hostile}}},
		{transcript.TypeMCP, transcript.MCP{Server: hostile, Argv: []string{hostile}, Stderr: hostile}},
		{transcript.TypeEnd, transcript.End{Status: result.Failed, Reason: hostile}},
	}
	return s, events
}

// TestHostileTextIsInert is the attack: an agent writes markup, a script end tag, event
// handlers, a javascript: URL, terminal escapes and binary bytes into every field a page
// shows. The pages must parse to no element, attribute or URL it did not put there.
func TestHostileTextIsInert(t *testing.T) {
	out := t.TempDir()
	s, events := hostileScenario(hostile + "\n" + strings.Repeat("y", 300_000))
	writeScenario(t, out, "odd: dir #1 ?x", s, events)
	writeDiffs(t, out, "odd: dir #1 ?x", hostileDiffs())
	index, err := Write(out)
	assert.NilError(t, err)
	for _, page := range []string{index, filepath.Join(out, "odd: dir #1 ?x", Page)} {
		b, err := os.ReadFile(page)
		assert.NilError(t, err)
		body := string(b)
		assert.Check(t, !strings.Contains(body, "<script>alert"), page)
		assert.Check(t, !strings.Contains(body, "<img"), page)
		assert.Check(t, !strings.Contains(body, "\x1b"), "a terminal escape reached %s", page)
		assert.Check(t, !strings.Contains(body, "\x00"), page)
		assert.Check(t, !strings.Contains(body, "\u202e"), "a bidi override reached %s", page)
		// Parse as a browser would: only our own elements, attributes and script.
		doc, err := html.Parse(bytes.NewReader(b))
		assert.NilError(t, err)
		scripts := 0
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode {
				switch n.Data {
				case "img", "iframe", "object", "embed":
					t.Errorf("%s: a %s element was injected", page, n.Data)
				case "script":
					scripts++
					assert.Check(t, n.FirstChild == nil || !strings.Contains(n.FirstChild.Data, "alert"), page)
				}
				for _, a := range n.Attr {
					if strings.HasPrefix(a.Key, "on") {
						t.Errorf("%s: an event handler attribute %s on <%s>", page, a.Key, n.Data)
					}
					if a.Key == "href" && strings.Contains(strings.ToLower(a.Val), "javascript:") {
						t.Errorf("%s: a javascript: link %q", page, a.Val)
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		assert.Check(t, scripts <= 1, "%s: %d scripts", page, scripts)
	}
	// The index links the scenario's directory with its odd characters escaped.
	b, _ := os.ReadFile(index)
	assert.Check(t, is.Contains(string(b), `href="odd%3A%20dir%20%231%20%3Fx/index.html"`))
	// The 300 KB output is folded and cut on the page.
	p, _ := os.ReadFile(filepath.Join(out, "odd: dir #1 ?x", Page))
	assert.Check(t, is.Contains(string(p), "more in transcript.jsonl"))
	assert.Check(t, len(p) < 200_000, "page is %d bytes", len(p))
	// The diffs are there, as text: escaped, the long one folded and cut, the binary
	// file named with the reason.
	for _, want := range []string{
		"<h2>The agent</h2>", "<h2>How the agent ended</h2>", "no result came back", "Refused by runner's endpoint: &lt;/pre&gt;",
		"tools offered: <code>&lt;/pre&gt;", "stopped by runner",
		`<span class="add">&#43;&lt;/pre&gt;&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;`,
		"more in changes.json", "no diff: binary",
		`<details class="diff"><summary>`,      // the long diff starts folded
		`<details class="diff" open><summary>`, // a short one open
	} {
		assert.Check(t, strings.Contains(string(p), want), "%q not on the page", want)
	}
}

// hostileDiffs are diffs of files the agent wrote to break out of the page: markup in
// the path and the lines, a script end tag, escapes, a 300 KB line, a long diff, binary.
func hostileDiffs() result.Diffs {
	long := "--- a/long.txt\n+++ b/long.txt\n@@ -1,100 +1,100 @@\n" + strings.Repeat("-old\n+"+hostile+"\n", 100)
	return result.Diffs{Note: hostile, Files: []result.FileDiff{
		{Path: hostile, Status: result.DiffCreated, Added: 2, Diff: "--- /dev/null\n+++ b/" + hostile + "\n@@ -0,0 +1,2 @@\n+" + hostile + "\n+" + strings.Repeat("z", 300_000) + "\n"},
		{Path: "long.txt", Status: result.DiffChanged, Added: 100, Removed: 100, Diff: long},
		{Path: "blob.bin", Status: result.DiffChanged, Skipped: "binary"},
	}}
}

// writeDiffs writes a scenario's changes.json.
func writeDiffs(t testing.TB, out, dir string, d result.Diffs) {
	t.Helper()
	b, err := json.Marshal(d)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(out, dir, result.DiffsFile), b, 0o644))
}

// TestTenMegabyteResult: a 10 MB tool result (a transcript written by hand or by an
// older runner, without the 64 KB cap) makes a page of a bounded size, quickly.
func TestTenMegabyteResult(t *testing.T) {
	out := t.TempDir()
	big := strings.Repeat("0123456789abcdef\n", 10<<20/17)
	s, events := hostileScenario(big)
	writeScenario(t, out, "big", s, events)
	// The work is bounded by what it allocates, not by a time that a loaded CI machine
	// would make flaky: reading the transcript costs a few copies of it, no more.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Write(out)
	assert.NilError(t, err)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MB for a %d MB result", allocated>>20, len(big)>>20)
	assert.Check(t, allocated < 12*uint64(len(big)), "allocated %d bytes for a %d-byte result", allocated, len(big))
	info, err := os.Stat(filepath.Join(out, "big", Page))
	assert.NilError(t, err)
	assert.Check(t, info.Size() < 200_000, "page is %d bytes", info.Size())
	b, _ := os.ReadFile(filepath.Join(out, "big", Page))
	assert.Check(t, is.Contains(string(b), "10.5 MB"), "the result's full size is shown")
}

// TestFailuresFirst: the index lists failed, then errored, then passed scenarios, each
// group in run order.
func TestFailuresFirst(t *testing.T) {
	out := t.TempDir()
	for i, st := range []result.Status{result.Passed, result.Errored, result.Failed, result.Passed, result.Failed} {
		writeScenario(t, out, fmt.Sprintf("s%d", i), result.Scenario{Name: fmt.Sprintf("s%d", i), Index: i, Status: st, Model: "m"}, nil)
	}
	entries, err := Load(out)
	assert.NilError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name)
	}
	assert.DeepEqual(t, got, []string{"s2", "s4", "s1", "s0", "s3"})
}

// TestPageWithoutTranscript: a result whose transcript is gone still gets a page.
func TestPageWithoutTranscript(t *testing.T) {
	out := t.TempDir()
	writeScenario(t, out, "a", result.Scenario{Name: "a", Status: result.Errored, Reason: "model unreachable"}, nil)
	assert.NilError(t, os.Remove(filepath.Join(out, "a", "transcript.jsonl")))
	_, err := Write(out)
	assert.NilError(t, err)
	b, err := os.ReadFile(filepath.Join(out, "a", Page))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), "model unreachable"))
	assert.Check(t, is.Contains(string(b), "no transcript.jsonl"))
}

// manyScenarios writes n results (a third failing with a long reason) without transcripts.
func manyScenarios(t testing.TB, out string, n int) {
	for i := range n {
		st, reason := result.Passed, ""
		if i%3 == 0 {
			st, reason = result.Failed, "command: `go test ./...` failed: "+strings.Repeat("panic: runtime error: index out of range [5] with length 3\n\tmain.go:12 +0x1d\n", 40)
		}
		writeScenario(t, out, fmt.Sprintf("task-%04d #%d", i/3, i%3+1), result.Scenario{
			Name: fmt.Sprintf("task-%04d", i/3), File: fmt.Sprintf("tasks/task-%04d.yaml", i/3), Model: "ollama:qwen3:4b",
			Repeat: i % 3, Repeats: 3, Index: i, Status: st, Reason: reason, Steps: 12, Duration: result.Millis(93 * time.Second),
			Usage: result.Usage{PromptTokens: 12000, CompletionTokens: 900},
		}, nil)
	}
}

// TestThousandScenarioIndexInChromium: a 1,000-scenario run's index stays small and opens
// in headless Chromium in under 2 s, with its filter script running and no script error;
// the screenshot shows the status badges.
func TestThousandScenarioIndexInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	out := t.TempDir()
	manyScenarios(t, out, 1000)
	index, err := Write(out)
	assert.NilError(t, err)
	info, err := os.Stat(index)
	assert.NilError(t, err)
	assert.Check(t, info.Size() < 2<<20, "index of 1,000 scenarios is %d bytes", info.Size())
	if browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is missing in CI: .ci/run installs it")
		}
		t.Skip("chromium not installed (Debian package chromium)")
	}
	b, err := os.ReadFile(index)
	assert.NilError(t, err)
	// Any script error is written into the DOM, where --dump-dom shows it.
	probe := `<script>window.onerror=function(m){document.documentElement.setAttribute("data-error",String(m))};</script>`
	page := filepath.Join(out, "probe.html")

	shot := filepath.Join(t.TempDir(), "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The load is timed inside the page, from its first byte's parse to the end of the
	// layout after the filter script ran, so Chromium's own start-up, slow on a loaded
	// machine, does not count.
	start := `<head><script>window.t0=performance.now()</script>`
	timing := `<script>document.body.offsetHeight;document.documentElement.setAttribute("data-ms",String(Math.round(performance.now()-window.t0)))</script></body>`
	html := strings.Replace(strings.Replace(string(b), "<head>", start+probe, 1), "</body>", timing, 1)
	assert.NilError(t, os.WriteFile(page, []byte(html), 0o644))
	// The machine may be loaded (CI, other jobs): the best of three loads is the page's
	// own cost.
	best := -1
	var dom string
	profile := t.TempDir() // one profile: the second launch finds it made
	for try := 0; try < 3 && (best < 0 || best >= 2000); try++ {
		cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--no-first-run", "--user-data-dir="+profile, "--hide-scrollbars", "--dump-dom", "--screenshot="+shot,
			"--window-size=1200,900", "file://"+page)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		assert.NilError(t, cmd.Run(), "chromium: %s", stderr.String())
		dom = stdout.String()
		assert.Assert(t, is.Contains(dom, `data-ready="1"`), "the filter script did not run:\n%.2000s", dom)
		assert.Assert(t, !strings.Contains(dom, `data-error="`), "script error:\n%.2000s", dom)
		var ms int
		_, err = fmt.Sscanf(dom[strings.Index(dom, `data-ms="`)+len(`data-ms="`):], "%d", &ms)
		assert.NilError(t, err)
		if best < 0 || ms < best {
			best = ms
		}
	}
	assert.Check(t, is.Contains(dom, "1000 of 1000 shown"))
	t.Logf("1,000-scenario index: %d bytes, loaded in %d ms", info.Size(), best)
	if load, ok := overloaded(); ok {
		// A shared machine running far more than it has cores starves the browser: the
		// time then measures the machine, not the page.
		t.Logf("load average %.1f on %d CPUs: the 2 s bound is not checked", load, runtime.NumCPU())
	} else {
		assert.Check(t, best < 2000, "the index took %d ms to load", best)
	}

	f, err := os.Open(shot)
	assert.NilError(t, err)
	defer func() { _ = f.Close() }() // test cleanup: its error does not change what the test checked
	img, err := png.Decode(f)
	assert.NilError(t, err)
	red := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if near(c, color.RGBA{0xcf, 0x22, 0x2e, 0xff}) {
				red++
			}
		}
	}
	assert.Check(t, red > 500, "the failed badges are not on the screenshot (%d red pixels)", red)
}

// overloaded reports the 1-minute load average when it exceeds twice the CPUs.
func overloaded() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	var load float64
	if _, err := fmt.Sscanf(string(b), "%f", &load); err != nil {
		return 0, false
	}
	return load, load > 2*float64(runtime.NumCPU())
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) < 12 && d(a.G, b.G) < 12 && d(a.B, b.B) < 12
}

func BenchmarkWriteIndex1000(b *testing.B) {
	out := b.TempDir()
	manyScenarios(b, out, 1000)
	entries, err := Load(out)
	assert.NilError(b, err)
	for b.Loop() {
		var w bytes.Buffer
		assert.NilError(b, WriteIndex(&w, entries, "t", time.Now()))
	}
}

// TestShowCannotDriveTheTerminal is the attack on `runner show`: escapes the agent writes
// reach the terminal as visible text; plain output (NO_COLOR, CI) has no escape at all.
func TestShowCannotDriveTheTerminal(t *testing.T) {
	out := t.TempDir()
	s, events := hostileScenario(hostile)
	writeScenario(t, out, "h", s, events)
	writeDiffs(t, out, "h", hostileDiffs())
	entries, err := Load(out)
	assert.NilError(t, err)
	st := ReadStory(out, entries[0])
	var plain, colour bytes.Buffer
	assert.NilError(t, WriteText(&plain, st, false))
	assert.NilError(t, WriteText(&colour, st, true))
	assert.Check(t, !strings.Contains(plain.String(), "\x1b"), plain.String())
	assert.Check(t, is.Contains(plain.String(), `\x1b[31mred`))
	assert.Check(t, is.Contains(plain.String(), "denied by"))
	for _, want := range []string{"\nagent </pre>", "tools offered: </pre>", "sent (user, 3 B): </pre>", "(no result came back)",
		"refused by runner's endpoint: </pre>", "agent exited with code 3: gave up, stopped by runner"} {
		assert.Check(t, is.Contains(plain.String(), want), "an external agent's step is shown")
	}
	assert.Check(t, is.Contains(plain.String(), "  -old\n  +</pre></script>"), "the diff's lines, as text")
	assert.Check(t, is.Contains(plain.String(), "blob.bin: no diff: binary"))
	assert.Check(t, is.Contains(plain.String(), "… more in changes.json"), "the diff is cut in the terminal")
	// With colour, the only escapes are the palette's.
	rest := colour.String()
	for _, e := range []string{"\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m"} {
		rest = strings.ReplaceAll(rest, e, "")
	}
	assert.Check(t, !strings.Contains(rest, "\x1b"))
	var list bytes.Buffer
	assert.NilError(t, WriteList(&list, entries, false))
	assert.Check(t, is.Contains(list.String(), "FAIL hostile"))
	assert.Check(t, !strings.Contains(list.String(), "\x1b"))
}

// TestOlderOutputWithNanoseconds: an output directory written before every duration
// became *_ms (result.json's duration_ns, model_time_ns, tool_time_ns; transcript usage's
// eval_duration_ns; integer duration_ms) still shows its times in the index, the page and
// `runner show`.
func TestOlderOutputWithNanoseconds(t *testing.T) {
	const out = "testdata/old-ns"
	entries, err := Load(out)
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 1)
	e := entries[0]
	assert.Equal(t, e.Duration.Duration(), 12345*time.Millisecond)
	assert.Equal(t, e.ModelTime.Duration(), 2500*time.Millisecond)
	st := ReadStory(out, e)
	assert.Equal(t, st.Problem, "")
	assert.Equal(t, st.Turns[0].Response.Usage.EvalDuration.Duration(), 2*time.Second)
	var index, page, text bytes.Buffer
	assert.NilError(t, WriteIndex(&index, entries, "old", time.Unix(0, 0)))
	assert.Check(t, is.Contains(index.String(), ">12.3s<"))
	assert.NilError(t, WritePage(&page, st))
	assert.Check(t, is.Contains(page.String(), "12.3s (model 2.5s, tools 750ms, other 9.1s)"), "an older record: no setup or verification time, the rest is other")
	assert.Check(t, is.Contains(page.String(), "<span>2.5s</span>"), "the step's model time")
	assert.NilError(t, WriteText(&text, st, false))
	assert.Check(t, is.Contains(text.String(), "12.3s"), text.String())
	assert.Check(t, is.Contains(text.String(), "750ms"), text.String())
}

// TestDiffPageInChromium opens a scenario page with hostile diffs in headless Chromium:
// no script of the agent's runs (alert is trapped), the diff's lines are text, the short
// diff is open with its added lines shaded green, the long one folded.
func TestDiffPageInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is missing in CI: .ci/run installs it")
		}
		t.Skip("chromium not installed (Debian package chromium)")
	}
	out := t.TempDir()
	s, events := hostileScenario("ok")
	s.Assertions, s.SandboxGaps = nil, nil // the diffs at the top of the screenshot
	writeScenario(t, out, "d", s, events[:1])
	d := hostileDiffs()
	d.Files[0].Diff = "--- /dev/null\n+++ b/x\n@@ -0,0 +1,3 @@\n+" + hostile + "\n+added line\n+another\n"
	writeDiffs(t, out, "d", d)
	_, err := Write(out)
	assert.NilError(t, err)
	b, err := os.ReadFile(filepath.Join(out, "d", Page))
	assert.NilError(t, err)
	trap := `<script>window.alert=function(m){document.documentElement.setAttribute("data-alert",String(m))};` +
		`window.onerror=function(m){document.documentElement.setAttribute("data-error",String(m))};</script>`
	// Only the diffs on the page, so they are on the screenshot.
	page := strings.Replace(string(b), "<head>", "<head>"+trap, 1)
	page = page[:strings.Index(page, "<main>")+len("<main>")] + page[strings.Index(page, `<h3 class="sub">`):]
	path := filepath.Join(out, "d", "probe.html")
	assert.NilError(t, os.WriteFile(path, []byte(page), 0o644))

	shot := filepath.Join(t.TempDir(), "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--hide-scrollbars", "--dump-dom", "--screenshot="+shot,
		"--window-size=1000,700", "file://"+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	assert.NilError(t, cmd.Run(), "chromium: %s", stderr.String())
	dom := stdout.String()
	assert.Check(t, !strings.Contains(dom, `data-alert="`), "the agent's script ran")
	assert.Check(t, !strings.Contains(dom, `data-error="`), "script error")
	assert.Check(t, is.Contains(dom, `<span class="add">+added line</span>`))
	assert.Check(t, is.Contains(dom, `+&lt;/pre&gt;&lt;/script&gt;&lt;script&gt;alert(1)`), "the markup is text")
	assert.Check(t, is.Contains(dom, `<details class="diff" open="">`))
	assert.Check(t, is.Contains(dom, `<details class="diff"><summary><span class="warn">changed</span> <code>long.txt</code>`))

	f, err := os.Open(shot)
	assert.NilError(t, err)
	defer func() { _ = f.Close() }() // test cleanup: its error does not change what the test checked
	img, err := png.Decode(f)
	assert.NilError(t, err)
	green := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if near(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA), color.RGBA{0xe6, 0xff, 0xec, 0xff}) {
				green++
			}
		}
	}
	assert.Check(t, green > 200, "the added lines are not shaded on the screenshot (%d green pixels)", green)
}

// TestFilterLinkMatchesExactly opens the index in headless Chromium through FilterLink,
// the link of bench.html's grid cells: only that model's runs of that scenario are shown
// (the link once filtered by words, so "oracle" also showed oracle:fail=0.3,seed=1 and
// "greet" also greet-matrix[...]).
func TestFilterLinkMatchesExactly(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is missing in CI: .ci/run installs it")
		}
		t.Skip("chromium not installed (Debian package chromium)")
	}
	out := t.TempDir()
	i := 0
	for _, m := range []string{"oracle", "oracle:fail=0.3,seed=1"} {
		for _, name := range []string{"greet", "greet-matrix[lang=sh,word=hello world]"} {
			for rep := 1; rep <= 2; rep++ {
				s := result.Scenario{Name: name, File: "t.yaml", Model: m, Repeat: rep, Repeats: 2, Index: i, Status: result.Passed}
				writeScenario(t, out, fmt.Sprintf("%02d", i), s, nil)
				i++
			}
		}
	}
	// The same model and scenario run by an external agent: a row of its own.
	for rep := 1; rep <= 2; rep++ {
		s := result.Scenario{Name: "greet", File: "t.yaml", Model: "oracle", Agent: "codex", Repeat: rep, Repeats: 2, Index: i, Status: result.Passed}
		writeScenario(t, out, fmt.Sprintf("%02d", i), s, nil)
		i++
	}
	_, err := Write(out)
	assert.NilError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	profile := t.TempDir()
	for _, tc := range []struct{ model, agent, scenario string }{
		{"oracle", "", "greet"},
		{"oracle", "codex", "greet"},
		{"oracle:fail=0.3,seed=1", "", "greet-matrix[lang=sh,word=hello world]"},
	} {
		link := FilterLink(tc.model, tc.agent, tc.scenario)
		cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--no-first-run", "--user-data-dir="+profile, "--dump-dom", "file://"+filepath.ToSlash(out)+"/"+link)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		assert.NilError(t, cmd.Run(), "chromium: %s", stderr.String())
		dom := stdout.String()
		assert.Assert(t, is.Contains(dom, `data-ready="1"`), "the filter script did not run:\n%.2000s", dom)
		assert.Check(t, strings.Contains(dom, "2 of 10 shown"), "%s: %s", link, dom[strings.Index(dom, `id="shown"`):][:80])
		for _, row := range regexp.MustCompile(`<tr [^>]*>`).FindAllString(dom, -1) {
			if strings.Contains(row, "hidden") {
				continue
			}
			assert.Check(t, is.Contains(row, `data-model="`+html.EscapeString(tc.model)+`"`), row)
			assert.Check(t, is.Contains(row, `data-agent="`+html.EscapeString(tc.agent)+`"`), row)
			assert.Check(t, is.Contains(row, `data-scenario="`+html.EscapeString(tc.scenario)+`"`), row)
		}
	}
}

// TestUnlistedResultIsNotShown is the attack of an agent that writes a result.json of its
// own ("passed") into a workspace kept under --out, or of files left by another run: the
// index shows the results the directory's manifest lists and nothing else.
func TestUnlistedResultIsNotShown(t *testing.T) {
	out := t.TempDir()
	writeScenario(t, out, "real", result.Scenario{Name: "real", File: "t.yaml", Model: "oracle", Status: result.Failed, Reason: "it failed"}, nil)
	forged, err := json.Marshal(result.Scenario{Name: "forged", File: "t.yaml", Model: "oracle", Status: result.Passed})
	assert.NilError(t, err)
	kept := filepath.Join(out, "real", "workspace", "sub")
	assert.NilError(t, os.MkdirAll(kept, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(kept, "result.json"), forged, 0o644))
	assert.NilError(t, os.MkdirAll(filepath.Join(out, "other"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(out, "other", "result.json"), forged, 0o644))

	entries, err := Load(out)
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 1)
	assert.Equal(t, entries[0].Name, "real")
	index, err := Write(out)
	assert.NilError(t, err)
	b, err := os.ReadFile(index)
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(string(b), "forged"), "an unlisted result.json reached the index")
}
