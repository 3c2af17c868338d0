package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentrunner/runner/tools"
)

// Sandbox modes, as a task file's sandbox key spells them.
const (
	ModeAuto     = "auto"
	ModeBwrap    = "bwrap"
	ModeLandlock = "landlock"
	ModeNone     = "none"
)

// Mode is one row of the registry of sandbox modes, and carries all there is to a mode:
// the task file's sandbox key, the --sandbox flags, their help and messages, the task
// schema and docs/sandbox.md read its Name and Help; Probe builds its wrapper; Auto gives
// its place in auto's order. What a mode leaves open on this machine is its wrapper's to
// say (a gaps method, see Gaps), since it depends on what the probe found. A mode is its
// file (wrapper, probe, gaps) plus its row in Modes.
type Mode struct {
	Name string
	// Help is the one line the schema and --help show.
	Help string
	// Auto makes auto try the mode, in the order of Modes (strongest first), and take the
	// first that works.
	Auto bool
	// Probe makes the mode's wrapper for this machine and proves that it works (a command
	// run through it, see selfTest), with a sentence describing the confinement for the
	// run's log; an error says why the mode cannot work here. Each mode is probed once per
	// process. nil only for auto, which probes the others.
	Probe func(ctx context.Context) (tools.CommandWrapper, string, error)
}

// Modes are the sandbox modes, strongest choice first.
var Modes = []Mode{
	{Name: ModeAuto, Help: "the strongest that works here: bwrap, then landlock, else none with a warning"},
	{Name: ModeBwrap, Help: "bubblewrap: own mount, PID and network namespaces, the view bind-mounted read-only",
		Auto: true, Probe: probeBwrap},
	{Name: ModeLandlock, Help: "Landlock and seccomp applied by a re-executed helper",
		Auto: true, Probe: probeLandlock},
	{Name: ModeNone, Help: "no confinement: commands run as the runner", Probe: probeNone},
}

// ModeNames lists the names of Modes, in order.
func ModeNames() []string {
	out := make([]string, len(Modes))
	for i, m := range Modes {
		out[i] = m.Name
	}
	return out
}

// ModeChoices is "auto, bwrap, landlock or none", for help and messages.
func ModeChoices() string {
	names := ModeNames()
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ErrUnknownMode is what CheckMode and Probe return for a name not in Modes.
var ErrUnknownMode = errors.New("unknown sandbox mode")

// CheckMode returns nil for a mode in Modes or "" (auto), else an error wrapping
// ErrUnknownMode that lists the modes.
func CheckMode(mode string) error {
	if mode == "" || slices.Contains(ModeNames(), mode) {
		return nil
	}
	return fmt.Errorf("%w %q (want %s)", ErrUnknownMode, mode, ModeChoices())
}

// Gaps lists, in short phrases, what w does not confine on this machine for a command with
// or without network: what the console's sandbox note, the transcript's start event and
// result.json's sandbox_gaps report. Empty means none known. A wrapper this package did not
// make has none to report.
func Gaps(w any, network bool) []string {
	if g, ok := w.(interface{ gaps(network bool) []string }); ok {
		return g.gaps(network)
	}
	return nil
}

type probeResult struct {
	wrapper tools.CommandWrapper
	reason  string
	err     error
}

// probes caches each mode's probe: the machine does not change during a run, and a probe
// runs a command.
var probes = struct {
	sync.Mutex
	done map[string]probeResult
}{done: map[string]probeResult{}}

// Probe returns the wrapper for mode (one of Modes; "" means auto) and a
// sentence describing the confinement for the run's log. auto takes the first of the modes
// it tries that works, and otherwise returns the none wrapper with a warning as the
// reason; an explicit mode that does not work is an error. Each mode is probed once per
// process, by running a command through it.
func Probe(ctx context.Context, mode string) (tools.CommandWrapper, string, error) {
	if mode == "" || mode == ModeAuto {
		return probeAuto(ctx)
	}
	if err := CheckMode(mode); err != nil {
		return nil, "", err
	}
	i := slices.IndexFunc(Modes, func(m Mode) bool { return m.Name == mode })
	if Modes[i].Probe == nil {
		return nil, "", fmt.Errorf("sandbox mode %q has no probe", mode) // a row without its probe
	}
	return probeOnce(ctx, Modes[i])
}

// probeAuto tries the modes auto may choose, strongest first.
func probeAuto(ctx context.Context) (tools.CommandWrapper, string, error) {
	var why []string
	for _, m := range Modes {
		if !m.Auto || m.Probe == nil {
			continue
		}
		w, reason, err := probeOnce(ctx, m)
		if err == nil {
			return w, reason, nil
		}
		why = append(why, fmt.Sprintf("%s: %v", m.Name, err))
	}
	return none{}, "WARNING: no sandbox works on this machine, commands run unconfined (" + strings.Join(why, "; ") + ")", nil
}

func probeOnce(ctx context.Context, m Mode) (tools.CommandWrapper, string, error) {
	probes.Lock()
	defer probes.Unlock()
	if r, ok := probes.done[m.Name]; ok {
		return r.wrapper, r.reason, r.err
	}
	var r probeResult
	r.wrapper, r.reason, r.err = m.Probe(ctx)
	if r.err != nil {
		r.err = fmt.Errorf("sandbox %s: %w", m.Name, r.err)
		r.wrapper = nil
	}
	// A cancelled probe says nothing about the machine: let the next caller try again.
	if ctx.Err() == nil {
		probes.done[m.Name] = r
	}
	return r.wrapper, r.reason, r.err
}
