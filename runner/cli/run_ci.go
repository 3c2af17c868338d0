package cli

import (
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/report"
	"github.com/agentrunner/runner/runner/session"
)

// ciFlags are run's flags for splitting a suite across machines and picking up after a
// killed or failed run.
func (o *RunOptions) ciFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Destination: &o.Shard, Usage: "run only part `I/N` of the suite (1 <= I <= N), split by a stable hash of each scenario; " +
			"auto[/N] reads I from JOB_COMPLETION_INDEX (Kubernetes Indexed Job) and N from RUNNER_SHARD_COUNT"},
		&cli.StringFlag{Name: "resume", Destination: &o.Resume, Usage: "reuse the finished results in `DIR` (an earlier --out), run the rest, report the union; --out defaults to DIR"},
		&cli.StringFlag{Name: "rerun-failed", Destination: &o.RerunFailed, Usage: "reuse the passed results in `DIR`, run every other scenario again, report the union; --out defaults to DIR"},
	}
}

// withResumeOut writes into the resumed directory unless --out was given, so the next
// --resume of the same directory sees every result.
func (o *RunOptions) withResumeOut(outSet bool) RunOptions {
	if outSet {
		return *o
	}
	if o.Resume != "" {
		o.OutDir = o.Resume
	} else if o.RerunFailed != "" {
		o.OutDir = o.RerunFailed
	}
	return *o
}

// continuesOut says --out is the directory --resume or --rerun-failed continues: the
// run adds to it rather than moving it aside (session.PrepareOut).
func (o *RunOptions) continuesOut() bool {
	for _, dir := range []string{o.Resume, o.RerunFailed} {
		if dir != "" && samePath(dir, o.OutDir) {
			return true
		}
	}
	return false
}

func samePath(a, b string) bool {
	if a, err := filepath.Abs(a); err == nil {
		if b, err := filepath.Abs(b); err == nil {
			return a == b
		}
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

func (o *RunOptions) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

func (o *RunOptions) checkCI() error {
	if err := checkReportPaths("run", o.JSON, o.JUnit); err != nil {
		return err
	}
	if o.Resume != "" && o.RerunFailed != "" {
		return usageError("run: --resume and --rerun-failed: give one of them")
	}
	if o.Shard != "" {
		if err := session.CheckShard(o.Shard, o.getenv); err != nil {
			return inVerb("run", err)
		}
	}
	return nil
}

// consoleOptions honours NO_COLOR (no colour) and TERM=dumb (no escape codes at all,
// so no live progress line either).
func (o *RunOptions) consoleOptions(tty bool, files []string) report.ConsoleOptions {
	opts := consoleOptions(tty, o.getenv, o.OutDir)
	opts.Reports = files
	return opts
}

// consoleOptions are the console's options for run and bench alike: on a terminal (not
// TERM=dumb) a live progress line and symbols, in colour unless NO_COLOR.
func consoleOptions(tty bool, getenv func(string) string, outDir string) report.ConsoleOptions {
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("TERM") == "dumb" {
		tty = false
	}
	return report.ConsoleOptions{TTY: tty, Color: tty && getenv("NO_COLOR") == "", OutDir: outDir}
}

// reporters are the outputs of run and merge: the console (naming the report files),
// the JSON and JUnit files asked for, and GitHub's annotations and summary on Actions.
// A report file "-" is written to standard output, and the console and annotations then
// go to standard error, so that what a pipe reads is the report alone (see
// checkReportPaths).
func (o *RunOptions) reporters(tty bool, jsonPath, junitPath, outDir string) report.Reporter {
	var files []string
	console := o.Stdout
	rs := []report.Reporter{nil} // the console goes first, once it knows the files
	for _, f := range []struct {
		path  string
		write report.WriteFunc
	}{{jsonPath, report.WriteJSON}, {junitPath, report.JUnit(report.JUnitOptions{})}} {
		switch f.path {
		case "":
		case report.Stdout:
			console, tty = o.Stderr, isatty.IsTerminal(fdOf(o.Stderr))
			rs = append(rs, report.Stream(o.Stdout, f.write))
		default:
			files = append(files, f.path)
			rs = append(rs, report.File(f.path, f.write))
		}
	}
	opts := o.consoleOptions(tty, files)
	opts.OutDir = outDir
	rs[0] = report.NewConsole(console, opts)
	if gh, ok := report.GitHubFromEnv(o.getenv, console, outDir); ok {
		rs = append(rs, gh)
	}
	return report.Multi(rs...)
}

// checkReportPaths refuses two reports on standard output: they would interleave into
// something neither reader can parse.
func checkReportPaths(verb, jsonPath, junitPath string) error {
	if jsonPath == report.Stdout && junitPath == report.Stdout {
		return usageError("%s: --json - and --junit -: only one report can go to standard output", verb)
	}
	return nil
}

// runOptions are the run's part of the suite (--shard), the earlier run it continues
// (--resume, --rerun-failed) and its budget, with the reporter observing each scenario.
func (o *RunOptions) runOptions(r report.Reporter) session.RunOptions {
	ro := session.RunOptions{Parallel: o.Parallel, Repeat: o.Repeat, Shard: o.Shard, Getenv: o.getenv, BudgetUSD: o.BudgetUSD,
		OnStart: r.Started, OnDone: r.Finished, Resume: o.Resume, Notes: o.Stderr}
	if o.RerunFailed != "" {
		ro.Resume, ro.PassedOnly = o.RerunFailed, true
	}
	return ro
}
