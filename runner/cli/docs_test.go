package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"
	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/agent/kinds"
	"github.com/agentrunner/runner/runner/bench"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// docPages are the user documentation: the README and the topic pages under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	assert.NilError(t, err)
	return append([]string{"../../README.md"}, pages...)
}

// docsTable returns the rows of the table in the documentation whose header row starts
// with header, each cell as a reader sees it: code spans unquoted, \| as |. A header found
// on two pages is an error: a registry has one table.
func docsTable(t *testing.T, header string) [][]string {
	t.Helper()
	var found []string
	var rows [][]string
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		assert.NilError(t, err)
		lines := strings.Split(string(data), "\n")
		for i, l := range lines {
			if !strings.HasPrefix(l, header) {
				continue
			}
			found = append(found, page)
			for _, r := range lines[i+2:] {
				if !strings.HasPrefix(r, "|") {
					break
				}
				rows = append(rows, cells(r))
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one table starting %q in README.md and docs/*.md, found it in %v", header, found)
	}
	return rows
}

func cells(row string) []string {
	row = strings.ReplaceAll(strings.Trim(row, "|"), `\|`, "\x00")
	var out []string
	for _, c := range strings.Split(row, "|") {
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(c), "`", ""), "\x00", "|"))
	}
	return out
}

// The documentation's tables of providers, parsers, approval and sandbox modes and
// assertion kinds are the registries': a row added to one and not the other fails here.

func TestDocsProvidersAreTheRegistry(t *testing.T) {
	var want [][]string
	for _, p := range providers.Registry {
		var env []string
		for _, e := range p.Env {
			env = append(env, e.Name)
		}
		want = append(want, []string{p.Name, p.Help, strings.Join(env, ", "), p.PreCheck})
	}
	assert.DeepEqual(t, docsTable(t, "| provider |"), want)
}

func TestDocsParsersAreTheRegistry(t *testing.T) {
	var want [][]string
	for _, p := range textcall.Parsers {
		want = append(want, []string{p.Name, p.Help})
	}
	assert.DeepEqual(t, docsTable(t, "| mode | reads |"), want)
}

func TestDocsApprovalModesAreTheRegistry(t *testing.T) {
	var want [][]string
	for _, m := range task.ApprovalModes {
		want = append(want, []string{m.Name, m.Help})
	}
	assert.DeepEqual(t, docsTable(t, "| mode | what runs |"), want)
}

func TestDocsSandboxModesAreTheRegistry(t *testing.T) {
	var want, got [][]string
	for _, m := range sandbox.Modes {
		want = append(want, []string{m.Name, m.Help})
	}
	got = docsTable(t, "| sandbox | confines commands with |")
	assert.DeepEqual(t, got, want)
}

// TestReadmeSandboxComparisonHasEveryMode keeps the table of what each mode confines to
// one column per mode auto can choose.
func TestDocsSandboxComparisonHasEveryMode(t *testing.T) {
	data, err := os.ReadFile("../../docs/sandbox.md")
	assert.NilError(t, err)
	var header string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "| | `"+sandbox.ModeBwrap+"`") {
			header = l
		}
	}
	var want []string
	for _, m := range sandbox.ModeNames() {
		if m != sandbox.ModeAuto {
			want = append(want, m)
		}
	}
	assert.DeepEqual(t, cells(header)[1:], want)
}

// TestReadmeAssertionsAreTheRegistry: the table of assertions names every kind of
// task.Kinds, in order (command has two rows).
func TestDocsAssertionsAreTheRegistry(t *testing.T) {
	var got []string
	for _, row := range docsTable(t, "| assertion | passes when |") {
		kind, _, _ := strings.Cut(row[0], ":")
		if len(got) == 0 || got[len(got)-1] != kind {
			got = append(got, kind)
		}
	}
	assert.DeepEqual(t, got, task.AssertionKinds)
}

// mdLink is a Markdown link or image target: ](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinksResolve: every relative link in the README, docs/, SECURITY.md and
// ARCHITECTURE.md names a file that exists and, with #anchor, a heading on that page, so a
// page moved or a heading renamed cannot leave a reader at a dead end.
func TestDocsLinksResolve(t *testing.T) {
	pages := append(docPages(t), "../../SECURITY.md", "../../ARCHITECTURE.md")
	anchors := map[string]map[string]bool{}
	headingsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		a := map[string]bool{}
		if data, err := os.ReadFile(page); err == nil {
			for _, l := range markdownProse(string(data)) {
				if h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " "); ok && strings.HasPrefix(l, "#") {
					a[githubAnchor(h)] = true
				}
			}
		}
		anchors[page] = a
		return a
	}
	var problems []string
	for _, page := range pages {
		data, err := os.ReadFile(page)
		assert.NilError(t, err)
		for _, l := range markdownProse(string(data)) {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), file)
					if _, err := os.Stat(dest); err != nil {
						problems = append(problems, fmt.Sprintf("%s: link to %s: no such file", page, target))
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !headingsOf(dest)[anchor] {
					problems = append(problems, fmt.Sprintf("%s: link to %s: no such heading", page, target))
				}
			}
		}
	}
	assert.Assert(t, len(problems) == 0, strings.Join(problems, "\n"))
}

// markdownProse returns the lines of a Markdown page outside fenced code blocks.
func markdownProse(page string) []string {
	var out []string
	fenced := false
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, l)
		}
	}
	return out
}

// githubAnchor is the id GitHub gives a heading: lower case, punctuation dropped, spaces
// as hyphens.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestGitignoreCoversTheDefaultOutputs: what the README's first commands write (run's and
// bench's default --out, and where an earlier run is moved aside) is never committed by
// accident: `git check-ignore` says the repository's .gitignore covers each.
func TestGitignoreCoversTheDefaultOutputs(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	app := newApp(IO{})
	var outs []string
	for _, verb := range []string{"run", "bench"} {
		for _, f := range app.Command(verb).Flags {
			if sf, ok := f.(*cli.StringFlag); ok && sf.Name == "out" {
				outs = append(outs, sf.Value)
			}
		}
	}
	assert.DeepEqual(t, outs, []string{"runner-out", "bench-out"})
	for _, out := range outs {
		for _, p := range []string{out + "/", out + "/index.html", out + session.PrevSuffix + "/", out + session.PrevSuffix + "/index.html"} {
			cmd := exec.Command(git, "check-ignore", "--no-index", "-q", p)
			cmd.Dir = "../.."
			assert.NilError(t, cmd.Run(), ".gitignore does not cover %s", p)
		}
	}
}

// TestDocsBenchVersionIsTheFormat: every "version": N the docs give bench.json is the
// version runner writes (they said 1 where it was 2).
func TestDocsBenchVersionIsTheFormat(t *testing.T) {
	re := regexp.MustCompile(`"version": (\d+)`)
	found := 0
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		assert.NilError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			found++
			assert.Equal(t, m[1], fmt.Sprint(bench.FormatVersion), "%s: bench.json's version", page)
		}
	}
	assert.Assert(t, found > 0, "the docs name bench.json's version")
}

// TestExitCodeTablesAreTheCodes: the exit-code tables of run and bench, and `runner
// --help`, list exactly the codes classify can return.
func TestExitCodeTablesAreTheCodes(t *testing.T) {
	want := []string{fmt.Sprint(ExitOK), fmt.Sprint(ExitFailed), fmt.Sprint(ExitUsage), fmt.Sprint(ExitErrored), fmt.Sprint(ExitInterrupted)}
	for _, header := range []string{"| code | `run` |", "| exit | `bench` and `bench compare` |"} {
		var codes []string
		for _, row := range docsTable(t, header) {
			codes = append(codes, row[0])
		}
		assert.DeepEqual(t, codes, want)
	}
	var help strings.Builder
	code := Run(context.Background(), []string{"runner", "--help"}, IO{Stdout: &help, Stderr: &help})
	assert.Equal(t, code, ExitOK)
	section := help.String()[strings.Index(help.String(), "Exit codes:"):]
	var codes []string
	for _, l := range strings.Split(section, "\n")[1:] {
		f := strings.Fields(l)
		if len(f) == 0 {
			break
		}
		codes = append(codes, f[0])
	}
	assert.DeepEqual(t, codes, want)
	assert.Equal(t, (&Interrupted{Signal: syscall.SIGINT}).Code(), ExitInterrupted)
	assert.Equal(t, (&Interrupted{Signal: syscall.SIGTERM}).Code(), 143)
	assert.Equal(t, (&Interrupted{}).Code(), ExitInterrupted)
}

func TestDocsAgentKindsAreTheRegistry(t *testing.T) {
	var want [][]string
	for _, k := range kinds.Kinds {
		protocol := string(k.Protocol)
		if k.Builtin {
			protocol = "-"
		}
		want = append(want, []string{k.Name, protocol, k.Help})
	}
	assert.DeepEqual(t, docsTable(t, "| agent |"), want)
}
