package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentrunner/runner/runner/result"
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
	// Workspace is $GITHUB_WORKSPACE: absolute task paths under it are made relative to
	// it, since GitHub places annotations by repository-relative path.
	Workspace string
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
	werr := WriteSummary(f, run, g.opts.ArtifactsURL, g.opts.OutDir)
	if err := f.Close(); werr == nil && err != nil {
		werr = fmt.Errorf("job summary: %w", err)
	}
	return werr
}

// relativeTo returns run with absolute task paths under dir made relative to it.
func relativeTo(run result.Run, dir string) result.Run {
	if dir == "" {
		return run
	}
	out := run
	out.Scenarios = make([]result.Scenario, len(run.Scenarios))
	for i, s := range run.Scenarios {
		if filepath.IsAbs(s.File) {
			if rel, err := filepath.Rel(dir, s.File); err == nil && !strings.HasPrefix(rel, "..") {
				s.File = filepath.ToSlash(rel)
			}
		}
		out.Scenarios[i] = s
	}
	return out
}

// WriteAnnotations writes the workflow commands for a run's failures and errors.
func WriteAnnotations(w io.Writer, run result.Run) error {
	var b strings.Builder
	for _, s := range run.Scenarios {
		title := displayName(s)
		switch verdict(s) {
		case result.Failed:
			n := 0
			if limitHit(s) {
				annotate(&b, s.File, s.Line, title, s.Reason)
				n++
			}
			for _, a := range s.Assertions {
				if !a.Passed {
					annotate(&b, s.File, a.Line, title, a.Kind+": "+a.Message)
					n++
				}
			}
			if n == 0 {
				annotate(&b, s.File, s.Line, title, reason(s))
			}
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
	case result.StopMaxSteps, result.StopTimeout, result.StopStopped:
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

// WriteSummary writes the run as Markdown for the job summary: a headline, a table of
// scenarios (status, steps, time, tokens, reason), totals, the sandbox and where the
// transcripts are.
func WriteSummary(w io.Writer, run result.Run, artifactsURL, outDir string) error {
	var b strings.Builder
	passed, failed, errored := run.Counts()
	fmt.Fprintf(&b, "## runner: %d passed, %d failed, %d errored\n\n", passed, failed, errored)
	b.WriteString("| | scenario | model | status | steps | time | tokens | reason |\n")
	b.WriteString("|---|---|---|---|--:|--:|--:|---|\n")
	steps := 0
	sandboxes := []string{}
	seen := map[string]bool{}
	for _, s := range run.Scenarios {
		st := verdict(s)
		icon := map[result.Status]string{result.Passed: "✅", result.Failed: "❌"}[st]
		if icon == "" {
			icon = "⚠️"
		}
		name := cell(displayName(s), 0)
		if s.Line > 0 && st == result.Failed {
			name += " (" + cell(s.File, 0) + ":" + strconv.Itoa(s.Line) + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %d | %s |\n", icon, name, cell(s.Model, 0), st,
			s.Steps, duration(s.Duration), s.Usage.PromptTokens+s.Usage.CompletionTokens, cell(reason(s), 300))
		steps += s.Steps
		if s.Sandbox != "" && !seen[s.Sandbox] {
			seen[s.Sandbox] = true
			sandboxes = append(sandboxes, s.Sandbox)
		}
	}
	p, c := tokens(run)
	fmt.Fprintf(&b, "| | **total** | | **%d/%d passed** | %d | %s | %d | |\n\n", passed, len(run.Scenarios), steps, duration(run.Duration), p+c)
	if cost := run.Cost(); p+c > 0 && cost.Prices != "" {
		fmt.Fprintf(&b, "Cost: **%s**\n\n", cell(totalLine(cost), 0))
	}
	if len(sandboxes) > 0 {
		fmt.Fprintf(&b, "Sandbox: **%s**\n", cell(strings.Join(sandboxes, ", "), 0))
	}
	if outDir != "" {
		fmt.Fprintf(&b, "Transcripts and results: %s", cell(outDir, 0))
		if artifactsURL != "" {
			fmt.Fprintf(&b, " ([artifacts of this run](%s))", artifactsURL)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	return nil
}

// cell makes text safe inside a Markdown table cell: one line, no column breaks, no HTML
// (GitHub renders HTML in summaries), at most max runes (0: no bound).
func cell(s string, max int) string {
	s = oneLine(s, max)
	return strings.NewReplacer("|", `\|`, "&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "'").Replace(s)
}
