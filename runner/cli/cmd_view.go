package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/view"
)

// ViewOptions are the flags of `runner view`.
type ViewOptions struct {
	// Out is the output directory (of run, bench or a merged download).
	Out string
	// Runs, when there are two or more, are output directories to compare: side by side,
	// and each scenario against the run before; Compare is where those pages go.
	Runs    []string
	Compare string
	// Open opens the index in a browser when there is a display.
	Open bool
	// Getenv reads DISPLAY, WAYLAND_DISPLAY and BROWSER; nil means os.Getenv.
	Getenv func(string) string
	IO
}

func viewCommand(stdio IO) *cli.Command {
	return &cli.Command{
		Name:      "view",
		Usage:     "write OUT/index.html and a page per scenario: what the agent did, step by step; with several OUTs, the runs side by side and each scenario compared with the run before",
		ArgsUsage: "[OUT...] (output directories; default runner-out)",
		Description: "Every run writes these pages; view rewrites them, for older output or a folder of " +
			"downloaded artifacts, and prints the index's path. The pages are static files: they " +
			"work from file:// and from an artifact zip, with no server and no network.\n\n" +
			"With several directories (last night's and tonight's, two models' runs) it also writes a comparison " +
			"into --out: the runs side by side (date, model, pass rate, counts), a grid of every scenario's " +
			"verdict in each, and per scenario a page comparing it with the run before: the verdicts, steps, " +
			"tokens, the assertions that changed, and the steps side by side from the first where they differ. " +
			"Scenarios are matched by name (and repeat; and model, for a bench's output).\n\n" +
			"Examples:\n" +
			"   runner view runner-out --open\n" +
			"   runner view nightly-1/ nightly-2/ --out compare/\n" +
			"   runner show runner-out            (the same story in the terminal)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "open", Usage: "open the index in a browser (when there is a display)"},
			&cli.StringFlag{Name: "out", Value: "runner-compare", Usage: "`DIR` for the comparison of several directories"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return ViewRuns(ViewOptions{Runs: c.Args().Slice(), Compare: c.String("out"), Open: c.Bool("open"), IO: stdio})
			}
			out := "runner-out"
			if c.NArg() == 1 {
				out = c.Args().First()
			}
			return View(ViewOptions{Out: out, Open: c.Bool("open"), IO: stdio})
		},
	}
}

// View runs `runner view`.
func View(opts ViewOptions) error {
	info, err := os.Stat(opts.Out)
	if err != nil || !info.IsDir() {
		return usageError("view: %s is not an output directory (try: runner view runner-out)", opts.Out)
	}
	index, err := view.Write(opts.Out)
	if err != nil {
		return errored(err)
	}
	_, _ = fmt.Fprintln(opts.Stdout, index) // console output: a failed write has nowhere to be reported
	if opts.Open {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if err := openBrowser(index, getenv); err != nil {
			_, _ = fmt.Fprintf(opts.Stderr, "runner: view: %v\n", err)
		}
	}
	return nil
}

// ViewRuns runs `runner view A B ...`: each directory's own pages, then the comparison.
func ViewRuns(opts ViewOptions) error {
	for _, d := range opts.Runs {
		if info, err := os.Stat(d); err != nil || !info.IsDir() {
			return usageError("view: %s is not an output directory", d)
		}
		if filepath.Clean(d) == filepath.Clean(opts.Compare) {
			return usageError("view: --out %s is one of the runs; the comparison needs a directory of its own", opts.Compare)
		}
	}
	for _, d := range opts.Runs {
		if _, err := view.Write(d); err != nil {
			return errored(err)
		}
	}
	index, sum, err := view.WriteRuns(opts.Compare, opts.Runs)
	if err != nil {
		return errored(err)
	}
	_ = sum.WriteText(opts.Stdout, 20) // console output: a failed write has nowhere to be reported
	_, _ = fmt.Fprintln(opts.Stdout, index)
	if opts.Open {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if err := openBrowser(index, getenv); err != nil {
			_, _ = fmt.Fprintf(opts.Stderr, "runner: view: %v\n", err)
		}
	}
	return nil
}

// writeView writes the pages at the end of a run; a failure is a warning, not the run's
// verdict.
func writeView(out string, stderr io.Writer) {
	if _, err := view.Write(out); err != nil {
		_, _ = fmt.Fprintf(stderr, "runner: warning: %v\n", err)
	}
}

// openBrowser opens path in the desktop's browser ($BROWSER first). On Linux a display
// is required: over ssh or in CI there is nothing to open, and the path was printed.
func openBrowser(path string, getenv func(string) string) error {
	var argv []string
	switch {
	case getenv("BROWSER") != "":
		argv = []string{getenv("BROWSER"), path}
	case runtime.GOOS == "darwin":
		argv = []string{"open", path}
	case runtime.GOOS == "windows":
		argv = []string{"rundll32", "url.dll,FileProtocolHandler", path}
	case getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "":
		return fmt.Errorf("no display to open a browser on: open %s where there is one", path)
	default:
		argv = []string{"xdg-open", path}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open a browser: %w", err)
	}
	go cmd.Wait() //nolint:errcheck // the browser outlives us; reap it if it exits first
	return nil
}
