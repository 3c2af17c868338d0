package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/suite"
	"github.com/agentrunner/runner/runner/task"
)

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

func usageError(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

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
// *ExitError says both itself; the library packages' typed errors are usage errors
// (nothing ran) or errored runs, and the message names the flag they came from, which
// the packages themselves do not know. Anything else comes from flag parsing or an
// unknown command: a usage error.
func classify(err error) (code int, msg string) {
	if err == nil {
		return ExitOK, ""
	}
	verb := ""
	if ve := (*verbError)(nil); errors.As(err, &ve) {
		verb = ve.verb + ": "
	}
	var (
		exit   *ExitError
		intr   *Interrupted
		filter *session.FilterError
		bad    *session.BadNameError
		outDir *session.OutDirError
		cache  *session.CacheError
		shard  *suite.ShardError
		prices *session.PricesError
		vars   *task.UnknownVarError
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
	case errors.As(err, &filter):
		return ExitUsage, verb + "--filter " + filter.Error()
	case errors.As(err, &bad):
		return ExitUsage, verb + bad.Error()
	case errors.As(err, &shard):
		return ExitUsage, verb + "--shard " + shard.Error()
	case errors.As(err, &outDir) && errors.Is(err, session.ErrNotOutput):
		return ExitUsage, verb + "--out: " + outDir.Error()
	case errors.As(err, &outDir):
		return ExitErrored, verb + "output directory: " + outDir.Error()
	case errors.As(err, &cache):
		return ExitErrored, verb + "--cache-dir: " + cache.Error()
	case errors.As(err, &prices):
		return ExitUsage, verb + "--prices: " + prices.Error()
	case errors.As(err, &vars):
		return ExitUsage, verb + "--var/--vars: " + vars.Error()
	}
	return ExitUsage, err.Error()
}
