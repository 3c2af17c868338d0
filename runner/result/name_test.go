package result

import (
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// A directory name a shell loop, a URL and an artifact upload take as it is: no space,
// no #, no quote, no glob or expansion character, never hidden, never "..".
var safeDir = regexp.MustCompile(`^[\p{L}\p{M}\p{N}_][\p{L}\p{M}\p{N}._-]*$`)

func TestDirNameIsSafeAndDistinct(t *testing.T) {
	names := []string{
		"fix-bug", "fix the bug", "fix_the_bug", "fix the bug #2", "bug #1", "a/b", `a\b`, "..", ".hidden",
		"-rf", "a..b", "$(rm -rf ~)", "`id`", "x;y|z&w", `"quoted" 'q'`, "glob*?[ab]{c}", "tab\there",
		"naïve ünïcödé", "日本語のタスク", "emoji 🙂", "task[case=1]", "task[case=2]", "x.r2", "y.0123abcd",
		strings.Repeat("long name ", 40),
	}
	seen := map[string]string{}
	for _, n := range names {
		for _, s := range []Scenario{{Name: n}, {Name: n, Repeat: 1, Repeats: 3}, {Name: n, Repeat: 2, Repeats: 3}} {
			d := s.DirName()
			assert.Check(t, safeDir.MatchString(d), "%q -> %q", n, d)
			assert.Check(t, d != "." && d != "..", "%q -> %q", n, d)
			assert.Check(t, len(d) <= 120, "%q -> %q", n, d)
			if other, dup := seen[d]; dup {
				t.Errorf("%q and %q share the directory %q", other, s.DisplayName(), d)
			}
			seen[d] = s.DisplayName()
		}
	}
	// A name that is already safe keeps it; a repeat is ".rK" with K as in "#K".
	assert.Equal(t, Scenario{Name: "fix-bug"}.DirName(), "fix-bug")
	s := Scenario{Name: "fix-bug", Repeat: 2, Repeats: 3}
	assert.Equal(t, s.DirName(), "fix-bug.r2")
	assert.Equal(t, s.DisplayName(), "fix-bug #2")
	assert.Assert(t, strings.HasPrefix(Scenario{Name: "fix the bug #2"}.DirName(), "fix_the_bug__2."))
	assert.Assert(t, strings.HasPrefix(Scenario{Name: "日本語のタスク"}.DirName(), "日本語のタスク"))
}
