package exec

import (
	"fmt"
	"path"
	"strings"
	"unicode"
)

// Stuck is what a command that timed out was doing when it was killed, so the message
// can say more than "timed out": its innermost processes, read from their command lines
// a moment before the kill (Linux's /proc; empty elsewhere), and how loaded the machine
// was. A Go build from a cold cache on a busy machine is the usual case: "compiling Go
// package fmt" says at once that raising the timeout or warming the cache helps.
type Stuck struct {
	// Doing describes the innermost processes ("compiling Go package fmt; compiling Go
	// package os"); "" when none was found.
	Doing string
	// Load is the 1-minute load average then, and CPUs the machine's processors (0 when
	// unknown).
	Load float64
	CPUs int
}

// String is "compiling Go package fmt; load average 14.2 on 2 CPUs", or "" when nothing
// is known.
func (s Stuck) String() string {
	var parts []string
	if s.Doing != "" {
		parts = append(parts, s.Doing)
	}
	if s.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("load average %.1f on %d CPUs", s.Load, s.CPUs))
	}
	return strings.Join(parts, "; ")
}

// Busy reports whether the machine ran more than it had processors for.
func (s Stuck) Busy() bool { return s.CPUs > 0 && s.Load > float64(s.CPUs) }

// maxLeaves bounds how many processes Doing names; maxDoing its length. Command lines
// are whatever the agent started: cut, and control characters dropped.
const (
	maxLeaves = 3
	maxDoing  = 300
)

// programs says what a known program is doing, from its argv: Go's toolchain above all,
// whose compile of the standard library from a cold cache is what most often outlasts a
// timeout.
var programs = map[string]func(args []string) string{
	"compile": func(a []string) string { return "compiling Go package " + flagValue(a, "-p", "?") },
	"asm":     func(a []string) string { return "assembling Go package " + flagValue(a, "-p", "?") },
	"link":    func(a []string) string { return "linking a Go binary" },
	"vet":     func(a []string) string { return "running go vet" },
	"cgo":     func(a []string) string { return "running cgo" },
	"cc1":     func(a []string) string { return "compiling C" },
	"cc1plus": func(a []string) string { return "compiling C++" },
}

// describe is one process as Doing names it.
func describe(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	name := path.Base(argv[0])
	if d, ok := programs[name]; ok {
		return d(argv[1:])
	}
	if pkg, ok := strings.CutSuffix(name, ".test"); ok && pkg != "" {
		return "running the tests of " + pkg + " (" + name + ")"
	}
	return "running " + strings.Join(append([]string{name}, argv[1:]...), " ")
}

// describeAll joins the innermost processes' descriptions, the same one counted once.
func describeAll(leaves [][]string) string {
	var out []string
	seen := map[string]bool{}
	for _, argv := range leaves {
		d := printable(describe(argv), 100)
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	more := ""
	if len(out) > maxLeaves {
		more = fmt.Sprintf("; and %d more", len(out)-maxLeaves)
		out = out[:maxLeaves]
	}
	return printable(strings.Join(out, "; ")+more, maxDoing)
}

// flagValue is the value of flag in args ("-p fmt" or "-p=fmt"), else def.
func flagValue(args []string, flag, def string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return def
}

// printable drops control and format characters (escapes, bidi overrides) and cuts s
// to n bytes at a rune boundary.
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
