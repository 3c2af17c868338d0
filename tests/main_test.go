// Package tests holds the end-to-end tests: TestMain builds the runner binary once, and
// every test runs that binary as CI would, against task files written to temp dirs and
// fake Ollama and OpenAI servers (fakellm) on 127.0.0.1.
package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
)

// runnerBin is the binary built by TestMain.
var runnerBin string

// buildTags are the tags the Makefile (BUILDTAGS), .goreleaser.yaml and the Dockerfile
// build the runner with.
const buildTags = "urfave_cli_no_docs"

func TestMain(m *testing.M) {
	flag.Parse()
	// The tests mostly wait (on backoffs, Retry-After, timeouts, child processes), so more
	// of them at once than the default GOMAXPROCS keeps the package fast on 2 cores.
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "8")
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	// RUNNER_TEST_BINARY tests an already built binary (a release, or a build from a
	// clean tree while the checkout is mid-edit) instead of building one.
	if bin := os.Getenv("RUNNER_TEST_BINARY"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tests:", err)
			return 1
		}
		runnerBin = abs
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "runner-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }() // test cleanup: its error does not change what the test checked
	runnerBin = filepath.Join(dir, "runner")
	// `go test` puts GOROOT/bin first in PATH, so this is the go that runs the tests.
	build := exec.Command("go", "build", "-tags", buildTags, "-o", runnerBin, "github.com/agentrunner/runner")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as released
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tests: building the runner binary:", err)
		return 1
	}
	return m.Run()
}

// run is one invocation of the binary.
type run struct {
	Args []string
	// Env is added to a minimal environment (PATH, HOME, TMPDIR).
	Env []string
	Dir string
	// Timeout bounds the whole process (default 30 s); the test fails if it is hit.
	Timeout time.Duration
}

// outcome is what a finished invocation left behind.
type outcome struct {
	Code           int
	Stdout, Stderr string
	Took           time.Duration
}

// baseEnv is the environment every invocation starts from: no OLLAMA_HOST or OpenAI
// variables leak in from the machine running the tests.
func baseEnv(t *testing.T) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
	}
}

// command builds the exec.Cmd for r, with stdin closed (/dev/null) as in CI.
func command(t *testing.T, ctx context.Context, r run) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, runnerBin, r.Args...)
	cmd.Env = append(baseEnv(t), r.Env...)
	cmd.Dir = r.Dir
	return cmd
}

// runner runs the binary to completion and returns its exit code and output.
func runner(t *testing.T, r run) outcome {
	t.Helper()
	if r.Timeout == 0 {
		r.Timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.Timeout)
	defer cancel()
	cmd := command(t, ctx, r)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	o := outcome{Stdout: stdout.String(), Stderr: stderr.String(), Took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		t.Fatalf("runner %s did not finish within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Args, " "), r.Timeout, o.Stdout, o.Stderr)
	case errors.As(err, &exit):
		o.Code = exit.ExitCode()
	default:
		t.Fatalf("runner %s: %v", strings.Join(r.Args, " "), err)
	}
	t.Logf("runner %s -> exit %d in %s\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Args, " "), o.Code, o.Took.Round(time.Millisecond), o.Stdout, o.Stderr)
	return o
}

// writeTask writes a task file named name+".yaml" into a fresh temp dir and returns its path.
func writeTask(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name+".yaml")
	assert.NilError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// provider is how a test reaches a fake server: the --model flag and the environment.
type provider struct {
	Name   string // "ollama" or "openai"
	Stream bool
}

func (p provider) String() string {
	if p.Stream {
		return p.Name + "-stream"
	}
	return p.Name
}

// providers are every provider in both wire modes.
var providers = []provider{{"ollama", false}, {"ollama", true}, {"openai", false}, {"openai", true}}

// args returns the run flags and environment that point the binary at srv.
func (p provider) args(srv *fakellm.Server) ([]string, []string) {
	args := []string{"--model", p.Name + ":fake-model"}
	if p.Stream {
		args = append(args, "--stream")
	}
	var env []string
	switch p.Name {
	case "ollama":
		env = []string{"OLLAMA_HOST=" + srv.URL()}
	case "openai", "openai-responses":
		env = []string{"OPENAI_BASE_URL=" + srv.OpenAIURL(), "OPENAI_API_KEY=sk-test"}
	case "gemini":
		env = []string{"GEMINI_BASE_URL=" + srv.URL(), "GEMINI_API_KEY=gm-test"}
	case "anthropic":
		env = []string{"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-ant-test"}
	}
	return args, env
}

// scenarioRun is a run of one task against a fake model, and what it left behind.
type scenarioRun struct {
	outcome
	Out    string // the --out directory
	Result result.Scenario
	Events []transcript.Event
}

// runScenario runs the task at path with p against srv (plus extra flags), with
// --sandbox none and few retries' worth of waiting, and reads result.json and the
// transcript of the scenario named name.
func runScenario(t *testing.T, p provider, srv *fakellm.Server, path, name string, extra ...string) scenarioRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	args, env := p.args(srv)
	args = append([]string{"run", "--out", out, "--sandbox", "none", "-j", "1"}, args...)
	args = append(args, extra...)
	args = append(args, path)
	sr := scenarioRun{outcome: runner(t, run{Args: args, Env: env}), Out: out}
	sr.Result = readResult(t, filepath.Join(out, name, "result.json"))
	sr.Events = readTranscript(t, filepath.Join(out, name, "transcript.jsonl"))
	return sr
}

func readResult(t *testing.T, path string) result.Scenario {
	t.Helper()
	b, err := os.ReadFile(path)
	assert.NilError(t, err)
	var s result.Scenario
	assert.NilError(t, json.Unmarshal(b, &s))
	return s
}

func readTranscript(t *testing.T, path string) []transcript.Event {
	t.Helper()
	events, err := transcript.ReadFile(path)
	assert.NilError(t, err)
	return events
}

// eventsOf returns the events of one type.
func eventsOf(events []transcript.Event, typ string) []transcript.Event {
	var out []transcript.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// toolCalls decodes the tool_call events through the transcript's own payload type.
func toolCalls(t *testing.T, events []transcript.Event) []transcript.ToolCall {
	t.Helper()
	var out []transcript.ToolCall
	for _, e := range eventsOf(events, transcript.TypeToolCall) {
		p, err := e.Payload()
		assert.NilError(t, err)
		out = append(out, *p.(*transcript.ToolCall))
	}
	return out
}

// toolResults returns the tool-result messages of the last request the fake received,
// keyed by tool_call_id: what the model was told about each call.
func toolResults(srv *fakellm.Server) map[string]string {
	reqs := srv.Requests()
	out := map[string]string{}
	if len(reqs) == 0 {
		return out
	}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == model.RoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// junitXSD is the Jenkins xunit schema every JUnit report must validate against.
const junitXSD = "testdata/junit-10.xsd"

// validateJUnit checks path against junitXSD with xmllint. Without xmllint the check is
// skipped on a developer's machine but fails in CI, where .ci/run installs it.
func validateJUnit(t *testing.T, path string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("xmllint is missing in CI (Debian package libxml2-utils)")
		}
		t.Logf("xmllint missing (Debian package libxml2-utils): %s not validated", path)
		return
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", junitXSD, path).CombinedOutput()
	assert.NilError(t, err, "xmllint: %s", out)
}
