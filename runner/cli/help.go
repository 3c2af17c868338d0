package cli

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
)

// defaultWidth is the help's width without a terminal (CI logs, pipes, files).
const defaultWidth = 80

func init() { cli.HelpPrinter = printHelp }

// helpTemplate rewrites urfave's help templates: it renders each flag as "names\tusage"
// through a tabwriter, one line per flag (276 columns for run's longest). The flag lists
// and the usage line are rendered here instead, wrapped with a hanging indent, and every
// other text through wrapText. Built at the first help, not at every start.
var helpTemplate = sync.OnceValue(func() *strings.Replacer {
	return strings.NewReplacer(
		`{{template "visibleFlagCategoryTemplate" .}}`, `{{flagList .VisibleFlags}}`,
		`{{template "visibleFlagTemplate" .}}`, `{{flagList .VisibleFlags}}`,
		`{{template "usageTemplate" .}}`, `{{commandUsage .}}`,
	)
})

// helpWriter is the app's Writer: the output, and the width help is wrapped to.
type helpWriter struct {
	io.Writer
	width func() int
}

func printHelp(w io.Writer, templ string, data any) {
	width := defaultWidth
	if hw, ok := w.(*helpWriter); ok && hw.width != nil {
		width = hw.width()
	}
	cli.HelpPrinterCustom(w, helpTemplate().Replace(templ), data, map[string]any{
		"wrap":     func(s string, offset int) string { return wrapText(s, offset, width) },
		"flagList": func(flags []cli.Flag) string { return flagList(flags, width) },
		"commandUsage": func(c *cli.Command) string {
			if c.UsageText != "" {
				return wrapText(c.UsageText, 3, width)
			}
			rest := "[command options]"
			if c.ArgsUsage != "" {
				rest += " " + c.ArgsUsage
			}
			// The arguments continue under themselves, after "runner run ".
			head := c.HelpName + " "
			pad := strings.Repeat(" ", 3+utf8.RuneCountInString(head))
			return head + wrapLine(rest, width-len(pad), pad)
		},
	})
}

// terminalWidth is the width help is wrapped to on f: the terminal's columns (its size,
// else COLUMNS), or 80 when f is no terminal or in CI, so logs read the same everywhere.
func terminalWidth(f *os.File, getenv func(string) string) int {
	if getenv("CI") != "" || !isatty.IsTerminal(f.Fd()) {
		return defaultWidth
	}
	w := terminalColumns(f.Fd())
	if w <= 0 {
		w, _ = strconv.Atoi(getenv("COLUMNS"))
	}
	if w <= 0 {
		return defaultWidth
	}
	return max(w, 40) // narrower, every line would be one word
}

// flagList renders flags one to a paragraph: the names, then the usage in a column,
// wrapped under itself; names too long for the column put the usage on the next line.
func flagList(flags []cli.Flag, width int) string {
	type row struct{ names, usage string }
	rows := make([]row, 0, len(flags))
	limit := min(30, width/3) // the widest names that still share their line
	col := 0
	for _, f := range flags {
		names, usage, _ := strings.Cut(f.String(), "\t")
		// A repeatable flag reads "--var KEY=VALUE [ --var KEY=VALUE ]": say it once.
		if i := strings.Index(names, " [ "); i > 0 && names[i+3:] == names[:i]+" ]" {
			names = names[:i] + " ..."
		}
		rows = append(rows, row{names, usage})
		if n := utf8.RuneCountInString(names); n <= limit {
			col = max(col, n)
		}
	}
	col += 3 + 2 // the section's indent, and two spaces before the usage
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("\n   " + wrapLine(r.names, width-3, "     "))
		if r.usage == "" {
			continue
		}
		if n := 3 + utf8.RuneCountInString(r.names); n+2 <= col {
			b.WriteString(strings.Repeat(" ", col-n))
		} else {
			b.WriteString("\n" + strings.Repeat(" ", col))
		}
		b.WriteString(wrapText(r.usage, col, width))
	}
	return b.String()
}

// wrapText wraps s, whose first line starts at column offset, to width columns; later lines
// are indented by offset. A wrapped line keeps its own indentation, and a line that is
// two columns ("NAME  what it is") continues under its second column.
func wrapText(s string, offset, width int) string {
	lines := strings.Split(s, "\n")
	pad := strings.Repeat(" ", offset)
	for i, line := range lines {
		wrapped := wrapLine(line, width-offset, pad)
		if i > 0 && line != "" {
			wrapped = pad + wrapped
		}
		lines[i] = wrapped
	}
	return strings.Join(lines, "\n")
}

// wrapLine breaks line into lines of at most avail columns (a word longer than that
// stays whole), each continuation prefixed with pad and the hanging indent.
func wrapLine(line string, avail int, pad string) string {
	if utf8.RuneCountInString(line) <= avail {
		return line
	}
	body := strings.TrimLeft(line, " ")
	indent := len(line) - len(body)
	hang := indent
	if i := strings.Index(body, "  "); i > 0 {
		if rest := strings.TrimLeft(body[i:], " "); rest != "" {
			if h := len(line) - len(rest); utf8.RuneCountInString(line[:h]) <= avail/2 {
				hang = h
			}
		}
	}
	head, words := line[:hang], strings.Fields(line[hang:])
	hangCols := utf8.RuneCountInString(head)
	var b strings.Builder
	b.WriteString(head)
	n := hangCols
	for i, w := range words {
		wn := utf8.RuneCountInString(w)
		switch {
		case i == 0:
		case n+1+wn > avail:
			// A word too long for the hanging indent (a URL) starts further left.
			at := min(hangCols, max(indent, avail-wn))
			b.WriteString("\n" + pad + strings.Repeat(" ", at))
			n = at
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += wn
	}
	return b.String()
}
