package workspace

import (
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentrunner/runner/runner/task"
)

// Protect matches workspace paths against a task's verify.protect globs: the files that
// verification runs on (test files, conftest.py, Makefile) and the agent must not change.
// A nil *Protect protects nothing.
type Protect struct {
	patterns []string
}

// NewProtect checks the globs (doublestar syntax, slash-separated, relative to the
// workspace) and returns their matcher, nil when there are none.
// Absolute globs (paths inside an environment's container, see ContainerPaths) are left
// out.
func NewProtect(patterns []string) (*Protect, error) {
	var own []string
	for _, p := range patterns {
		if strings.HasPrefix(p, "/") {
			continue
		}
		if err := task.CheckProtectGlob(p); err != nil {
			return nil, err
		}
		own = append(own, p)
	}
	if len(own) == 0 {
		return nil, nil
	}
	return &Protect{patterns: own}, nil
}

// ProtectedOutside returns the first of changed (absolute paths inside an environment's
// container, outside the workspace) that an absolute verify.protect glob covers, and the
// glob; a glob that matches a directory covers everything under it.
func ProtectedOutside(patterns, changed []string) (string, string, bool) {
	for _, c := range changed {
		for q := path.Clean(c); q != "/" && q != "."; q = path.Dir(q) {
			for _, pat := range patterns {
				if !strings.HasPrefix(pat, "/") {
					continue
				}
				if ok, _ := doublestar.Match(pat, q); ok {
					return c, pat, true
				}
			}
		}
	}
	return "", "", false
}

// Match reports whether rel (slash-separated, relative to the workspace) is protected,
// and by which glob. A glob that matches a directory protects everything under it.
func (p *Protect) Match(rel string) (string, bool) {
	if p == nil {
		return "", false
	}
	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	for q := rel; q != "." && q != "/" && q != ""; q = path.Dir(q) {
		for _, pat := range p.patterns {
			if ok, _ := doublestar.Match(pat, q); ok {
				return pat, true
			}
		}
	}
	return "", false
}
