package search

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentrunner/runner/tools"
)

// The benchmarks search the Go source tree, the corpus scripts/bench-search.sh also gives
// to ripgrep and fd.

// goRootSrc is the source tree of the go command on PATH, "" without one. Not
// runtime.GOROOT (deprecated): that names the tree the test binary was built from.
func goRootSrc() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if root := strings.TrimSpace(string(out)); err == nil && root != "" {
		return filepath.Join(root, "src")
	}
	return ""
}

func goSrc(b *testing.B) *tools.Workspace {
	b.Helper()
	dir := goRootSrc()
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	return ws
}

func benchTool(b *testing.B, tool, args string) {
	ws := goSrc(b)
	reg := tools.NewRegistry()
	reg.MustRegister(Tools()...)
	call, terr := reg.Prepare(tool, json.RawMessage(args))
	if terr != nil {
		b.Fatal(terr)
	}
	b.ResetTimer()
	for b.Loop() {
		res := reg.Execute(context.Background(), call, ws)
		if !res.Success {
			b.Fatal(res.Output)
		}
	}
}

func BenchmarkGrepLiteralFold(b *testing.B) {
	benchTool(b, "grep_search", `{"pattern":"func main","max_results":1000}`)
}

func BenchmarkGrepLiteralRare(b *testing.B) {
	benchTool(b, "grep_search", `{"pattern":"deprecated","max_results":1000}`)
}

func BenchmarkGrepLiteralCase(b *testing.B) {
	benchTool(b, "grep_search", `{"pattern":"Deprecated","case_sensitive":true,"max_results":1000}`)
}

func BenchmarkGrepRegex(b *testing.B) {
	benchTool(b, "grep_search", `{"pattern":"func \\w+Handler","is_regex":true,"case_sensitive":true,"max_results":1000}`)
}

func BenchmarkGrepRegexNoLiteral(b *testing.B) {
	benchTool(b, "grep_search", `{"pattern":"\\d{4}-\\d{2}-\\d{2}","is_regex":true,"max_results":1000}`)
}

func BenchmarkGrepDefaultLimit(b *testing.B) {
	benchTool(b, "grep_search", `{"pattern":"func main"}`)
}

func BenchmarkFileSearchTests(b *testing.B) {
	benchTool(b, "file_search", `{"pattern":"**/*_test.go"}`)
}

func BenchmarkFileSearchPrefix(b *testing.B) {
	benchTool(b, "file_search", `{"pattern":"net/http/**/*.go"}`)
}

var corpusOnce sync.Once
var corpus [][]byte

// loadCorpus reads the text files of the Go source tree into memory, for benchmarks of
// the matcher alone.
func loadCorpus() {
	dir := goRootSrc()
	if dir == "" {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			if !isBinary(b) {
				corpus = append(corpus, b)
			}
		}
		return nil
	})
}

func benchFind(b *testing.B, pat string, isRegex, cs bool) {
	corpusOnce.Do(loadCorpus)
	if len(corpus) == 0 {
		b.Skip("no Go source tree")
	}
	m, _ := newMatcher(pat, isRegex, cs)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		n = 0
		var out []lineMatch
		for _, f := range corpus {
			out = m.find(f, 1000, out[:0])
			n += len(out)
		}
	}
	b.ReportMetric(float64(n), "matches")
}

func BenchmarkFindFoldDeprecated(b *testing.B) { benchFind(b, "deprecated", false, false) }
func BenchmarkFindFoldFuncMain(b *testing.B)   { benchFind(b, "func main", false, false) }
func BenchmarkFindCaseDeprecated(b *testing.B) { benchFind(b, "Deprecated", false, true) }
func BenchmarkFindRegexHandler(b *testing.B)   { benchFind(b, `func \w+Handler`, true, true) }
