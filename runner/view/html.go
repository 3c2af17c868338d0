package view

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/report/plaintext"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scrub"
	"github.com/agentrunner/runner/runner/version"
)

// Display limits of a page: a transcript keeps each string up to 64 KB; a page shows
// less of each and says how much it left out, so a 200-step scenario's page stays
// quick to open. The transcript, linked from the page, has the rest.
const (
	limitOutput = 24 << 10
	limitText   = 32 << 10
	limitArgs   = 16 << 10
	// limitReason bounds the reason in the index, where a whole Go panic would
	// otherwise fill a row; the scenario's page has it in full.
	limitReason = 160
)

//go:embed assets/style.css
var styleCSS string

//go:embed assets/filter.js
var filterJS string

//go:embed assets/index.html.tmpl
var indexHTML string

//go:embed assets/page.html.tmpl
var pageHTML string

var funcs = template.FuncMap{
	"text":   func(s string) Text { return NewText(s, limitText) },
	"output": func(s string) Text { return NewText(s, limitOutput) },
	"args":   func(s string) Text { return NewText(s, limitArgs) },
	"pretty": func(raw []byte) string { return PrettyJSON(raw) },
	"argList": func(raw []byte) []Arg {
		a, _ := Args(raw)
		return a
	},
	"short":  func(s string) string { return Short(s, limitReason) },
	"clean":  plaintext.Clean,
	"dur":    Duration,
	"bytes":  Bytes,
	"tokens": func(u result.Usage) int { return u.PromptTokens + u.CompletionTokens },
	"usd":    result.FormatUSD,
	"add":    func(a, b int) int { return a + b },
	"pct":    func(f float64) string { return strconv.FormatFloat(f*100, 'f', 0, 64) + "%" },
	"score":  func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"css":    func() template.CSS { return template.CSS(styleCSS) },
	"js":     func() template.JS { return template.JS(filterJS) },
	"time":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"lower":  func(s string) string { return strings.ToLower(plaintext.Clean(s)) },
	"deref":  func(f *float64) float64 { return *f },
	"diff":   func(d result.FileDiff) Diff { return NewDiff(d, limitText) },
	"change": statusClass,
	"agentCmd": func(argv []string) string {
		cmd, _ := AgentCommand(argv)
		return cmd
	},
	"forwarded": func(argv []string) bool {
		_, f := AgentCommand(argv)
		return f
	},
}

var (
	indexTmpl = template.Must(template.New("index").Funcs(funcs).Parse(indexHTML))
	pageTmpl  = template.Must(template.New("page").Funcs(funcs).Parse(pageHTML))
)

// IndexData is what the index page shows.
type IndexData struct {
	Title   string
	Rows    []Row
	Passed  int
	Failed  int
	Errored int
	Version string
	Written time.Time
}

// Row is one scenario of the index.
type Row struct {
	Entry
	// Link is the scenario page, relative to the index and escaped for a URL.
	Link string
}

// Link is the URL path of dir's page relative to the output directory: each segment
// escaped, since directory names may hold spaces, '#' or '?'.
func Link(dir string) string {
	parts := strings.Split(dir, "/")
	for i, p := range parts {
		// ':' too: in a first segment html/template would take it for a scheme.
		parts[i] = strings.ReplaceAll(url.PathEscape(p), ":", "%3A")
	}
	return strings.Join(parts, "/") + "/" + Page
}

// filterValue escapes what would end or garble a filter word, and nothing else, so the
// filter box stays readable.
var filterValue = strings.NewReplacer("%", "%25", " ", "%20", "\t", "%09", "\n", "%0A", "\r", "%0D")

// FilterLink is the link, relative to a directory's index, that opens it filtered to
// one model's (and agent's: "" for runner's own loop) runs of one scenario, each matched
// exactly (see filter.js): bench.html's grid cells link so.
func FilterLink(model, agent, scenario string) string {
	// Cleaned as the index's data-model, data-agent and data-scenario are (see plaintext.Clean).
	q := "model=" + filterValue.Replace(plaintext.Clean(model)) + " agent=" + filterValue.Replace(plaintext.Clean(agent)) + " name=" + filterValue.Replace(plaintext.Clean(scenario))
	// ':' escaped too: before any '/', html/template would read it as a scheme.
	return Page + "#q=" + strings.ReplaceAll(url.PathEscape(q), ":", "%3A")
}

// WriteIndex renders the index of entries (in Load's order).
func WriteIndex(w io.Writer, entries []Entry, title string, now time.Time) error {
	d := IndexData{Title: title, Version: version.String(), Written: now}
	for _, e := range entries {
		switch e.Status {
		case result.Passed:
			d.Passed++
		case result.Failed:
			d.Failed++
		default:
			d.Errored++
		}
		d.Rows = append(d.Rows, Row{Entry: e, Link: Link(e.Dir)})
	}
	return indexTmpl.Execute(w, d)
}

// pageData is a scenario page's view of its story.
type pageData struct {
	*Story
	// Up leads back to the index: "../" per level of Dir.
	Up string
}

// WritePage renders one scenario's page.
func WritePage(w io.Writer, st *Story) error {
	up := strings.Repeat("../", strings.Count(st.Dir, "/")+1) + Page
	return pageTmpl.Execute(w, pageData{Story: st, Up: up})
}

// Write (re)writes the index and every scenario page of the output directory out and
// returns the index's path.
func Write(out string) (string, error) {
	entries, err := Load(out)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		st := ReadStory(out, e)
		if err := writeFile(filepath.Join(out, filepath.FromSlash(e.Dir), Page), func(w io.Writer) error { return WritePage(w, st) }); err != nil {
			return "", err
		}
	}
	index := filepath.Join(out, Page)
	title := "runner: " + filepath.Base(absOr(out))
	if err := writeFile(index, func(w io.Writer) error { return WriteIndex(w, entries, title, time.Now()) }); err != nil {
		return "", err
	}
	return index, nil
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// writeFile writes path through a temporary file (scrub.Output), so a page being read
// is never half written, and no secret this process knows reaches it (a result file
// written by an older runner may hold one).
func writeFile(path string, render func(io.Writer) error) error {
	if err := (scrub.Output{}).Replace(path, render); err != nil {
		return fmt.Errorf("view: %s: %w", path, err)
	}
	return nil
}
