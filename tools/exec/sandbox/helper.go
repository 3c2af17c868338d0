package sandbox

import "github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"

// HelperArg is the hidden first argument with which the runner re-executes itself as the
// sandbox helper: os.Args = [exe, HelperArg, config, program, argv...].
const HelperArg = confine.Arg

// RunHelperIfRequested turns the process into the sandbox helper when it was started as
// one (os.Args[1] == HelperArg): it applies the limits and rules it was given and executes
// the command in its place, never returning; if that fails it prints why and exits 126.
// Otherwise it returns at once. The CLI's main calls it first thing, and a test binary
// that runs sandboxed commands calls it from TestMain.
//
// In fact the helper has already run by then, from the init of the internal package that
// implements it, before the runner's other packages spend milliseconds initialising; this
// call keeps the hand-over explicit and works even if that changes.
func RunHelperIfRequested() { confine.RunIfRequested() }

// SealInheritedDescriptors marks every descriptor above stderr close-on-exec, so that no
// command, tool, server or container CLI the runner starts inherits what the runner itself
// inherited (a secret file, a CI log, make's jobserver: `runner run 7<secret 8>>log`).
// The CLI's main calls it right after RunHelperIfRequested; the helper seals its own
// again above the descriptors it hands on.
func SealInheritedDescriptors() error { return sealDescriptors(3) }
