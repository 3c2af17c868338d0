package bench

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/view"
)

// WriteHTML writes bench.html: one self-contained page (inline CSS, SVG and a few lines
// of JS; nothing from the network) with the leaderboard, the model x scenario grid as a
// heat map, and each model's pass rate with its 95% interval as a chart.
func WriteHTML(w io.Writer, r *Report, cmp *Comparison) error {
	ranked := Ranked(r)
	page := htmlPage{Report: r, Ranked: ranked, K: r.Repeat, Chart: chart(ranked), MachineText: gpuNames(r)}
	for _, m := range r.Models {
		page.ModelRows = append(page.ModelRows, modelRow{ModelResult: m, Placement: placementText(r, m), Marked: cpuPlacement(r, m) != "", Size: sizeText(m), Loads: loadsText(m)})
	}
	page.TimeLines, page.TimeNote = timeLines(r.Models), timeNote
	if cmp != nil {
		page.Setup = cmp.Setup
		page.Compared = true
		page.Rows = len(cmp.Rows)
		page.Alpha = cmp.Alpha
		page.Regressions = cmp.Regressions()
		page.Improvements = cmp.Improvements()
		page.Exploratory = cmp.Exploratory()
	}
	for _, t := range r.Tasks {
		row := gridRow{Name: t.Name}
		for i := range r.Models {
			c := r.Models[i].find(t.Name)
			cell := heatCell(c)
			if c != nil {
				cell.Link = view.FilterLink(r.Models[i].Name, r.Models[i].Agent, t.Name)
			}
			row.Cells = append(row.Cells, cell)
		}
		page.Grid = append(page.Grid, row)
	}
	return pageTemplate().Execute(w, page)
}

type htmlPage struct {
	*Report
	ModelRows   []modelRow
	MachineText string
	// TimeLines are bench.md's Time section, one line per model (plain text: the page
	// escapes it).
	TimeLines   []string
	TimeNote    string
	Setup       []string
	Ranked      []ModelResult
	K           int
	Chart       svgChart
	Grid        []gridRow
	Compared    bool
	Rows        int
	Alpha       float64
	Regressions []Delta
	// Improvements and Exploratory (per-scenario drops that do not gate) follow them.
	Improvements, Exploratory []Delta
}

// modelRow is a model's row of the models table, with its placement and loads as text.
type modelRow struct {
	ModelResult
	Placement, Size, Loads string
	// Marked is a model partly on CPU, or on CPU beside a GPU.
	Marked bool
}

type gridRow struct {
	Name  string
	Cells []gridCell
}

type gridCell struct {
	Text, Title string
	// Link opens the cell's scenario pages: the index runner view writes beside
	// bench.html, filtered to this model and task ("" when nothing ran).
	Link string
	// Color is the cell's background: red (0%) to green (100%), grey when unmeasured.
	Color template.CSS
}

func heatCell(c *ScenarioResult) gridCell {
	if c == nil {
		return gridCell{Text: "–", Color: "#eee"}
	}
	s := c.Stats
	cell := gridCell{Text: GridCell(c), Title: fmt.Sprintf("%s: %s", c.Name, RateWithInterval(s))}
	if s.Passed+s.Failed == 0 {
		cell.Color = "#ddd"
		return cell
	}
	cell.Color = template.CSS(fmt.Sprintf("hsl(%d, 70%%, 62%%)", int(math.Round(120*s.PassRate))))
	return cell
}

// svgChart is the pass-rate chart: one bar per model with its interval as a whisker.
type svgChart struct {
	Width, Height int
	Bars          []svgBar
	Ticks         []svgTick
}

type svgBar struct {
	Label, Value          string
	Y, W, Lo, Hi, TextY   float64
	Measured              bool
	LabelX, PlotX, Height float64
}

type svgTick struct {
	X     float64
	Label string
}

const (
	chartLabel = 220.0 // px for the model names
	chartPlot  = 480.0 // px for 0..100%
	chartRow   = 28.0
)

func chart(models []ModelResult) svgChart {
	c := svgChart{Width: int(chartLabel + chartPlot + 230), Height: int(chartRow*float64(len(models)) + 30)}
	for i := 0; i <= 4; i++ {
		c.Ticks = append(c.Ticks, svgTick{X: chartLabel + chartPlot*float64(i)/4, Label: fmt.Sprintf("%d%%", i*25)})
	}
	for i, m := range models {
		s := m.Summary
		b := svgBar{Label: m.Label(), Y: 8 + chartRow*float64(i), Height: chartRow - 10, PlotX: chartLabel, LabelX: chartLabel - 8}
		b.TextY = b.Y + b.Height - 5
		if n := s.Passed + s.Failed; n > 0 && m.Status == ModelRan {
			b.Measured = true
			b.W = chartPlot * s.PassRate
			b.Lo, b.Hi = chartLabel+chartPlot*s.Interval[0], chartLabel+chartPlot*s.Interval[1]
			b.Value = RateWithInterval(s)
		} else {
			b.Value = m.Status
			if m.Status == ModelRan {
				b.Value = "not measured"
			}
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// pageTemplate is parsed on first use, not at package init: every runner process links this
// package, and only `runner bench` writes a page.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("bench").Funcs(template.FuncMap{
		"pct":  pct,
		"tps":  tps,
		"rate": RateWithInterval,
		"add":  func(a, b int) int { return a + b },
		"f1":   func(f float64) string { return fmt.Sprintf("%.1f", f) },
		"f2":   func(f float64) string { return fmt.Sprintf("%.2f", f) },
		// secs shows milliseconds (bench.json's unit) as seconds, the column's unit.
		"secs":  func(ms float64) string { return fmt.Sprintf("%.2f", ms/1000) },
		"f0":    func(f float64) string { return fmt.Sprintf("%.0f", f) },
		"utc":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"ms":    func(d result.Millis) string { return d.Duration().Round(time.Millisecond).String() },
		"half":  func(f float64) float64 { return f / 2 },
		"plus":  func(a, b float64) float64 { return a + b },
		"delta": func(d Delta) string { return d.describe() },
		"up":    func(d Delta) string { return d.describeUp() },
		"label": func(d Delta) string { return d.label() },
		"short": func(s string) string {
			if len(s) > 12 {
				return s[:12]
			}
			return s
		},
	}).Parse(pageHTML))
})

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>runner bench: {{len .Models}} model(s) x {{len .Tasks}} scenario(s)</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.meta{color:#666}
table{border-collapse:collapse;margin:4px 0}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#f4f4f4;cursor:pointer;user-select:none}
td.l,th.l{text-align:left}
.grid td{text-align:center;min-width:90px}.grid td.l{text-align:left}
.why{white-space:normal;max-width:40em}.wrap{overflow-x:auto}
.skip{color:#888}
.reg{color:#b00020;font-weight:600}
svg text{font:12px system-ui,sans-serif;fill:#222}
.bar{fill:#3b7dd8}.ci{stroke:#111;stroke-width:2}.axis{stroke:#bbb}
</style>
</head>
<body>
<h1>runner bench: {{len .Models}} model(s) x {{len .Tasks}} scenario(s) x {{.Repeat}} repeat(s)</h1>
<div class="meta">runner {{.Runner}} on {{.Host.Name}} ({{.Host.OS}}/{{.Host.Arch}}, {{.Host.CPUs}} CPUs), started {{utc .Started}}, took {{ms .Duration}}{{if .Budget.Spent}}; a budget was spent: some cells were not run{{end}}</div>

<h2>Leaderboard</h2>
<div class="wrap"><table id="leaderboard">
<thead><tr><th>#</th><th class="l">model</th><th>pass rate [95% CI]</th><th>pass@1</th><th>pass@{{.K}}</th><th>pass^{{.K}}</th><th>flaky</th><th>steps mean / p95</th><th>tokens in / out</th><th>wall s mean / p95</th><th>tok/s</th><th>tool errors</th><th>denials</th><th>errors</th><th>not run</th></tr></thead>
<tbody>
{{- range $i, $m := .Ranked}}{{$s := $m.Summary}}
{{- if eq $m.Status "ran"}}
<tr><td>{{add $i 1}}</td><td class="l">{{$m.Label}}</td><td data-v="{{$s.PassRate}}">{{rate $s}}</td><td>{{pct $s.PassAtK 1}}</td><td>{{pct $s.PassAtK $.K}}</td><td>{{pct $s.PassHatK $.K}}</td><td>{{$s.Flaky}}</td><td>{{f1 $s.Steps.Mean}} / {{f0 $s.Steps.P95}}</td><td>{{f0 $s.PromptTokens.Mean}} / {{f0 $s.CompletionTokens.Mean}}</td><td>{{secs $s.WallMS.Mean}} / {{secs $s.WallMS.P95}}</td><td>{{tps $s}}</td><td>{{$s.ToolErrors}}</td><td>{{$s.Denials}}</td><td>{{$s.Errored}}</td><td>{{$s.NotRun}}</td></tr>
{{- else}}
<tr class="skip"><td>{{add $i 1}}</td><td class="l">{{$m.Label}}</td><td class="l why" colspan="11">{{$m.Status}}: {{$m.Reason}}</td><td>{{$s.Errored}}</td><td>{{$s.NotRun}}</td></tr>
{{- end}}
{{- end}}
</tbody>
</table></div>
<p class="meta">Pass rate: passed / (passed + failed) runs, with its Wilson 95% interval; errors (infrastructure) and runs not run are counted apart, never as failures. pass@k (Chen et al. 2021) and pass^k (tau-bench) are means over scenarios. Click a column to sort.</p>

<h2>Pass rate with 95% interval</h2>
<svg id="chart" width="{{.Chart.Width}}" height="{{.Chart.Height}}" role="img" aria-label="pass rate per model with 95% intervals">
{{- range .Chart.Ticks}}
<line class="axis" x1="{{.X}}" x2="{{.X}}" y1="0" y2="{{$.Chart.Height}}"/><text x="{{.X}}" y="{{$.Chart.Height}}" text-anchor="middle" dy="-2">{{.Label}}</text>
{{- end}}
{{- range .Chart.Bars}}
<text x="{{.LabelX}}" y="{{.TextY}}" text-anchor="end">{{.Label}}</text>
{{- if .Measured}}
<rect class="bar" x="{{.PlotX}}" y="{{.Y}}" width="{{.W}}" height="{{.Height}}"><title>{{.Label}}: {{.Value}}</title></rect>
<line class="ci" x1="{{.Lo}}" x2="{{.Hi}}" y1="{{plus .Y (half .Height)}}" y2="{{plus .Y (half .Height)}}"/>
<line class="ci" x1="{{.Lo}}" x2="{{.Lo}}" y1="{{plus .Y 3}}" y2="{{plus .Y (plus .Height -3)}}"/>
<line class="ci" x1="{{.Hi}}" x2="{{.Hi}}" y1="{{plus .Y 3}}" y2="{{plus .Y (plus .Height -3)}}"/>
<text x="{{plus .Hi 6}}" y="{{.TextY}}">{{.Value}}</text>
{{- else}}
<text x="{{plus .PlotX 6}}" y="{{.TextY}}" class="skip">{{.Value}}</text>
{{- end}}
{{- end}}
</svg>

<h2>Grid: passed / measured runs per (model, scenario)</h2>
<table class="grid">
<thead><tr><th class="l">scenario</th>{{range .Models}}<th>{{.Label}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Grid}}
<tr><td class="l">{{.Name}}</td>{{range .Cells}}<td style="background:{{.Color}}" title="{{.Title}}">{{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>

<h2>Models</h2>
<table>
<thead><tr><th class="l">model</th><th class="l">status</th><th class="l">family</th><th>parameters</th><th>quantization</th><th>context</th><th class="l">digest</th><th>server</th><th>placement</th><th>size</th><th>warm-up</th><th>loads (ms)</th></tr></thead>
<tbody>
{{- range .ModelRows}}
<tr><td class="l">{{.Label}}</td><td class="l why">{{.Status}}{{if .Reason}}: {{.Reason}}{{end}}</td>{{with .Probe}}<td class="l">{{.Family}}</td><td>{{.ParameterSize}}</td><td>{{.Quantization}}</td><td>{{.ContextLength}}{{if .LoadedContext}} (loaded {{.LoadedContext}}){{end}}</td><td class="l" title="{{.Digest}}">{{short .Digest}}</td><td>{{.ServerVersion}}</td>{{else}}<td></td><td></td><td></td><td></td><td></td><td></td>{{end}}<td{{if .Marked}} class="reg"{{end}}>{{.Placement}}</td><td>{{.Size}}</td><td>{{if .WarmUp}}{{ms .WarmUp}}{{end}}</td><td>{{.Loads}}</td></tr>
{{- end}}
</tbody>
</table>
{{- if .MachineText}}
<p>Machine (from the {{.Machine.Source}}): {{.MachineText}}.</p>
{{- end}}
{{- if .TimeLines}}

<h2>Time</h2>
<ul>{{range .TimeLines}}<li>{{.}}.</li>{{end}}</ul>
<p>{{.TimeNote}}</p>
{{- end}}
{{- if .Compared}}

<h2>Against the baseline</h2>
{{- if .Setup}}
<p class="reg">The benches ran on different setups; the pass rates compare, the times may not:</p>
<ul>{{range .Setup}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
<p>One-sided Fisher exact tests on pass counts over {{.Rows}} rows, Holm-corrected at alpha {{.Alpha}} within each family: the models' totals (gating) and the scenarios (exploratory).</p>
{{- if .Regressions}}
<ul>{{range .Regressions}}<li class="reg">{{label .}}: {{delta .}}</li>{{end}}</ul>
{{- else}}
<p>No significant drop.</p>
{{- end}}
{{- if .Improvements}}
<p>Significant improvements:</p>
<ul>{{range .Improvements}}<li>{{label .}}: {{up .}}</li>{{end}}</ul>
{{- end}}
{{- if .Exploratory}}
<p>Lower per scenario (exploratory, not gating):</p>
<ul>{{range .Exploratory}}<li>{{label .}}: {{delta .}}</li>{{end}}</ul>
{{- end}}
{{- end}}
{{- if .Warnings}}

<h2>Warnings</h2>
<ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
<script>
// Sort the leaderboard by a clicked column (numbers by value, text alphabetically).
(function () {
  var table = document.getElementById("leaderboard");
  var body = table.tBodies[0];
  function key(row, i) {
    var cell = row.cells[Math.min(i, row.cells.length - 1)];
    var v = cell.getAttribute("data-v") || cell.textContent;
    var n = parseFloat(v);
    return isNaN(n) ? v : n;
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    var desc = false;
    th.addEventListener("click", function () {
      var rows = Array.prototype.slice.call(body.rows);
      desc = !desc;
      rows.sort(function (a, b) {
        var x = key(a, i), y = key(b, i);
        if (x === y) { return 0; }
        return (x < y) === desc ? 1 : -1;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  document.documentElement.setAttribute("data-ready", "1");
})();
</script>
</body>
</html>
`
