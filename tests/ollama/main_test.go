//go:build ollama_e2e

package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tests/ollama/internal/bigram"
)

// What TestMain set up for every test.
var (
	runnerBin string  // runner, built static as released
	ollamaBin string  // the Ollama server (and CLI)
	shared    *server // the server most tests use, with every bigram variant created
	modelsDir string  // OLLAMA_MODELS, shared with servers a test starts itself
	homeDir   string  // HOME of the servers (their ~/.ollama keys)
)

func TestMain(m *testing.M) {
	code, err := setUp(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e-ollama:", err)
		code = 1
	}
	os.Exit(code)
}

func setUp(m *testing.M) (int, error) {
	tmp, err := os.MkdirTemp("", "runner-e2e-ollama-")
	if err != nil {
		return 1, err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // scratch space
	// OLLAMA_BIN runs the suite against an Ollama the user installed, instead of building one.
	ollamaBin = os.Getenv("OLLAMA_BIN")
	if ollamaBin == "" {
		build := exec.Command("./build-server.sh")
		build.Stderr = os.Stderr // a cold build takes minutes: show its progress
		out, err := build.Output()
		if err != nil {
			return 1, fmt.Errorf("building the server: %w", err)
		}
		ollamaBin = strings.TrimSpace(string(out))
	}
	runnerBin = os.Getenv("RUNNER_TEST_BINARY")
	if runnerBin == "" {
		runnerBin = filepath.Join(tmp, "runner")
		build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", runnerBin, "github.com/agentrunner/runner")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return 1, fmt.Errorf("building runner: %w", err)
		}
	}
	modelsDir, homeDir = filepath.Join(tmp, "models"), filepath.Join(tmp, "home")
	gen := filepath.Join(tmp, "gen")
	for _, d := range []string{modelsDir, homeDir, gen} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 1, err
		}
	}
	variants := append(slices.Clone(bigram.Variants), extraShapes()...)
	if err := bigram.Write(gen, variants); err != nil {
		return 1, err
	}
	shared, err = startServer(filepath.Join(tmp, "server.log"))
	if err != nil {
		return 1, err
	}
	defer shared.stop()
	start := time.Now()
	for _, v := range variants {
		if err := shared.create(v.Name, filepath.Join(gen, v.Name+".Modelfile")); err != nil {
			return 1, err
		}
	}
	fmt.Fprintf(os.Stderr, "e2e-ollama: Ollama %s at %s, %d models created in %s\n",
		shared.version(), shared.host, len(variants), time.Since(start).Round(time.Millisecond))
	code := m.Run()
	if code != 0 {
		if b, err := os.ReadFile(shared.log); err == nil {
			fmt.Fprintf(os.Stderr, "--- server log (last 4 KB) ---\n%s\n", tail(b, 4096))
		}
	}
	return code, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// server is an Ollama server this suite started, on a free loopback port.
type server struct {
	cmd  *exec.Cmd
	host string // host:port
	log  string
	done chan struct{}
}

// extraShapes are the shaped models RUNNER_OLLAMA_SHAPES names (comma-separated keys of
// bigram.Shapes, e.g. llama3.2-1b,llama3-8b on a GPU), beyond the suite's own.
func extraShapes() []bigram.Variant {
	var out []bigram.Variant
	for _, s := range strings.Split(os.Getenv("RUNNER_OLLAMA_SHAPES"), ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.ContainsFunc(bigram.Variants, func(v bigram.Variant) bool { return v.Shape == s }) {
			out = append(out, bigram.Shaped(s))
		}
	}
	return out
}

// startServer starts `ollama serve` and waits until it answers; env adds to its
// environment (OLLAMA_NUM_PARALLEL=2).
func startServer(logPath string, env ...string) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	host := l.Addr().String()
	_ = l.Close() // only its port was wanted
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(ollamaBin, "serve")
	cmd.Env = append(serverEnv(host), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: stop ends the model runners it started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logf.Close() // the start failed; that error is reported
		return nil, err
	}
	s := &server{cmd: cmd, host: host, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s.version() != "" {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("ollama serve exited at start; see %s", logPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.stop()
	return nil, fmt.Errorf("ollama serve did not answer within 30 s; see %s", logPath)
}

func serverEnv(host string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + homeDir, "OLLAMA_HOST=" + host,
		"OLLAMA_MODELS=" + modelsDir, "OLLAMA_NOPRUNE=1",
		// Several models loaded at once: the variants' tests need not wait for each other.
		"OLLAMA_MAX_LOADED_MODELS=6",
	}
}

// stop ends the server and its runners (its process group: only processes it started).
func (s *server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// version is what /api/version says ("" when the server does not answer).
func (s *server) version() string {
	var v struct{ Version string }
	if s.get("/api/version", &v) != nil {
		return ""
	}
	return v.Version
}

// get decodes the JSON of a GET request.
func (s *server) get(path string, into any) error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + s.host + path)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // read to the end
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// create runs `ollama create` as a user would.
func (s *server) create(name, modelfile string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ollamaBin, "create", name, "-f", modelfile)
	cmd.Env = serverEnv(s.host)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ollama create %s: %w\n%s", name, err, out)
	}
	return nil
}

// invocation is one run of the runner binary and what it left.
type invocation struct {
	Code           int
	Stdout, Stderr string
	Out            string // --out
}

// runRunner runs runner with args (the subcommand first) against host, --out in a temp dir.
func runRunner(t *testing.T, host string, args ...string) invocation {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	args = append(args[:1:1], append([]string{"--out", out}, args[1:]...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runnerBin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + os.TempDir(), "OLLAMA_HOST=" + host, "LANG=C.UTF-8"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	inv := invocation{Stdout: stdout.String(), Stderr: stderr.String(), Out: out}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		inv.Code = exit.ExitCode()
	default:
		t.Fatalf("runner %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("runner %s -> exit %d in %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), inv.Code, time.Since(start).Round(time.Millisecond), inv.Stdout, inv.Stderr)
	return inv
}

// run runs one task file with `runner run`, no sandbox, one scenario at a time.
func run(t *testing.T, host, model, taskPath string, extra ...string) invocation {
	t.Helper()
	args := append([]string{"run", "--model", "ollama:" + model, "--sandbox", "none", "-j", "1", "--retries", "2"}, extra...)
	return runRunner(t, host, append(args, taskPath)...)
}

// writeTask writes a task file and returns its path.
func writeTask(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	assert.NilError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// helloTask writes hello.txt and completes: the bigram model's answer, step by step.
func helloTask(name, extra string) string {
	return fmt.Sprintf(`name: %s
prompt: Write hello.txt containing "hello, world" and call task_complete.
tools: [write_file, read_file]
max_steps: 4
%s
assert:
  - completed: true
  - file_equals: {path: hello.txt, content: "hello, world\n"}
`, name, extra)
}

func scenarioResult(t *testing.T, inv invocation, name string) result.Scenario {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(inv.Out, name, "result.json"))
	assert.NilError(t, err)
	var s result.Scenario
	assert.NilError(t, json.Unmarshal(b, &s))
	return s
}

func events(t *testing.T, inv invocation, name string) []transcript.Event {
	t.Helper()
	evs, err := transcript.ReadFile(filepath.Join(inv.Out, name, "transcript.jsonl"))
	assert.NilError(t, err)
	return evs
}

// payloads decodes the events of one type through the transcript's own types.
func payloads[T any](t *testing.T, evs []transcript.Event, typ string) []*T {
	t.Helper()
	var out []*T
	for _, e := range evs {
		if e.Type != typ {
			continue
		}
		p, err := e.Payload()
		assert.NilError(t, err)
		out = append(out, p.(*T))
	}
	return out
}

// waitFor polls path until it holds want (a transcript growing as the run goes).
func waitFor(t *testing.T, path, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(want)) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not contain %q within %s", path, want, within)
}
