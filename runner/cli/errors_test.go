package cli

import (
	"errors"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/session"
)

// TestClassifyNamesTheFlag: a library's typed error names no flag; its row in
// libraryErrors gives the exit code and the flag, and the advice that names one.
func TestClassifyNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		msg  string
	}{
		{inVerb("run", &session.BadNameError{Err: fmt.Errorf("replay cassette: %w", &session.EmptyCassetteError{Dir: "cas"})}), ExitUsage,
			"run: replay cassette: cassette cas holds no recordings (no index.json); record one with --record cas"},
		{inVerb("bench", &session.UnpricedError{Model: "openai:x", Prices: "2026-01-01"}), ExitUsage,
			"bench: --budget-usd: the price of openai:x is unknown (price table of 2026-01-01); give it in a --prices file"},
		{inVerb("run", &session.ResumeError{Err: errors.New("no manifest")}), ExitErrored, "run: --resume: no manifest"},
		{inVerb("run", &session.OutDirError{Err: fmt.Errorf("x: %w", session.ErrNotOutput)}), ExitUsage, "run: --out: x: not runner's output"},
		{inVerb("run", &session.OutDirError{Err: errors.New("disk full")}), ExitErrored, "run: output directory: disk full"},
		{outcome(0, 2), ExitErrored, ""},
		{outcome(1, 2), ExitFailed, ""},
		{failed(errors.New("denied")), ExitFailed, "denied"},
		{errored(errors.New("cannot write")), ExitErrored, "cannot write"},
	} {
		code, msg := classify(tc.err)
		assert.Equal(t, code, tc.code, "%v", tc.err)
		assert.Equal(t, msg, tc.msg)
	}
	assert.NilError(t, outcome(0, 0))
}
