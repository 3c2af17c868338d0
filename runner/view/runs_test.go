package view

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
)

// steps are a transcript of one call per step, each writing the given content.
func steps(contents ...string) [][2]any {
	evs := [][2]any{{transcript.TypeStart, transcript.Start{Task: "t", Prompt: "p", MaxSteps: 9}}}
	for i, c := range contents {
		args, _ := json.Marshal(map[string]string{"path": "out.txt", "content": c})
		id := string(rune('a' + i))
		evs = append(evs,
			[2]any{transcript.TypeResponse, transcript.Response{Content: "step " + c, ToolCalls: []model.ToolCall{{ID: id, Name: "write_file", Arguments: args}}}},
			[2]any{transcript.TypeToolCall, transcript.ToolCall{ID: id, Name: "write_file", Tool: "write_file", Args: args, Result: result.ToolResult{Success: true, Output: "wrote " + c}}})
	}
	return evs
}

// writeSteps writes a scenario whose transcript numbers its steps from 1.
func writeSteps(t *testing.T, out, dir string, s result.Scenario, contents ...string) {
	t.Helper()
	evs := steps(contents...)
	d := filepath.Join(out, dir)
	assert.NilError(t, os.MkdirAll(d, 0o755))
	b, err := json.Marshal(s)
	assert.NilError(t, err)
	// Listed in the manifest, as runner writes a result: Load reads nothing else.
	assert.NilError(t, merge.WriteResult(out, filepath.ToSlash(dir)+"/result.json", b))
	var tr bytes.Buffer
	for i, ev := range evs {
		data, err := json.Marshal(ev[1])
		assert.NilError(t, err)
		step := 0
		if i > 0 {
			step = (i + 1) / 2
		}
		line, err := json.Marshal(transcript.Event{Type: ev[0].(string), Time: time.Unix(int64(i), 0).UTC(), Step: step, Data: data})
		assert.NilError(t, err)
		tr.Write(append(line, '\n'))
	}
	assert.NilError(t, os.WriteFile(filepath.Join(d, "transcript.jsonl"), tr.Bytes(), 0o644))
}

func scenario(name, model string, st result.Status, steps int, passed bool, started time.Time) result.Scenario {
	msg := "out.txt contains ok"
	if !passed {
		msg = `out.txt does not contain "ok"`
	}
	return result.Scenario{Name: name, File: name + ".yaml", Model: model, Status: st, Steps: steps, ToolCalls: steps, Started: started,
		Usage:      result.Usage{PromptTokens: 100 * steps, CompletionTokens: 10 * steps},
		Assertions: []result.Assertion{{Kind: "completed", Line: 5, Passed: true, Message: "ok"}, {Kind: "file_contains", Line: 6, Passed: passed, Message: msg}}}
}

// TestRunsSideBySide: two nights of the same suite: the runs with their pass rates and
// counts, the verdicts that changed, and a scenario's comparison: its verdicts, steps and
// tokens, the one assertion that changed, and the step at which the runs parted.
func TestRunsSideBySide(t *testing.T) {
	base := t.TempDir()
	night1, night2 := filepath.Join(base, "night-1"), filepath.Join(base, "night-2")
	day1 := time.Date(2026, 11, 26, 2, 17, 0, 0, time.UTC)
	writeSteps(t, night1, "fix", scenario("fix", "ollama:qwen3:4b", result.Passed, 3, true, day1), "a", "b", "ok")
	writeSteps(t, night1, "docs", scenario("docs", "ollama:qwen3:4b", result.Failed, 1, false, day1.Add(time.Minute)), "x")
	writeSteps(t, night2, "fix", scenario("fix", "ollama:qwen3:8b", result.Failed, 2, false, day1.Add(24*time.Hour)), "a", "c")
	writeSteps(t, night2, "docs", scenario("docs", "ollama:qwen3:8b", result.Passed, 1, true, day1.Add(24*time.Hour)), "ok")
	writeSteps(t, night2, "new", scenario("new", "ollama:qwen3:8b", result.Passed, 1, true, day1.Add(24*time.Hour)), "ok")

	out := filepath.Join(base, "compare")
	index, sum, err := WriteRuns(out, []string{night1, night2})
	assert.NilError(t, err)
	var text bytes.Buffer
	assert.NilError(t, sum.WriteText(&text, 20))
	got := text.String()
	assert.Check(t, is.Contains(got, "2026-11-26 02:17 UTC  ollama:qwen3:4b  50% (1/2)"), got)
	assert.Check(t, is.Contains(got, "2026-11-27 02:17 UTC  ollama:qwen3:8b  67% (2/3)"), got)
	assert.Check(t, is.Contains(got, "run 1 -> 2: fix: passed -> failed"), got)
	assert.Check(t, is.Contains(got, "run 1 -> 2: docs: failed -> passed"), got)

	b, err := os.ReadFile(index)
	assert.NilError(t, err)
	page := string(b)
	assert.Check(t, is.Contains(page, "2 verdicts changed"))
	assert.Check(t, is.Contains(page, `href="../night-1/fix/index.html"`), "a run's scenario page is linked relative to the comparison")
	assert.Check(t, is.Contains(page, `<span class="note">not run</span>`), "new did not run on night 1")

	vs := filepath.Join(out, versusFile(2, "fix"))
	b, err = os.ReadFile(vs)
	assert.NilError(t, err)
	page = string(b)
	for _, want := range []string{
		`<span class="st st-passed">passed</span> → <span class="st st-failed">failed</span>`,
		`<tr class="changed"><th>steps</th><td>3</td><td>2</td></tr>`,
		`<tr class="changed"><th>prompt tokens</th><td>300</td><td>200</td></tr>`,
		`<tr><th>tool errors</th><td>0</td><td>0</td></tr>`,
		`<td><code>file_contains</code></td><td class="n">6</td>`,
		"1 assertion(s) came out the same in both runs.",
		`The runs agree up to step 1 and <a href="#step-2">part at step 2</a>.`,
		`<tr id="step-2" class="diverges differs">`,
		`<tr id="step-3" class="differs"><td class="n">3</td><td><pre>step ok</pre>`,
		`<span class="note">no such step</span>`,
		`href="../../night-2/fix/index.html"`,
	} {
		assert.Check(t, is.Contains(page, want))
	}
	assert.Check(t, is.Contains(page, `<tr id="step-1" class="same">`))
}

// TestRunsOfABenchMatchByModel: a bench's output holds every model's runs of a scenario;
// each is compared with the same model's in the other run.
func TestRunsOfABenchMatchByModel(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	now := time.Now()
	for _, dir := range []string{a, b} {
		writeSteps(t, dir, "m1/fix", scenario("fix", "ollama:m1", result.Passed, 1, true, now), "ok")
		writeSteps(t, dir, "m2/fix", scenario("fix", "ollama:m2", result.Passed, 1, true, now), "ok")
	}
	_, sum, err := WriteRuns(filepath.Join(t.TempDir(), "c"), []string{a, b})
	assert.NilError(t, err)
	assert.Equal(t, len(sum.Changes), 0)
	assert.DeepEqual(t, sum.Runs[0].Models, []string{"ollama:m1", "ollama:m2"})
	_, ok := sum.Runs[1].byKey["fix @ ollama:m2"]
	assert.Check(t, ok)
}

// TestRunsHostileTextIsInert is the attack on the comparison: the agent's words, tool
// arguments and output, the model's and the scenario's names and the reasons differ between
// two runs and carry markup, escapes and a bidi override. The pages hold no element,
// attribute or link that runner did not put there, and the terminal gets no escape.
func TestRunsHostileTextIsInert(t *testing.T) {
	r1, r2 := t.TempDir(), t.TempDir()
	s, events := hostileScenario(hostile)
	s.Model = "m\x1b[31mred " + hostile // the escape within what the terminal shows
	writeScenario(t, r1, "h", s, events)
	s2, events2 := hostileScenario(hostile + " and more " + hostile)
	s2.Model = s.Model
	s2.Status, s2.Reason = result.Passed, ""
	s2.Assertions[0].Passed = true
	writeScenario(t, r2, "h", s2, events2)
	out := filepath.Join(t.TempDir(), "cmp")
	index, sum, err := WriteRuns(out, []string{r1, r2})
	assert.NilError(t, err)
	checkInert(t, index)
	// The name as result.json keeps it (JSON made its invalid bytes U+FFFD).
	checkInert(t, filepath.Join(out, versusFile(2, sum.Runs[1].Entries[0].DisplayName())))
	var text bytes.Buffer
	assert.NilError(t, sum.WriteText(&text, 20))
	assert.Check(t, !strings.Contains(text.String(), "\x1b"), text.String())
	assert.Check(t, is.Contains(text.String(), `\x1b[31mred`))
}

// checkInert parses a page as a browser would and fails on anything the agent's text could
// have made: an element that loads or runs something, an event handler, a javascript:
// link, a terminal escape, NUL or a bidi override.
func checkInert(t *testing.T, page string) {
	t.Helper()
	b, err := os.ReadFile(page)
	assert.NilError(t, err)
	body := string(b)
	for _, bad := range []string{"<script>alert", "<img", "\x1b", "\x00", "\u202e"} {
		assert.Check(t, !strings.Contains(body, bad), "%s holds %q", page, bad)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	assert.NilError(t, err)
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "img", "iframe", "object", "embed", "script":
				t.Errorf("%s: a %s element was injected", page, n.Data)
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
}

// TestRunsPagesInChromium opens the comparison and a scenario's comparison with hostile
// text in headless Chromium: no script of the agent's runs (alert is trapped), the grid
// and the side-by-side steps are there, the step where the runs part is marked.
func TestRunsPagesInChromium(t *testing.T) {
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
	r1, r2 := t.TempDir(), t.TempDir()
	now := time.Now()
	writeSteps(t, r1, "fix", scenario("fix "+hostile, "m", result.Passed, 2, true, now), "a", hostile)
	writeSteps(t, r2, "fix", scenario("fix "+hostile, "m", result.Failed, 2, false, now), "a", "other "+hostile)
	out := filepath.Join(t.TempDir(), "cmp")
	index, sum, err := WriteRuns(out, []string{r1, r2})
	assert.NilError(t, err)
	trap := `<script>window.alert=function(m){document.documentElement.setAttribute("data-alert",String(m))};` +
		`window.onerror=function(m){document.documentElement.setAttribute("data-error",String(m))};</script>`
	dom := func(page string) string {
		b, err := os.ReadFile(page)
		assert.NilError(t, err)
		probe := page + ".probe.html"
		assert.NilError(t, os.WriteFile(probe, []byte(strings.Replace(string(b), "<head>", "<head>"+trap, 1)), 0o644))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--no-first-run", "--user-data-dir="+t.TempDir(), "--dump-dom", "--window-size=1200,900", "file://"+probe)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		assert.NilError(t, cmd.Run(), "chromium: %s", stderr.String())
		d := stdout.String()
		assert.Check(t, !strings.Contains(d, `data-alert="`), "the agent's script ran in %s", page)
		assert.Check(t, !strings.Contains(d, `data-error="`), "script error in %s", page)
		assert.Check(t, !strings.Contains(d, "<img"), "an element was injected into %s", page)
		return d
	}
	d := dom(index)
	assert.Check(t, is.Contains(d, `<td class="cell changed"><span class="st st-failed">failed</span>`))
	assert.Check(t, is.Contains(d, `&lt;/script&gt;&lt;script&gt;alert(1)`), "the name is text")
	d = dom(filepath.Join(out, versusFile(2, sum.Runs[1].Entries[0].DisplayName())))
	assert.Check(t, is.Contains(d, `<tr id="step-2" class="diverges differs">`))
	assert.Check(t, is.Contains(d, `<tr id="step-1" class="same">`))
	assert.Check(t, is.Contains(d, `<pre>step other &lt;/pre&gt;&lt;/script&gt;&lt;script&gt;alert(1)`), "the agent's words are text")
}
