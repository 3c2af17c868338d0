package bench

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// sampleReport is a bench of three models (one skipped) over scenarios x 5 repeats.
func sampleReport(scenarios int) *Report {
	names := make([]string, scenarios)
	good, flaky := map[string]string{}, map[string]string{}
	for i := range names {
		names[i] = fmt.Sprintf("scenario-%02d", i)
		good[names[i]] = "ppppp"
		flaky[names[i]] = []string{"ppppp", "pfpff", "ffppf", "fffff"}[i%4]
	}
	r := report("ollama:qwen3:4b", good, names...)
	f := report("ollama:llama3.1:8b", flaky, names...)
	r.Models = append(r.Models, f.Models[0], ModelResult{Name: "ollama:gone", Status: ModelSkipped, Reason: `ollama has no model "gone": run ollama pull gone`})
	r.Runner, r.Host = "v1.0.0", Host{Name: "ci", OS: "linux", Arch: "amd64", CPUs: 2}
	return r
}

func TestHTMLIsSelfContainedAndSmall(t *testing.T) {
	r := sampleReport(34) // 3 models x 34 scenarios: over 100 cells
	cmp := Compare(r, r, Alpha)
	var b bytes.Buffer
	assert.NilError(t, WriteHTML(&b, r, &cmp))
	page := b.String()
	assert.Assert(t, b.Len() < 200<<10, "bench.html is %d bytes for 102 cells", b.Len())
	for _, ext := range []string{"http://", "https://", "<link", "src="} {
		assert.Assert(t, !strings.Contains(page, ext), "the page must not load anything: found %q", ext)
	}
	assert.Assert(t, is.Contains(page, "<svg id=\"chart\""))
	assert.Assert(t, is.Contains(page, "ollama:gone"))
	assert.Assert(t, is.Contains(page, "No significant drop."))
	// A measured cell opens its scenario pages: runner view's index, filtered to the cell.
	assert.Assert(t, is.Contains(page, `<a href="index.html#q=`), "grid cells link the scenario pages")
}

// TestHTMLInChromium loads bench.html in headless Chromium: no script error, the
// leaderboard script ran, and the screenshot shows the chart's bars.
func TestHTMLInChromium(t *testing.T) {
	t.Parallel()
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
	dir := t.TempDir()
	var b bytes.Buffer
	assert.NilError(t, WriteHTML(&b, sampleReport(6), nil))
	// Any script error is written into the DOM, where --dump-dom shows it.
	probe := `<script>window.onerror=function(m){document.documentElement.setAttribute("data-error",String(m))};</script>`
	page := strings.Replace(b.String(), "<head>", "<head>"+probe, 1)
	file := filepath.Join(dir, "bench.html")
	assert.NilError(t, os.WriteFile(file, []byte(page), 0o644))

	chrome := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--no-first-run", "--user-data-dir=" + t.TempDir(), "--hide-scrollbars"}
		cmd := exec.CommandContext(ctx, browser, append(append(base, args...), "file://"+file)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		assert.NilError(t, cmd.Run(), "chromium: %s", errb.String())
		return out.String()
	}
	// One launch (each costs seconds): the DOM after the scripts ran, and a screenshot.
	shot := filepath.Join(dir, "shot.png")
	dom := chrome("--dump-dom", "--screenshot="+shot, "--window-size=1200,1000")
	assert.Assert(t, is.Contains(dom, `data-ready="1"`), "the page's script did not run:\n%.2000s", dom)
	assert.Assert(t, !strings.Contains(dom, `data-error="`), "script error:\n%.2000s", dom)
	assert.Assert(t, is.Contains(dom, `class="bar"`))

	f, err := os.Open(shot)
	assert.NilError(t, err)
	defer func() { _ = f.Close() }() // test cleanup: its error does not change what the test checked
	img, err := png.Decode(f)
	assert.NilError(t, err)
	colours := map[color.RGBA]int{}
	bar := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			colours[c]++
			if near(c, color.RGBA{0x3b, 0x7d, 0xd8, 0xff}) {
				bar++
			}
		}
	}
	assert.Assert(t, len(colours) > 20, "the screenshot is nearly blank: %d colours", len(colours))
	assert.Assert(t, bar > 2000, "the chart's bars are not on the screenshot (%d bar pixels)", bar)
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) < 6 && d(a.G, b.G) < 6 && d(a.B, b.B) < 6
}
