package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/view"
)

// ViewOptions are the flags of `runner view`.
type ViewOptions struct {
	// Out is the output directory (of run, bench or a merged download).
	Out string
	// Open opens the index in a browser when there is a display.
	Open bool
	// Getenv reads DISPLAY, WAYLAND_DISPLAY and BROWSER; nil means os.Getenv.
	Getenv func(string) string
	IO
}

func viewCommand(stdio IO) *cli.Command {
	return &cli.Command{
		Name:      "view",
		Usage:     "write OUT/index.html and a page per scenario: what the agent did, step by step",
		ArgsUsage: "[OUT] (an output directory; default runner-out)",
		Description: "Every run writes these pages; view rewrites them, for older output or a folder of " +
			"downloaded artifacts, and prints the index's path. The pages are static files: they " +
			"work from file:// and from an artifact zip, with no server and no network.\n\n" +
			"Examples:\n" +
			"   runner view runner-out --open\n" +
			"   runner show runner-out            (the same story in the terminal)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "open", Usage: "open the index in a browser (when there is a display)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageError("view: want one output directory, got %d", c.NArg())
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
		return &ExitError{Code: ExitErrored, Err: err}
	}
	fmt.Fprintln(opts.Stdout, index)
	if opts.Open {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if err := openBrowser(index, getenv); err != nil {
			fmt.Fprintf(opts.Stderr, "runner: view: %v\n", err)
		}
	}
	return nil
}

// writeView writes the pages at the end of a run; a failure is a warning, not the run's
// verdict.
func writeView(out string, stderr io.Writer) {
	if _, err := view.Write(out); err != nil {
		fmt.Fprintf(stderr, "runner: warning: %v\n", err)
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
