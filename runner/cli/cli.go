// Package cli is the runner command line: one file per command, flags turned into
// options structs that carry the output writers (so tests capture them), and one place
// that maps errors to the documented exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/version"
)

// interrupted is the error a command returns when ctx ended before its work was done
// (nil when it did not): the signal Main recorded as the context's cause.
func interrupted(ctx context.Context) *Interrupted {
	if ctx.Err() == nil {
		return nil
	}
	var in *Interrupted
	if errors.As(context.Cause(ctx), &in) {
		return in
	}
	return &Interrupted{}
}

// IO holds the streams a command reads and writes.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Width is the columns help is wrapped to, asked only when help prints (nil: 80).
	Width func() int
}

// Main runs the command line with the process's streams and signals and returns the exit
// code. It is what main.go calls, and what testscript registers as the runner command.
func Main(args []string) int {
	if err := session.EnterProcess(); err != nil { // the Landlock re-exec helper never returns from it
		// Every command would inherit the runner's stray descriptors: refuse to start.
		return exitCode(errored(fmt.Errorf("cannot close inherited descriptors: %w", err)), os.Stderr)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal stops the run gracefully (reports are still written) and is
		// the context's cause, for the exit code; restoring the default handling lets a
		// second Ctrl-C end a run that hangs in cleanup.
		s := <-sigs
		signal.Stop(sigs)
		cancel(&Interrupted{Signal: s})
	}()
	width := func() int { return terminalWidth(os.Stdout, os.Getenv) }
	return Run(ctx, args, IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Width: width})
}

// Run runs the command line with the given streams and returns the exit code. Both
// output streams go through the secret scrubber: whatever prints, no credential the
// process knows reaches the console or a CI log.
func Run(ctx context.Context, args []string, stdio IO) int {
	stdout, stderr := session.Console(stdio.Stdout, stdio.Stderr)
	defer func() { _ = stdout.Flush() }() // console output: a failed write has nowhere to be reported
	defer func() { _ = stderr.Flush() }()
	stdio.Stdout, stdio.Stderr = stdout, stderr
	app := newApp(stdio)
	if n := len(args); n >= 2 && args[n-1] == completeFlag {
		// The completion scripts' question (see complete): answered here, not by urfave,
		// whose answer for a command without subcommands is "help h".
		words, cur := args[1:n-1], ""
		if len(words) > 0 {
			words, cur = words[:len(words)-1], words[len(words)-1]
		}
		complete(app, words, cur, stdio.Stdout)
		return exitCode(nil, stdio.Stderr)
	}
	if len(args) > 1 && (args[1] == "help" || args[1] == "h") {
		// `runner help run` is `runner run --help` (the help command itself is hidden:
		// urfave's answers "No help topic for 'help'").
		args = append(append([]string{args[0]}, args[2:]...), "--help")
	}
	if err := unknownCommand(app, args); err != nil {
		return exitCode(err, stdio.Stderr)
	}
	ordered, err := intersperse(app, args)
	if err != nil {
		return exitCode(usage(err), stdio.Stderr)
	}
	return exitCode(app.RunContext(ctx, ordered), stdio.Stderr)
}

func newApp(stdio IO) *cli.App {
	app := &cli.App{
		Name:  "runner",
		Usage: "run LLM agents through scripted tasks and check, in CI, whether they did the job",
		Description: "Exit codes:\n" +
			"   0  all passed\n" +
			"   1  a scenario failed (or a tool failed / a call is denied)\n" +
			"   2  usage error or invalid task file (nothing ran)\n" +
			"   3  none failed but some errored\n" +
			"   130  interrupted by Ctrl-C (143: SIGTERM); the reports hold what finished\n\n" +
			examplesHelp + "\n\n" + envHelp,
		EnableBashCompletion: true,
		// Commas are not urfave's to split: --var KEY=a,b is one value, and --models splits
		// its own list (providers.SplitList keeps oracle:fail=0.3,seed=1 whole).
		DisableSliceFlagSeparator: true,
		Version:                   version.String(),
		Reader:                    stdio.Stdin,
		Writer:                    &helpWriter{Writer: stdio.Stdout, width: stdio.Width},
		ErrWriter:                 stdio.Stderr,
		HideHelpCommand:           true,
		// Errors are mapped to exit codes in exitCode, never by os.Exit inside the library.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usage(err)
		},
		Commands: []*cli.Command{
			runCommand(stdio),
			benchCommand(stdio),
			validateCommand(stdio),
			toolsCommand(stdio),
			agentsCommand(stdio),
			toolCommand(stdio),
			policyCommand(stdio),
			schemaCommand(stdio),
			importCommand(stdio),
			mergeCommand(stdio),
			viewCommand(stdio),
			showCommand(stdio),
			initCommand(stdio),
			versionCommand(stdio),
		},
	}
	app.Commands = append(app.Commands, completionCommand(app, stdio))
	usageErrors(app.Commands, "")
	return app
}
