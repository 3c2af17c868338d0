package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// helpAt renders `runner ARGS... --help` wrapped to width.
func helpAt(t *testing.T, width int, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), append(append([]string{"runner"}, args...), "--help"),
		IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Width: func() int { return width }})
	assert.Equal(t, code, ExitOK, "%v: %s", args, errOut.String())
	return out.String()
}

// every command's path: run, bench, bench compare, policy check...
func commandPaths(cmds []*cli.Command, prefix []string) [][]string {
	var paths [][]string
	for _, c := range cmds {
		p := append(append([]string{}, prefix...), c.Name)
		paths = append(paths, p)
		paths = append(paths, commandPaths(c.Subcommands, p)...)
	}
	return paths
}

// No line of any help is wider than the terminal (80 columns in CI): it was padded to
// 140+ columns, 276 for run's longest flag.
func TestHelpFitsTheWidth(t *testing.T) {
	paths := append([][]string{{}}, commandPaths(newApp(IO{}).Commands, nil)...)
	assert.Assert(t, len(paths) > 12)
	for _, width := range []int{80, 100, 60} {
		for _, p := range paths {
			help := helpAt(t, width, p...)
			assert.Assert(t, is.Contains(help, "USAGE:"), "%v", p)
			for _, line := range strings.Split(help, "\n") {
				assert.Check(t, utf8.RuneCountInString(line) <= width, "runner %s --help at %d columns: %d: %q",
					strings.Join(p, " "), width, utf8.RuneCountInString(line), line)
				assert.Check(t, !strings.Contains(line, "\t"), "%q", line)
				assert.Check(t, !strings.HasPrefix(strings.TrimSpace(line), "help, h"), "runner %s --help lists a help subcommand", strings.Join(p, " "))
			}
		}
	}
}

// A flag's usage wraps under itself (a hanging indent), and a wide terminal keeps it on
// one line.
func TestHelpWrapsFlagsWithAHangingIndent(t *testing.T) {
	help := helpAt(t, 80, "run")
	lines := strings.Split(help, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "   --cache-dir DIR ") {
			col := strings.Index(l, "build cache")
			assert.Assert(t, col > 0, l)
			next := lines[i+1]
			assert.Check(t, strings.TrimLeft(next, " ") != "" && len(next)-len(strings.TrimLeft(next, " ")) == col, "%q\n%q", l, next)
		}
	}
	assert.Check(t, is.Contains(help, "   --var KEY=VALUE ...  "), "a repeatable flag says so once")
	wide := helpAt(t, 300, "run")
	assert.Check(t, is.Regexp(`(?m)^   --cache-dir DIR +build cache DIR .*\(default: .*\)$`, wide))
}

// `runner help CMD` is `runner CMD --help`.
func TestHelpCommand(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"help", "run"}, {"h", "bench", "compare"}} {
		code, stdout, stderr := invoke(t, args...)
		assert.Equal(t, code, ExitOK, "%v: %s", args, stderr)
		assert.Equal(t, stdout, helpAt(t, 80, args[1:]...), "%v", args)
	}
	code, _, stderr := invoke(t, "help", "rn")
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, is.Contains(stderr, `did you mean "run"?`))
}

// Without a terminal (CI, a pipe) help is 80 columns wide.
func TestTerminalWidthWithoutATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	assert.NilError(t, err)
	defer f.Close()
	env := map[string]string{"COLUMNS": "200"}
	assert.Equal(t, terminalWidth(f, func(k string) string { return env[k] }), 80)
}
