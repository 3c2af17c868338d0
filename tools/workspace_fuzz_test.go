package tools_test

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrunner/runner/tools"
)

// FuzzResolve checks the resolver's promise: whatever Resolve or ResolveNoFollow accepts
// is a clean relative path that, joined to the workspace and with its symlinks evaluated
// (the final one too for Resolve), stays inside the workspace.
func FuzzResolve(f *testing.F) {
	base, dir := layout(f)
	ws := openWorkspace(f, dir)
	for _, seed := range []string{
		"file.txt", ".", "./sub/in.txt", "sub/", "", " ", "\x00", "a\x00b",
		"..", "../outside/secret.txt", "a/../../x", "sub/../../x", "/etc/passwd", "/", "//", "a//b", `..\..\x`,
		"link_in", "link_out", "link_out_rel", "link_out_dir", "link_out_dir/secret.txt", "link_out_dir/new/x",
		"dangling_in", "dangling_out", "link_chain", "link_chain_in", "loop", "loop/x",
		"sub/link_up/file.txt", "sub/link_up2/outside/secret.txt", "sub/link_up/link_out", "sub/link_ws2/file",
		"link_out_dir/../ws/file.txt", "link_in_abs/in.txt", "sub/deeper/../../..", "ünï ✓/ fichier .txt",
		dir, dir + "/", dir + "2/file", dir + "/../ws2/file", dir + "/sub/../..", base, filepath.Join(base, "outside"),
		strings.Repeat("a/", 300), strings.Repeat("x", 300),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, follow := range []bool{true, false} {
			var rel string
			var err *tools.Error
			if follow {
				rel, err = ws.Resolve(p)
			} else {
				rel, err = ws.ResolveNoFollow(p)
			}
			if err != nil {
				if err.Code != tools.CodeInvalidPath {
					t.Fatalf("Resolve(%q, follow=%v): code %s, want INVALID_PATH", p, follow, err.Code)
				}
				continue
			}
			if rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Fatalf("Resolve(%q, follow=%v) = %q: not a clean relative path", p, follow, rel)
			}
			joined := filepath.Join(dir, filepath.FromSlash(rel))
			real, ok := realPath(joined, follow, 0)
			if !ok {
				continue // a symlink loop: the kernel refuses it, nothing can be reached
			}
			if r, rerr := filepath.Rel(dir, real); rerr != nil || r == ".." || strings.HasPrefix(r, "../") {
				t.Fatalf("Resolve(%q, follow=%v) = %q, which is really %s: outside %s", p, follow, rel, real, dir)
			}
		}
	})
}

// realPath is where an operation on p lands: the longest existing prefix with symlinks
// evaluated, a dangling link at its end followed by its text, then the rest as written.
// With followLast false the final component is taken as is (an operation on the link).
// ok is false for a symlink loop.
func realPath(p string, followLast bool, depth int) (string, bool) {
	if depth > 40 {
		return "", false
	}
	if !followLast {
		parent, ok := realPath(filepath.Dir(p), true, depth)
		return filepath.Join(parent, filepath.Base(p)), ok
	}
	cur, rest := p, ""
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), true
		}
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A dangling (or looping) link: resolve its parent, then its text from there.
			target, _ := os.Readlink(cur)
			parent, ok := realPath(filepath.Dir(cur), true, depth+1)
			if !ok {
				return "", false
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(parent, target)
			}
			return realPath(filepath.Join(target, rest), true, depth+1)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotDirOrTooLong(err) {
			return "", false
		}
		next := filepath.Dir(cur)
		if next == cur {
			return filepath.Join(cur, rest), true
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = next
	}
}

func isNotDirOrTooLong(err error) bool {
	s := err.Error()
	return strings.Contains(s, "not a directory") || strings.Contains(s, "file name too long")
}

// The fuzz oracle must see the escapes Resolve refuses, or the fuzz target proves nothing.
func TestRealPathSeesEscapes(t *testing.T) {
	base, dir := layout(t)
	outside := filepath.Join(base, "outside")
	tests := []struct {
		rel        string
		followLast bool
		want       string
	}{
		{"link_out", true, filepath.Join(outside, "secret.txt")},
		{"link_out", false, filepath.Join(dir, "link_out")},
		{"link_out_rel", true, filepath.Join(outside, "secret.txt")},
		{"dangling_out", true, filepath.Join(outside, "new.txt")},
		{"link_out_dir/new/x", true, filepath.Join(outside, "new", "x")},
		{"link_out_dir/new/x", false, filepath.Join(outside, "new", "x")},
		{"sub/link_up2/ws2/file", true, filepath.Join(base, "ws2", "file")},
		{"link_chain", true, filepath.Join(outside, "secret.txt")},
		{"dangling_in", true, filepath.Join(dir, "not-yet.txt")},
		{"sub/link_up/file.txt", true, filepath.Join(dir, "file.txt")},
		{"file.txt/below", true, filepath.Join(dir, "file.txt", "below")},
	}
	for _, tc := range tests {
		got, ok := realPath(filepath.Join(dir, tc.rel), tc.followLast, 0)
		if !ok || got != tc.want {
			t.Errorf("realPath(%s, %v) = %q, %v; want %q", tc.rel, tc.followLast, got, ok, tc.want)
		}
	}
	if _, ok := realPath(filepath.Join(dir, "loop"), true, 0); ok {
		t.Error("a symlink loop must be reported")
	}
}
