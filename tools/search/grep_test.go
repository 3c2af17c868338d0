package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/tools"
)

var code = map[string]string{
	"main.go":        "package main\n\nfunc main() {\n\tfmt.Println(\"Hello\")\n}\n",
	"server/http.go": "package server\n\nfunc userHandler() {}\nfunc HealthHandler() {}\n// handler docs\n",
	"server/util.go": "package server\n\n// HELLO in capitals\nfunc helper() {}",
	"notes.txt":      "hello world\nnothing here\nHello again\n",
	"web/app.ts":     "export function handler() { return 'hello' }\n",
}

func TestGrepMatches(t *testing.T) {
	ws, _ := newWorkspace(t, code)
	for _, tc := range []struct {
		args string
		want []string
	}{
		// Case-insensitive by default; sorted by path, then line.
		{`{"pattern":"hello"}`, []string{
			`main.go:4: 	fmt.Println("Hello")`,
			"notes.txt:1: hello world",
			"notes.txt:3: Hello again",
			"server/util.go:3: // HELLO in capitals",
			"web/app.ts:1: export function handler() { return 'hello' }",
		}},
		{`{"pattern":"Hello","case_sensitive":true}`, []string{
			`main.go:4: 	fmt.Println("Hello")`,
			"notes.txt:3: Hello again",
		}},
		{`{"pattern":"func \\w+Handler","is_regex":true}`, []string{
			"server/http.go:3: func userHandler() {}",
			"server/http.go:4: func HealthHandler() {}",
		}},
		{`{"pattern":"func [a-z]\\w*Handler","is_regex":true,"case_sensitive":true}`, []string{
			"server/http.go:3: func userHandler() {}",
		}},
		// Anchors apply to each line.
		{`{"pattern":"^func","is_regex":true,"path":"server"}`, []string{
			"server/http.go:3: func userHandler() {}",
			"server/http.go:4: func HealthHandler() {}",
			"server/util.go:4: func helper() {}",
		}},
		{`{"pattern":"\\(\\) \\{\\}$","is_regex":true}`, []string{
			"server/http.go:3: func userHandler() {}",
			"server/http.go:4: func HealthHandler() {}",
			"server/util.go:4: func helper() {}",
		}},
		// Regex metacharacters are plain text unless is_regex.
		{`{"pattern":"() {}"}`, []string{
			"server/http.go:3: func userHandler() {}",
			"server/http.go:4: func HealthHandler() {}",
			"server/util.go:4: func helper() {}",
		}},
		{`{"pattern":"handler","file_pattern":"*.go"}`, []string{
			"server/http.go:3: func userHandler() {}",
			"server/http.go:4: func HealthHandler() {}",
			"server/http.go:5: // handler docs",
		}},
		{`{"pattern":"handler","file_pattern":"web/**/*.ts"}`, []string{
			"web/app.ts:1: export function handler() { return 'hello' }",
		}},
		{`{"pattern":"handler","path":"server","file_pattern":"http.go"}`, []string{
			"server/http.go:3: func userHandler() {}",
			"server/http.go:4: func HealthHandler() {}",
			"server/http.go:5: // handler docs",
		}},
		// A single file as path.
		{`{"pattern":"nothing","path":"notes.txt"}`, []string{"notes.txt:2: nothing here"}},
	} {
		t.Run(tc.args, func(t *testing.T) {
			res := ok(t, ws, "grep_search", tc.args)
			assert.DeepEqual(t, lines(res.Output), tc.want)
			assert.Equal(t, res.Metadata["matches"], len(tc.want))
			assert.Equal(t, res.Metadata["truncated"], false)
		})
	}
	res := ok(t, ws, "grep_search", `{"pattern":"hello"}`)
	assert.Equal(t, res.Metadata["files_searched"], 5)
	assert.Equal(t, res.Metadata["files_matched"], 4)
}

func TestGrepIgnoredAndGit(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{
		".gitignore":          "dist/\n*.min.js\n",
		"src/a.js":            "needle\n",
		"src/a.min.js":        "needle\n",
		"dist/bundle.js":      "needle\n",
		"src/.gitignore":      "fixtures/\n!keep.min.js\n",
		"src/keep.min.js":     "needle\n",
		"src/fixtures/f.js":   "needle\n",
		".git/COMMIT_EDITMSG": "needle\n",
		".git/refs/x":         "needle\n",
	})
	res := ok(t, ws, "grep_search", `{"pattern":"needle"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"src/a.js:1: needle", "src/keep.min.js:1: needle"})
	// A file named explicitly is searched even when ignored.
	res = ok(t, ws, "grep_search", `{"pattern":"needle","path":"dist/bundle.js"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"dist/bundle.js:1: needle"})
	// So is an ignored directory named explicitly; the rules still apply inside it.
	res = ok(t, ws, "grep_search", `{"pattern":"needle","path":"dist"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"dist/bundle.js:1: needle"})
}

func TestGrepBinary(t *testing.T) {
	lateNUL := strings.Repeat("x\n", binaryProbe) + "needle\n\x00"
	ws, _ := newWorkspace(t, map[string]string{
		"bin.dat":  "needle\x00\x01\x02",
		"late.txt": lateNUL, // the NUL lies beyond the probe: text
		"text.txt": "needle\n",
	})
	res := ok(t, ws, "grep_search", `{"pattern":"needle"}`)
	assert.DeepEqual(t, lines(res.Output), []string{
		fmt.Sprintf("late.txt:%d: needle", binaryProbe+1),
		"text.txt:1: needle",
	})
	assert.Equal(t, res.Metadata["files_searched"], 2)
	res = ok(t, ws, "grep_search", `{"pattern":"needle","path":"bin.dat"}`)
	assert.Assert(t, is.Contains(res.Output, "binary file"))
}

func TestGrepMaxResults(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = "hit one\nmiss\nhit two\nhit three\n"
	}
	ws, _ := newWorkspace(t, files)
	res := ok(t, ws, "grep_search", `{"pattern":"hit","max_results":5}`)
	assert.DeepEqual(t, lines(res.Output)[:5], []string{
		"d0/f00.txt:1: hit one", "d0/f00.txt:3: hit two", "d0/f00.txt:4: hit three",
		"d0/f03.txt:1: hit one", "d0/f03.txt:3: hit two",
	})
	assert.Assert(t, is.Contains(res.Output, "Results truncated"))
	assert.Assert(t, is.Contains(res.Output, "raise max_results"))
	assert.Equal(t, res.Metadata["matches"], 5)
	assert.Equal(t, res.Metadata["truncated"], true)
	assert.Equal(t, res.Metadata["files_searched"], 2)
	// Deterministic whatever the scheduling.
	for range 10 {
		assert.Equal(t, ok(t, ws, "grep_search", `{"pattern":"hit","max_results":5}`).Output, res.Output)
	}
	// Exactly max_results matches is not truncation.
	res = ok(t, ws, "grep_search", `{"pattern":"hit","max_results":120}`)
	assert.Equal(t, res.Metadata["matches"], 120)
	assert.Equal(t, res.Metadata["truncated"], false)
	assert.Assert(t, !strings.Contains(res.Output, "truncated"))
	// Truncation inside one file.
	res = ok(t, ws, "grep_search", `{"pattern":"hit","path":"d1/f01.txt","max_results":2}`)
	assert.Equal(t, len(lines(res.Output)), 2+2)
	assert.Equal(t, res.Metadata["truncated"], true)
	// The default is 100.
	res = ok(t, ws, "grep_search", `{"pattern":"hit"}`)
	assert.Equal(t, res.Metadata["matches"], DefaultGrepResults)
	assert.Equal(t, res.Metadata["truncated"], true)
	// At the maximum, the note does not suggest raising it.
	many := map[string]string{"big.txt": strings.Repeat("hit\n", MaxGrepResults+1)}
	ws2, _ := newWorkspace(t, many)
	res = ok(t, ws2, "grep_search", `{"pattern":"hit","max_results":1000}`)
	assert.Equal(t, res.Metadata["truncated"], true)
	assert.Assert(t, !strings.Contains(res.Output, "raise max_results"))
}

func TestGrepBadRegex(t *testing.T) {
	ws, _ := newWorkspace(t, code)
	for _, tc := range []struct{ pattern, msg string }{
		{`func (`, "missing closing )"},
		{`a[b`, "missing closing ]"},
		{`x(?=y)`, "invalid or unsupported Perl syntax"},
		{`(?<=x)y`, "invalid named capture"},
		{`x**`, "invalid nested repetition operator"},
	} {
		args := fmt.Sprintf(`{"pattern":%q,"is_regex":true}`, tc.pattern)
		msg := fails(t, ws, "grep_search", args, tools.CodeInvalidArgument)
		assert.Assert(t, is.Contains(msg, tc.msg), tc.pattern)
		assert.Assert(t, is.Contains(msg, tc.pattern), "the message quotes the model's pattern")
		assert.Assert(t, !strings.Contains(msg, "(?m)"), "not our flags")
	}
	// The same text is fine as a literal.
	ok(t, ws, "grep_search", `{"pattern":"func ("}`)
}

func TestGrepNoBacktracking(t *testing.T) {
	// (a+)+$ takes exponential time in backtracking engines; RE2 is linear.
	ws, _ := newWorkspace(t, map[string]string{"a.txt": strings.Repeat("a", 5000) + "!\n"})
	start := time.Now()
	res := ok(t, ws, "grep_search", `{"pattern":"(a+)+$","is_regex":true,"case_sensitive":true}`)
	assert.Assert(t, time.Since(start) < 5*time.Second)
	assert.Equal(t, res.Metadata["matches"], 0)
}

func TestGrepUnicodeAndSpaces(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{
		"my notes/to do.txt": "Buy ÄPFEL and Straße\n",
		"données/résumé.md":  "naïve café\n",
		"日本語/メモ.txt":         "東京タワー\n",
	})
	res := ok(t, ws, "grep_search", `{"pattern":"äpfel"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"my notes/to do.txt:1: Buy ÄPFEL and Straße"})
	res = ok(t, ws, "grep_search", `{"pattern":"äpfel","case_sensitive":true}`)
	assert.Equal(t, res.Metadata["matches"], 0)
	res = ok(t, ws, "grep_search", `{"pattern":"CAFÉ"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"données/résumé.md:1: naïve café"})
	res = ok(t, ws, "grep_search", `{"pattern":"タワ","path":"日本語"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"日本語/メモ.txt:1: 東京タワー"})
	res = ok(t, ws, "grep_search", `{"pattern":"caf.","is_regex":true,"file_pattern":"*.md"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"données/résumé.md:1: naïve café"})
}

func TestGrepSymlinks(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "needle outside\n", "d/x.txt": "needle outside\n"})
	ws, dir := newWorkspace(t, map[string]string{"in/real.txt": "needle inside\n"})
	symlink(t, dir, outside, "outdir")
	symlink(t, dir, filepath.Join(outside, "secret.txt"), "secret.txt")
	symlink(t, dir, "in", "indir")              // not entered: in/ is searched once
	symlink(t, dir, "in/real.txt", "alias.txt") // a file link inside is followed
	res := ok(t, ws, "grep_search", `{"pattern":"needle"}`)
	assert.DeepEqual(t, lines(res.Output), []string{"alias.txt:1: needle inside", "in/real.txt:1: needle inside"})
	fails(t, ws, "grep_search", `{"pattern":"needle","path":"outdir"}`, tools.CodeInvalidPath)
	fails(t, ws, "grep_search", `{"pattern":"needle","path":"secret.txt"}`, tools.CodeInvalidPath)
	fails(t, ws, "grep_search", `{"pattern":"needle","path":"outdir/d"}`, tools.CodeInvalidPath)
}

func TestGrepPathErrors(t *testing.T) {
	ws, _ := newWorkspace(t, code)
	for _, p := range []string{"..", "../..", "/etc", "server/../../x", "/"} {
		msg := fails(t, ws, "grep_search", fmt.Sprintf(`{"pattern":"x","path":%q}`, p), tools.CodeInvalidPath)
		assert.Assert(t, is.Contains(msg, "outside the workspace"), p)
	}
	fails(t, ws, "grep_search", `{"pattern":"x","path":"nope"}`, tools.CodeFileNotFound)
	fails(t, ws, "grep_search", `{"pattern":"x","file_pattern":"[a"}`, tools.CodeInvalidArgument)
	fails(t, ws, "grep_search", `{"pattern":"x","file_pattern":"/etc/*"}`, tools.CodeInvalidArgument)
}

func TestGrepSchema(t *testing.T) {
	ws, _ := newWorkspace(t, code)
	for _, tc := range []struct{ args, msg string }{
		{`{}`, "'pattern' is required"},
		{`{"pattern":""}`, "pattern"},
		{`{"pattern":"x","max_results":0}`, "max_results"},
		{`{"pattern":"x","max_results":1001}`, "max_results"},
		{`{"pattern":"x","is_regex":"maybe"}`, "is_regex"},
		{`{"pattern":"a\nb"}`, "line break"},
	} {
		msg := fails(t, ws, "grep_search", tc.args, tools.CodeInvalidArgument)
		assert.Assert(t, is.Contains(msg, tc.msg), tc.args)
	}
	// Quoted numbers and booleans are coerced; defaults fill the rest.
	res := ok(t, ws, "grep_search", `{"pattern":"hello","max_results":"2","case_sensitive":"false"}`)
	assert.Equal(t, res.Metadata["matches"], 2)
	reg := tools.NewRegistry()
	reg.MustRegister(Tools()...)
	c, terr := reg.Prepare("grep_search", []byte(`{"pattern":"x"}`))
	assert.Assert(t, terr == nil)
	assert.DeepEqual(t, map[string]any(c.Args), map[string]any{
		"pattern": "x", "is_regex": false, "case_sensitive": false, "path": ".", "max_results": float64(DefaultGrepResults),
	})
	assert.Equal(t, c.Risk(), tools.RiskReadOnly)
	assert.Assert(t, !c.RequiresApproval(ws))
}

func TestGrepNoMatches(t *testing.T) {
	ws, _ := newWorkspace(t, code)
	res := ok(t, ws, "grep_search", `{"pattern":"zebra"}`)
	assert.Assert(t, is.Contains(res.Output, "No matches found for 'zebra' in 5 files under '.'"))
	assert.Assert(t, !strings.Contains(res.Output, "is_regex"))
	assert.Equal(t, res.Metadata["matches"], 0)
	res = ok(t, ws, "grep_search", `{"pattern":"func \\w+Zebra"}`)
	assert.Assert(t, is.Contains(res.Output, "pass is_regex: true"))
}

func TestGrepLines(t *testing.T) {
	long := strings.Repeat("a", 1000) + "NEEDLE" + strings.Repeat("é", 1000)
	ws, _ := newWorkspace(t, map[string]string{
		"crlf.txt":  "one\r\nneedle two\r\nthree\r\n",
		"last.txt":  "x\n\n\nneedle at the end",
		"first.txt": "needle first\nneedle again needle twice",
		"long.txt":  "short\n" + long + "\n",
		"bad.txt":   "needle \xff\xfe bytes\n",
	})
	res := ok(t, ws, "grep_search", `{"pattern":"needle"}`)
	out := lines(res.Output)
	assert.DeepEqual(t, out[:6], []string{
		"bad.txt:1: needle \uFFFD bytes",
		"crlf.txt:2: needle two",
		"first.txt:1: needle first",
		"first.txt:2: needle again needle twice",
		"last.txt:4: needle at the end",
		out[5],
	})
	clipped := out[5]
	assert.Assert(t, strings.HasPrefix(clipped, "long.txt:2: …a"))
	assert.Assert(t, strings.HasSuffix(clipped, "é…"))
	assert.Assert(t, is.Contains(clipped, "NEEDLE"), "the window holds the match")
	assert.Assert(t, len(clipped) < 350, len(clipped))
	// A regexp match is centred too.
	res = ok(t, ws, "grep_search", `{"pattern":"NEE+DLE","is_regex":true,"path":"long.txt"}`)
	assert.Assert(t, is.Contains(res.Output, "NEEDLE"))
}

func TestGrepClosesHandles(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("a%d/b%d/c.txt", i%20, i)] = "hit\nhit\n"
	}
	ws, _ := newWorkspace(t, files)
	before := fds()
	for _, args := range []string{`{"pattern":"hit","max_results":1}`, `{"pattern":"hit","max_results":1000}`, `{"pattern":"miss"}`} {
		ok(t, ws, "grep_search", args)
		ok(t, ws, "file_search", `{"pattern":"**/c.txt"}`)
	}
	assert.Equal(t, fds(), before)
}
