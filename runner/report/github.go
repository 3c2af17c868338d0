package report

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentrunner/runner/runner/report/markdown"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scrub"
)

// GitHubOptions say where the GitHub Actions outputs go.
type GitHubOptions struct {
	// Commands receives the workflow commands (::error ...): the job's stdout.
	Commands io.Writer
	// SummaryPath is the job summary file ($GITHUB_STEP_SUMMARY); "" writes none.
	SummaryPath string
	// ArtifactsURL links the run's artifacts from the summary; "" when unknown.
	ArtifactsURL string
	// OutDir is the transcripts directory, named in the summary.
	OutDir string
	// Workspace is $GITHUB_WORKSPACE: task paths are made relative to it (else to the
	// git root above them), since GitHub places annotations by repository-relative path.
	Workspace string
	// BlobURL is "SERVER/REPO/blob/SHA/" (from GITHUB_SERVER_URL, GITHUB_REPOSITORY and
	// GITHUB_SHA): the summary links each failure to its task file's line there.
	BlobURL string
}

// GitHubFromEnv returns the GitHub Actions reporter when GITHUB_ACTIONS is "true", with
// the summary file and the artifacts link taken from the environment GitHub sets.
func GitHubFromEnv(getenv func(string) string, commands io.Writer, outDir string) (Reporter, bool) {
	if getenv("GITHUB_ACTIONS") != "true" {
		return nil, false
	}
	opts := GitHubOptions{Commands: commands, SummaryPath: getenv("GITHUB_STEP_SUMMARY"), OutDir: outDir, Workspace: getenv("GITHUB_WORKSPACE")}
	if srv, repo, id := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID"); srv != "" && repo != "" && id != "" {
		opts.ArtifactsURL = srv + "/" + repo + "/actions/runs/" + id + "#artifacts"
	}
	if srv, repo, sha := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_SHA"); srv != "" && repo != "" && sha != "" {
		opts.BlobURL = srv + "/" + repo + "/blob/" + sha + "/"
	}
	return NewGitHub(opts), true
}

// NewGitHub returns a Reporter that, when the run finishes, prints one ::error annotation
// per failed assertion or limit hit (at its line in the task file) and per errored
// scenario, and appends a Markdown table of the run to the job summary.
func NewGitHub(opts GitHubOptions) Reporter { return &github{opts: opts} }

type github struct{ opts GitHubOptions }

func (*github) Start(int)                {}
func (*github) Started(result.Scenario)  {}
func (*github) Finished(result.Scenario) {}

func (g *github) Finish(run result.Run) error {
	if g.opts.Commands != nil {
		if err := WriteAnnotations(g.opts.Commands, relativeTo(run, g.opts.Workspace)); err != nil {
			return err
		}
	}
	if g.opts.SummaryPath == "" {
		return nil
	}
	// GitHub gives each step its own summary file; appending keeps what earlier commands
	// of the same step wrote.
	f, err := os.OpenFile(g.opts.SummaryPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	sw := scrub.NewWriter(f)
	werr := WriteSummaryLinked(sw, relativeTo(run, g.opts.Workspace), SummaryLinks{Artifacts: g.opts.ArtifactsURL, OutDir: g.opts.OutDir, Blob: g.opts.BlobURL})
	if err := sw.Flush(); werr == nil && err != nil {
		werr = fmt.Errorf("job summary: %w", err)
	}
	if err := f.Close(); werr == nil && err != nil {
		werr = fmt.Errorf("job summary: %w", err)
	}
	return werr
}

// relativeTo returns run with task paths relative to the repository: to dir
// ($GITHUB_WORKSPACE), else to the git root above each file. A relative path is first made
// absolute from the working directory the run had, so running from a subdirectory
// (scenarios/) still gives GitHub a path it can place.
func relativeTo(run result.Run, dir string) result.Run {
	out := run
	out.Scenarios = make([]result.Scenario, len(run.Scenarios))
	roots := map[string]string{}
	for i, s := range run.Scenarios {
		s.File = repoPath(s.File, dir, roots)
		out.Scenarios[i] = s
	}
	return out
}

// repoPath is file relative to root ("" for the git root above it), slash-separated; the
// path unchanged when it is outside, or no root is found.
func repoPath(file, root string, roots map[string]string) string {
	if file == "" {
		return file
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	if root == "" {
		d := filepath.Dir(abs)
		r, ok := roots[d]
		if !ok {
			r = gitRoot(d)
			roots[d] = r
		}
		root = r
	}
	if root == "" {
		return file
	}
	if r, err := filepath.Abs(root); err == nil {
		root = r
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return file
	}
	return filepath.ToSlash(rel)
}

// gitRoot is the nearest directory at or above dir holding .git, or "".
func gitRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// WriteAnnotations writes one ::error per failed or errored scenario, at its first
// failure's line; the other failures are listed in its message. GitHub shows ten
// annotations per step: one each lets the first ten scenarios be seen, not the first
// ten assertions.
func WriteAnnotations(w io.Writer, run result.Run) error {
	var b strings.Builder
	for _, s := range run.Scenarios {
		title := displayName(s)
		switch verdict(s) {
		case result.Failed:
			var lines []int
			var msgs []string
			if limitHit(s) {
				lines, msgs = append(lines, s.Line), append(msgs, s.Reason)
			}
			for _, a := range s.Assertions {
				if !a.Passed {
					lines, msgs = append(lines, a.Line), append(msgs, a.Kind+": "+a.Message)
				}
			}
			if len(msgs) == 0 {
				annotate(&b, s.File, s.Line, title, reason(s))
				continue
			}
			msg := msgs[0]
			if len(msgs) > 1 {
				msg += "\n\nAlso failed:"
				for i, m := range msgs[1:] {
					at := ""
					if lines[i+1] > 0 {
						at = " (line " + strconv.Itoa(lines[i+1]) + ")"
					}
					msg += "\n- " + oneLine(m, 300) + at
				}
			}
			annotate(&b, s.File, lines[0], title, msg)
		case result.Errored:
			annotate(&b, s.File, 0, title, "error: "+reason(s))
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("annotations: %w", err)
	}
	return nil
}

// limitHit: the agent stopped at a limit the task's assertions did not allow (they
// allow it by asserting completed: themselves), as the scenario's verdict decides.
func limitHit(s result.Scenario) bool {
	switch s.Stop {
	case result.StopMaxSteps, result.StopTimeout, result.StopStopped, result.StopGaveUp:
	default:
		return false
	}
	for _, a := range s.Assertions {
		if a.Kind == "completed" {
			return false
		}
	}
	return true
}

func annotate(b *strings.Builder, file string, line int, title, msg string) {
	b.WriteString("::error file=")
	b.WriteString(escapeProperty(file))
	if line > 0 {
		b.WriteString(",line=" + strconv.Itoa(line))
	}
	b.WriteString(",title=" + escapeProperty(title) + "::" + escapeData(cleanText(msg)) + "\n")
}

// escapeData escapes a workflow command's message as the runner's toolkit does
// (@actions/core escapeData): %, CR and LF.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a property value (file, title): also ':' and ',', which would
// otherwise end it.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(cleanText(s))
}

// SummaryLinks are where the job summary points: the run's artifacts, the output
// directory (whose index.html tells each scenario's story) and the repository at the
// commit ("SERVER/REPO/blob/SHA/"), for the task files' lines.
type SummaryLinks struct {
	Artifacts, OutDir, Blob string
}

// WriteSummary is WriteSummaryLinked with the artifacts and output directory only.
func WriteSummary(w io.Writer, run result.Run, artifactsURL, outDir string) error {
	return WriteSummaryLinked(w, run, SummaryLinks{Artifacts: artifactsURL, OutDir: outDir})
}

// summaryReason is how much of a reason the table shows; the rest is one click away.
const summaryReason = 120

// WriteSummaryLinked writes the run as Markdown for the job summary: a headline, a table
// of scenarios, failures first (status, steps, time, tokens, the reason shortened with the
// full text folded under it), totals, the sandbox and where the pages and transcripts are.
func WriteSummaryLinked(w io.Writer, run result.Run, links SummaryLinks) error {
	var b strings.Builder
	passed, failed, errored := run.Counts()
	fmt.Fprintf(&b, "## runner: %d passed, %d failed, %d errored\n\n", passed, failed, errored)
	b.WriteString("| | scenario | model | status | steps | time | tokens | reason |\n")
	b.WriteString("|---|---|---|---|--:|--:|--:|---|\n")
	steps := 0
	sandboxes := []string{}
	seen := map[string]bool{}
	order := make([]result.Scenario, 0, len(run.Scenarios))
	for _, want := range []result.Status{result.Failed, result.Errored, result.Passed} {
		for _, s := range run.Scenarios {
			if verdict(s) == want {
				order = append(order, s)
			}
		}
	}
	for _, s := range run.Scenarios {
		if s.Sandbox != "" && !seen[s.Sandbox] {
			seen[s.Sandbox] = true
			sandboxes = append(sandboxes, s.Sandbox)
		}
	}
	for _, s := range order {
		st := verdict(s)
		icon := map[result.Status]string{result.Passed: "✅", result.Failed: "❌"}[st]
		if icon == "" {
			icon = "⚠️"
		}
		name := cell(displayName(s), 0)
		if s.Line > 0 && st == result.Failed {
			loc := cell(s.File, 0) + ":" + strconv.Itoa(s.Line)
			if links.Blob != "" && !filepath.IsAbs(s.File) && !strings.HasPrefix(s.File, "..") {
				loc = "[" + loc + "](" + links.Blob + urlPath(s.File) + "#L" + strconv.Itoa(s.Line) + ")"
			}
			name += " (" + loc + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %d | %s |\n", icon, name, cell(s.Model, 0), st,
			s.Steps, duration(s.Duration.Duration()), s.Usage.PromptTokens+s.Usage.CompletionTokens, foldedCell(reason(s)))
		steps += s.Steps
	}
	p, c := tokens(run)
	fmt.Fprintf(&b, "| | **total** | | **%d/%d passed** | %d | %s | %d | |\n\n", passed, len(run.Scenarios), steps, duration(run.Duration.Duration()), p+c)
	if cost := run.Cost(); p+c > 0 && cost.Prices != "" {
		fmt.Fprintf(&b, "Cost: **%s**\n\n", cell(totalLine(cost), 0))
	}
	if len(sandboxes) > 0 {
		fmt.Fprintf(&b, "Sandbox: **%s**\n", cell(strings.Join(sandboxes, ", "), 0))
	}
	if links.OutDir != "" {
		// No code span: its content would show the escapes, and agent-named paths stay text.
		fmt.Fprintf(&b, "What each agent did, step by step: %s (open it from the downloaded artifact; runner show %s prints it)", cell(filepath.ToSlash(filepath.Join(links.OutDir, "index.html")), 0), cell(links.OutDir, 0))
		if links.Artifacts != "" {
			fmt.Fprintf(&b, " ([artifacts of this run](%s))", links.Artifacts)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	return nil
}

// cell makes text safe inside a Markdown table cell (markdown.Cell): one line, every
// punctuation character escaped, so no link, image, HTML or column break of the text is
// live (GitHub renders all of them in summaries), at most max runes (0: no bound).
func cell(s string, max int) string { return markdown.Cell(s, max) }

// foldedCell is a reason for a table cell: short ones as they are; long or multi-line
// ones shortened, with the whole text folded under them (GitHub renders <details> in a
// summary's table). Every piece of text is escaped, so the agent's text stays text.
func foldedCell(s string) string {
	short := cell(s, summaryReason)
	if !strings.Contains(strings.TrimSpace(s), "\n") && utf8.RuneCountInString(oneLine(s, 0)) <= summaryReason {
		return short
	}
	const most = 4000 // GitHub caps a summary at 1 MiB
	lines := strings.Split(strings.TrimRight(cleanText(s), "\n"), "\n")
	for i, l := range lines {
		lines[i] = cell(l, 0)
	}
	full := strings.Join(lines, "<br>")
	if len(full) > most {
		full = full[:most]
		// Never end inside a rune or between an escape's backslash and what it escapes.
		for full != "" && (!utf8.ValidString(full) || strings.HasSuffix(full, `\`)) {
			full = full[:len(full)-1]
		}
		full += "…"
	}
	return "<details><summary>" + short + "</summary>" + full + "</details>"
}

// urlPath escapes each segment of a slash-separated path for a URL.
func urlPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
