package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/result"
)

// hostileMarkdown are texts an agent, a task file or a server controls, as an attacker writes them.
var hostileMarkdown = []string{
	"[Approve the deployment](https://evil.example/approve)",
	"![](https://evil.example/track.png)",
	`<img src=x onerror="alert(1)">`,
	`<a href="https://evil.example">docs</a>`,
	"see https://evil.example/x or www.evil.example",
	"**all tests passed** | ✅ | fake | cell",
	"<script>alert(1)</script>",
	"`code` $\\pi$ &#x3C;img&#x3E;",
}

// renderGFM renders Markdown as GitHub does (GFM: tables, autolinks, raw HTML kept).
func renderGFM(t *testing.T, md string) string {
	t.Helper()
	var out bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	assert.NilError(t, gm.Convert([]byte(md), &out))
	return out.String()
}

var liveMarkup = regexp.MustCompile(`(?i)<(a|img|script|code)\b|<strong>all|<em>`)

// Issue 16 D: a scenario name, a reason, an assertion message and the model's summary
// reached the job summary as live Markdown: a link "Approve the deployment", a tracking
// image, raw HTML. Rendered as GitHub renders it, the summary holds none of them, every
// row keeps its 8 cells, and each text is still there to read.
func TestJobSummaryHostileTextIsNotLiveMarkup(t *testing.T) {
	run := result.Run{}
	for i, h := range hostileMarkdown {
		name := strings.ReplaceAll(h, "/", "_") // names cannot hold a slash
		run.Scenarios = append(run.Scenarios, result.Scenario{
			Name: name, File: "tasks/" + name + ".yaml", Model: "openai:" + h, Status: result.Failed, Stop: result.StopCompleted,
			Reason: h, Summary: h, Line: i + 1, Sandbox: h, Started: time.Unix(0, 0),
			Assertions: []result.Assertion{{Kind: "file_contains", Line: i + 1, Message: h}},
		})
	}
	var b strings.Builder
	assert.NilError(t, WriteSummary(&b, run, "https://github.com/o/r/actions/runs/1#artifacts", "out "+hostileMarkdown[0]))
	page := renderGFM(t, b.String())
	for _, m := range liveMarkup.FindAllString(page, -1) {
		if m != "<a" || strings.Count(page, "<a ") > 1 {
			t.Fatalf("live markup %q in the rendered summary:\n%s\n\nfrom:\n%s", m, page, b.String())
		}
	}
	assert.Equal(t, strings.Count(page, "<a "), 1, "only runner's own artifacts link:\n%s", page)
	for _, row := range strings.Split(page, "<tr>")[2:] {
		assert.Equal(t, strings.Count(row, "<td"), 8, "a row split or merged its cells:\n%s", row)
	}
	assert.Assert(t, strings.Contains(page, "[Approve the deployment](https://evil.example/approve)"), "the text is shown as text:\n%s", page)
}
