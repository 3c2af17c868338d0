package scenario

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentrunner/runner/runner/agent"
	"github.com/agentrunner/runner/runner/policy"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/runner/workspace/door"
	"github.com/agentrunner/runner/tools"
)

// SourceProtect is the policy.Decision source of a write denied by verify.protect.
const SourceProtect = "verify.protect"

// maxMoveScan bounds the entries of a moved directory checked against the globs; the
// comparison after the agent catches whatever lies beyond.
const maxMoveScan = 10_000

// protectDecider denies file-tool writes to protected paths before the approval policy
// sees them. It is the courteous half of verify.protect: the agent learns at once, with
// a reason. The manifest comparison after the agent is the guarantee, and also catches
// what commands changed.
type protectDecider struct {
	next     agent.Decider
	protect  *workspace.Protect
	manifest *workspace.Manifest
}

// Decide implements agent.Decider.
func (p protectDecider) Decide(ctx context.Context, call *tools.Call, ws *tools.Workspace) policy.Decision {
	if call.Risk() != tools.RiskReadOnly && ws != nil {
		for _, key := range []string{"path", "file_path", "from", "to"} {
			if v := call.Args.String(key); v != "" {
				if d, denied := p.check(call, ws, key, v); denied {
					return d
				}
			}
		}
	}
	return p.next.Decide(ctx, call, ws)
}

func (p protectDecider) check(call *tools.Call, ws *tools.Workspace, key, given string) (policy.Decision, bool) {
	rel, terr := ws.ResolveNoFollow(given)
	if terr != nil {
		return policy.Decision{}, false // the tool reports the bad path itself
	}
	for _, cand := range []string{rel, realRel(ws, rel)} {
		if cand == "" {
			continue
		}
		if glob, ok := p.protect.Match(cand); ok {
			return denyProtected(given, cand, glob), true
		}
		if under, glob, ok := p.manifest.ProtectedUnder(cand); ok {
			return denyProtected(given, under, glob), true
		}
	}
	if key == "to" {
		if from, terr := ws.ResolveNoFollow(call.Args.String("from")); terr == nil {
			if hit, glob, ok := p.movedInto(ws, from, rel); ok {
				return denyProtected(given, hit, glob), true
			}
		}
	}
	return policy.Decision{}, false
}

// movedInto reports a protected path that moving the directory from to to would create.
func (p protectDecider) movedInto(ws *tools.Workspace, from, to string) (string, string, bool) {
	info, err := ws.Root().Lstat(from)
	if err != nil || !info.IsDir() {
		return "", "", false
	}
	if g, ok := p.protect.Match(to); ok {
		return to, g, true
	}
	top, err := door.Open(ws.Dir())
	if err != nil {
		return "", "", false
	}
	defer func() { _ = top.Close() }() // a directory handle: Close loses no data
	d, err := top.Sub(from)
	if err != nil {
		return "", "", false
	}
	defer func() { _ = d.Close() }() // a directory handle: Close loses no data
	var hit, glob string
	_ = d.Walk(context.Background(), door.Limits{MaxEntries: maxMoveScan}, func(e door.Entry) error {
		target := path.Join(to, e.Path)
		if g, ok := p.protect.Match(target); ok {
			hit, glob = target, g
			return fs.SkipAll
		}
		return nil
	})
	return hit, glob, hit != ""
}

// realRel is rel with symlinks resolved, when that stays inside the workspace ("" when
// it is the same or cannot be told): a link the agent made to a protected file must not
// be a way to write it.
func realRel(ws *tools.Workspace, rel string) string {
	abs := ws.Abs(rel)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		// A file about to be created: resolve its directory.
		dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
		if err != nil {
			return ""
		}
		real = filepath.Join(dir, filepath.Base(abs))
	}
	r, err := filepath.Rel(ws.Dir(), real)
	if err != nil || !filepath.IsLocal(r) {
		return ""
	}
	if r = filepath.ToSlash(r); r == rel {
		return ""
	}
	return r
}

func denyProtected(given, protected, glob string) policy.Decision {
	what := protected
	if what != given {
		what = fmt.Sprintf("%s (through %s)", protected, given)
	}
	return policy.Decision{
		Source: SourceProtect, By: "verify.protect",
		Rule:   fmt.Sprintf("verify.protect %q", glob),
		Reason: fmt.Sprintf("%s is protected by the task (verify.protect %q): verification runs on it, so it may not be changed", what, glob),
		Suggestion: "Leave protected files as they are and change the code under test instead; " +
			"changing them by other means fails the scenario.",
	}
}

// fileChanges turns a comparison into the result's record, lists capped.
func fileChanges(c workspace.Changes) *result.FileChanges {
	fc := &result.FileChanges{Total: c.Total(), Incomplete: c.Incomplete}
	capped := func(l []string) []string {
		if len(l) > result.MaxListedFiles {
			fc.Omitted += len(l) - result.MaxListedFiles
			l = l[:result.MaxListedFiles]
		}
		return l
	}
	fc.Created, fc.Changed, fc.Deleted = capped(c.Created), capped(c.Changed), capped(c.Deleted)
	fc.Protected = c.Protected
	if len(fc.Protected) > result.MaxListedFiles {
		fc.Protected = fc.Protected[:result.MaxListedFiles]
	}
	fc.Outside = c.Outside
	if len(fc.Outside) > result.MaxListedFiles {
		fc.Outside = fc.Outside[:result.MaxListedFiles]
	}
	return fc
}

// protectedFault is the failure reason for changed protected paths, "" for none.
func protectedFault(c workspace.Changes) string {
	if len(c.Protected) == 0 {
		return ""
	}
	s := "agent changed a protected file: " + strings.TrimSuffix(c.Protected[0], "/")
	if n := len(c.Protected) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more protected)", n)
	}
	return s
}
