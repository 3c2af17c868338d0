// Package version says which build of runner is running, for `runner --version` and for
// every report, so results from several machines can be told apart.
package version

import (
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
)

// Version is set at link time by releases (-ldflags "-X .../runner/version.Version=v1.2.3").
var Version = ""

var (
	once   sync.Once
	cached string
)

// String is the release version, else the module version from the build info (a
// `go install module@version`), else "devel-<commit>" ("-dirty" when the checkout had
// changes) for a build from a checkout, else "devel".
func String() string {
	once.Do(func() { cached = compute(Version, debug.ReadBuildInfo) })
	return cached
}

func compute(linked string, read func() (*debug.BuildInfo, bool)) string {
	if linked != "" {
		return linked
	}
	info, ok := read()
	if !ok {
		return "devel"
	}
	// Since Go 1.24 a build in a checkout gets a pseudo-version from the VCS
	// (v0.0.0-20261125230716-f9bf47390b69, "+dirty" when modified): that names no release,
	// so it prints as the commit, as a build without the stamp does.
	if v := info.Main.Version; v != "" && v != "(devel)" && !isPseudo(v) {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev + dirty
}

// pseudo matches a Go pseudo-version (vX.0.0-yyyymmddhhmmss-abcdef123456, or
// vX.Y.Z-pre.0.yyyymmddhhmmss-abcdef123456 after a tag), with any "+dirty" build suffix.
var pseudo = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-(?:[0-9A-Za-z.-]*\.)?(?:0\.)?[0-9]{14}-[0-9a-f]{12}$`)

func isPseudo(v string) bool {
	v, _, _ = strings.Cut(v, "+")
	return pseudo.MatchString(v)
}
