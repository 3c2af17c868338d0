package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/agentrunner/runner/runner/session"
)

// Exit codes, the one documented switch (see docs/running.md, "Exit codes").
const (
	// ExitOK: every scenario passed (run), the task files are valid (validate), the tool
	// succeeded (tool), the call is allowed (policy check).
	ExitOK = 0
	// ExitFailed: a scenario failed, a tool returned an error, or a call is denied.
	ExitFailed = 1
	// ExitUsage: bad flags or arguments, or an invalid task file; nothing ran.
	ExitUsage = 2
	// ExitErrored: nothing failed, but some scenario errored (model unreachable, setup
	// failed, a tool call stuck past the timeout).
	ExitErrored = 3
	// ExitInterrupted: Ctrl-C (SIGINT) stopped the run before it was done, whatever had
	// finished: 128 + the signal's number, as shells report it; SIGTERM gives 143. The
	// reports hold what finished.
	ExitInterrupted = 130
)

// Interrupted is the error of a command that a signal (or, run as a library, its
// context) stopped before it was done; classify maps it to 128 + the signal.
type Interrupted struct {
	// Signal is what stopped it; nil when the context was cancelled another way (it
	// counts as Ctrl-C).
	Signal os.Signal
}

func (e *Interrupted) Error() string {
	if e.Signal == nil {
		return "interrupted"
	}
	return "interrupted (" + signalName(e.Signal) + ")"
}

// Code is the exit code: 128 + the signal's number (130 for SIGINT).
func (e *Interrupted) Code() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitInterrupted
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// ExitError carries an exit code out of a command. Err is printed unless it is nil.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError is a usage error (bad flags or arguments, nothing ran) with the message.
func usageError(format string, a ...any) error {
	return usage(fmt.Errorf(format, a...))
}

// usage marks err as a usage error: nothing ran.
func usage(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// verdictError is the outcome of a command that ran and did not pass: Failed counts what
// failed (scenarios in run and merge; a tool call that failed or was denied; a significant
// drop in bench; tasks import could not convert), Errored what infrastructure left undone
// (scenarios, bench cells, agent programs). Err, when set, is printed.
type verdictError struct {
	Failed, Errored int
	Err             error
}

func (e *verdictError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%d failed, %d errored", e.Failed, e.Errored)
	}
	return e.Err.Error()
}

func (e *verdictError) Unwrap() error { return e.Err }

// outcome is the verdict of failed and errored counts: nil when both are 0.
func outcome(failed, errored int) error {
	if failed == 0 && errored == 0 {
		return nil
	}
	return &verdictError{Failed: failed, Errored: errored}
}

// failed is the verdict of a command whose one thing failed (err, when set, is printed).
func failed(err error) error { return &verdictError{Failed: 1, Err: err} }

// erroredError: the command could not do its work for a reason that is not the user's
// input nor the agent's doing: an output that cannot be written, a directory that cannot
// be read, a program missing from the machine.
type erroredError struct{ err error }

func (e *erroredError) Error() string { return e.err.Error() }
func (e *erroredError) Unwrap() error { return e.err }

// errored marks err as the command's infrastructure error.
func errored(err error) error { return &erroredError{err: err} }

// verbError is an error of a library package met by the command verb: the message
// starts with the verb, and classify knows the kind from the error inside.
type verbError struct {
	verb string
	err  error
}

func (e *verbError) Error() string { return e.verb + ": " + e.err.Error() }
func (e *verbError) Unwrap() error { return e.err }

// inVerb marks err as met by the command verb (nil stays nil).
func inVerb(verb string, err error) error {
	if err == nil {
		return nil
	}
	return &verbError{verb: verb, err: err}
}

// exitCode prints err's message and returns its exit code. A task file that does not
// load prints as validate prints it: every problem a file:line:col: line, then the count.
func exitCode(err error, stderr io.Writer) int {
	if load := (*session.LoadError)(nil); errors.As(err, &load) {
		err = problemLines(stderr, load.Err)
	}
	code, msg := classify(err)
	if msg != "" {
		_, _ = fmt.Fprintf(stderr, "runner: %s\n", msg) // console output: a failed write has nowhere to be reported
	}
	return code
}

// classify is the one place that maps an error to its exit code and message: an
// *ExitError (usage errors) says both itself, a verdict and an infrastructure error are
// the command's outcome, and the library packages' typed errors are the rows of
// libraryErrors, whose messages name the flag they came from, which the packages
// themselves do not know. Anything else comes from flag parsing or an unknown command:
// a usage error.
func classify(err error) (code int, msg string) {
	if err == nil {
		return ExitOK, ""
	}
	verb := ""
	if ve := (*verbError)(nil); errors.As(err, &ve) {
		verb = ve.verb + ": "
	}
	var (
		exit    *ExitError
		verdict *verdictError
		infra   *erroredError
		intr    *Interrupted
	)
	switch {
	case errors.As(err, &intr):
		// Before ExitError: an interrupted run's partial counts say nothing of the suite.
		return intr.Code(), err.Error()
	case errors.As(err, &exit):
		if exit.Err == nil {
			return exit.Code, ""
		}
		return exit.Code, exit.Err.Error()
	case errors.As(err, &verdict):
		code := ExitErrored // nothing failed, but something errored
		if verdict.Failed > 0 {
			code = ExitFailed
		}
		if verdict.Err == nil {
			return code, ""
		}
		return code, err.Error()
	case errors.As(err, &infra):
		return ExitErrored, err.Error()
	}
	for _, k := range libraryErrors {
		if e, ok := k.match(err); ok {
			return k.code, verb + k.flag + e.Error() + k.hint(e)
		}
	}
	return ExitUsage, err.Error()
}

// errorKind is one typed error of the library packages: its exit code, and the flag its
// message is about (with what to write after it: "--filter ", "--out: "), plus advice
// that names a flag.
type errorKind struct {
	match func(error) (error, bool)
	code  int
	flag  string
	hint  func(error) string
}

// kind is the row of the error type E; only, when set, narrows it further.
func kind[E error](code int, flag string, only func(E) bool) errorKind {
	return errorKind{code: code, flag: flag, hint: func(error) string { return "" },
		match: func(err error) (error, bool) {
			var e E
			if !errors.As(err, &e) || only != nil && !only(e) {
				return nil, false
			}
			return e, true
		}}
}

// withHint adds advice after the message.
func (k errorKind) withHint(hint func(error) string) errorKind { k.hint = hint; return k }

// libraryErrors are the typed errors of the library packages, first match wins.
var libraryErrors = []errorKind{
	kind[*session.FilterError](ExitUsage, "--filter ", nil),
	kind[*session.BadNameError](ExitUsage, "", nil).withHint(recordHint),
	kind[*session.ShardError](ExitUsage, "--shard ", nil),
	kind[*session.OutDirError](ExitUsage, "--out: ", func(e *session.OutDirError) bool { return errors.Is(e, session.ErrNotOutput) }),
	kind[*session.OutDirError](ExitErrored, "output directory: ", nil),
	kind[*session.CacheError](ExitErrored, "--cache-dir: ", nil),
	kind[*session.PricesError](ExitUsage, "--prices: ", nil),
	kind[*session.UnknownVarError](ExitUsage, "--var/--vars: ", nil),
	kind[*session.UnpricedError](ExitUsage, "--budget-usd: ", nil).withHint(func(error) string { return "; give it in a --prices file" }),
	kind[*session.ResumeError](ExitErrored, "--resume: ", nil),
	kind[*session.AgentError](ExitUsage, "", nil),
}

// recordHint says how to fill a cassette that holds no recordings.
func recordHint(err error) string {
	if empty := (*session.EmptyCassetteError)(nil); errors.As(err, &empty) {
		return "; record one with --record " + empty.Dir
	}
	return ""
}
