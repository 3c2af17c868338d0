package kinds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// CheckStatus is what `runner agents --check` found for one kind.
type CheckStatus string

// The statuses of a check.
const (
	CheckOK       CheckStatus = "ok"       // found, and its version is the tested one
	CheckUntested CheckStatus = "untested" // found and runs, at another version than the tested one
	CheckMissing  CheckStatus = "missing"  // not on PATH nor in $RUNNER_AGENTS_DIR
	CheckBroken   CheckStatus = "broken"   // found, but its version probe failed
)

// Check is the outcome of checking one kind's program.
type Check struct {
	Status CheckStatus
	// Path is the program found ("" when missing); Version what its probe printed, parsed.
	Path, Version string
	// Problem says what is wrong and how to fix it ("" when Status is ok).
	Problem string
}

// Checkable says whether `runner agents --check` probes the kind: an installed program with
// a version probe (not the built-in loop, not a task's own command).
func (k Kind) Checkable() bool { return !k.Builtin && k.Program != "" && k.VersionArgs != nil }

// probeTimeout bounds a version probe: the programs answer in well under a second.
const probeTimeout = 20 * time.Second

// versionPattern finds a version in a probe's output ("2.1.332 (Claude Code)",
// "codex-cli 0.171.0").
var versionPattern = regexp.MustCompile(`\b\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?\b`)

// Check finds the kind's program (as Find does), runs its version probe and compares the
// version with the tested one.
func (k Kind) Check(ctx context.Context, path, agentsDir string) Check {
	prog, err := k.Find(path, agentsDir)
	if err != nil {
		return Check{Status: CheckMissing, Problem: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, k.VersionArgs...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	first, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Check{Status: CheckBroken, Path: prog, Problem: fmt.Sprintf("%s %s did not answer within %s", prog, strings.Join(k.VersionArgs, " "), probeTimeout)}
	case err != nil:
		return Check{Status: CheckBroken, Path: prog, Problem: fmt.Sprintf("%s %s: %v: %s", prog, strings.Join(k.VersionArgs, " "), err, first)}
	}
	v := versionPattern.FindString(out.String())
	switch {
	case v == "":
		return Check{Status: CheckBroken, Path: prog, Problem: fmt.Sprintf("%s %s printed no version: %q", prog, strings.Join(k.VersionArgs, " "), first)}
	case k.Tested != "" && v != k.Tested:
		return Check{Status: CheckUntested, Path: prog, Version: v,
			Problem: fmt.Sprintf("version %s; runner's tests drive %s (%s)", v, k.Tested, k.Install)}
	}
	return Check{Status: CheckOK, Path: prog, Version: v}
}
