package tests

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// bareClient is the floor a runner start-up is measured against: a Go program that starts
// and posts one chat request, nothing else.
const bareClient = `package main

import (
	"net/http"
	"os"
	"strings"
)

func main() {
	resp, err := http.Post(os.Args[1], "application/json", strings.NewReader("{\"model\":\"bench\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
	if err != nil {
		os.Exit(1)
	}
	resp.Body.Close()
}
`

// BenchmarkStartToFirstRequest measures, for the built binary, the time from starting the
// process to the first chat request reaching an instant fake model (ms/first-request), and
// to the process's exit after a one-step scenario (ms/total); "bare" is a Go program that
// only posts that request, the floor both are compared with (`make bench` prints ratios).
func BenchmarkStartToFirstRequest(b *testing.B) {
	dir := b.TempDir()
	taskFile := filepath.Join(dir, "one-step.yaml")
	if err := os.WriteFile(taskFile, []byte("name: one-step\nprompt: Say you are done.\ntools: [run_in_terminal]\n"+
		"assert:\n  - completed: true\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bare := filepath.Join(dir, "bare")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(bareClient), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module bare\ngo 1.26\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", bare, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as the runner binary is
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build the bare client: %v\n%s", err, out)
	}

	fake := fakellm.New(fakellm.Script{Bench: true, Repeat: true, Replies: []fakellm.Reply{
		{ToolCalls: []fakellm.Call{{Name: "task_complete", Args: []byte(`{"summary":"done"}`)}}},
	}})
	var mu sync.Mutex
	var first chan time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			mu.Lock()
			if first != nil {
				first <- time.Now()
				first = nil
			}
			mu.Unlock()
		}
		fake.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()

	measure := func(b *testing.B, args ...string) {
		// One untimed run first: it fills the page cache and, with bwrap, the sandbox
		// probe's per-machine cache, which every later start on a machine finds.
		warm := exec.Command(args[0], args[1:]...)
		warm.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=bench"}
		if out, err := warm.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
		_ = os.RemoveAll(filepath.Join(dir, "out")) // test cleanup: its error does not change what the test checked
		var toFirst, total time.Duration
		for i := 0; b.Loop(); i++ {
			ch := make(chan time.Time, 1)
			mu.Lock()
			first = ch
			mu.Unlock()
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=bench"}
			start := time.Now()
			out, err := cmd.CombinedOutput()
			end := time.Now()
			if err != nil {
				b.Fatalf("%v: %v\n%s", args, err, out)
			}
			select {
			case t := <-ch:
				toFirst += t.Sub(start)
			default:
				b.Fatalf("%v: no chat request reached the fake\n%s", args, out)
			}
			total += end.Sub(start)
			_ = os.RemoveAll(filepath.Join(dir, "out"))
		}
		b.ReportMetric(float64(toFirst.Microseconds())/1000/float64(b.N), "ms/first-request")
		b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/total")
		b.ReportMetric(0, "ns/op") // the two metrics above are the figures
	}
	b.Run("bare", func(b *testing.B) { measure(b, bare, srv.URL+"/v1/chat/completions") })
	for _, mode := range []string{"none", "bwrap"} {
		b.Run("sandbox="+mode, func(b *testing.B) {
			if mode != "none" {
				if _, _, err := sandbox.Probe(b.Context(), mode); err != nil {
					b.Skipf("sandbox %s unavailable: %v", mode, err)
				}
			}
			measure(b, runnerBin, "run", "--model", "openai:bench", "--sandbox", mode, "--cache-dir", "",
				"--out", filepath.Join(dir, "out"), taskFile)
		})
	}
}
