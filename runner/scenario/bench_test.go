package scenario_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/scenario"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// benchSteps is the length of the benchmarked scenario: long enough that per-scenario
// costs (workspace, transcript file, assertions) fade and the conversation grows as in a
// real long run.
const benchSteps = 200

// loopTask never completes: the fake calls the same cheap tool forever and the run ends
// at max_steps, which `completed: false` allows.
const loopTask = `name: loop
prompt: Call the tool again and again.
tools: [read_file, run_in_terminal]
max_steps: %d
workspace:
  files: {small.txt: "a small file\nof two lines\n"}
assert:
  - completed: false
`

// benchTools are the cheap tool calls a step makes: a file read, and a command.
var benchTools = []struct {
	name  string
	reply fakellm.Reply
}{
	{"read_file", fakellm.ToolCall("read_file", map[string]any{"path": "small.txt"})},
	{"run_in_terminal", fakellm.ToolCall("run_in_terminal", map[string]any{"command": "true"})},
}

// BenchmarkScenario200Steps runs a whole 200-step scenario in-process (scenario.Run:
// workspace, agent loop, policy, transcript with fsync, assertions) against the
// zero-latency fake, for each provider and tool. Besides ns/op and allocs/op (per
// scenario) it reports ns/step and allocs/step. The fake runs in the same process, so
// allocs include its handler's share; BenchmarkBareLoop200Steps measures the same
// requests without the runner.
func BenchmarkScenario200Steps(b *testing.B) {
	reg := catalog.Default()
	for _, bt := range benchTools {
		srv := fakellm.Start(fakellm.Script{Bench: true, Repeat: true, Replies: []fakellm.Reply{bt.reply}})
		for _, spec := range []string{"openai:bench", "ollama:bench"} {
			for _, sync := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/fsync=%v", bt.name, spec[:len(spec)-len(":bench")], sync)
				b.Run(name, func(b *testing.B) {
					t := loadLoopTask(b, reg, benchSteps)
					opts := scenario.Options{
						OutDir: b.TempDir(), Catalog: reg, NoSync: !sync,
						Sandbox: func(string) (tools.CommandWrapper, error) { return nil, nil },
						Model: func(*task.Task, int) (model.Model, error) {
							return providers.Open(spec, providers.OpenOptions{Getenv: fakeEnv(srv)})
						},
					}
					measure(b, func() {
						res := scenario.Run(context.Background(), t, 0, opts)
						if res.Status != result.Passed || res.Steps != benchSteps {
							b.Fatalf("scenario %s after %d steps: %s", res.Status, res.Steps, res.Reason)
						}
					})
				})
			}
		}
		srv.Close()
	}
}

// BenchmarkBareLoop200Steps is the floor the runner is compared with: the same 200
// requests (a growing conversation, the same tool schemas) marshalled with encoding/json,
// POSTed to the fake and decoded, plus the tool's work done directly (os.ReadFile, or
// exec of sh -c true). No policy, no transcript, no registry, no client library.
func BenchmarkBareLoop200Steps(b *testing.B) {
	reg := catalog.Default()
	sub, err := reg.Subset("read_file", "run_in_terminal", "task_complete")
	if err != nil {
		b.Fatal(err)
	}
	specs := sub.Specs()
	small := filepath.Join(b.TempDir(), "small.txt")
	if err := os.WriteFile(small, []byte("a small file\nof two lines\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bt := range benchTools {
		srv := fakellm.Start(fakellm.Script{Bench: true, Repeat: true, Replies: []fakellm.Reply{bt.reply}})
		work := func() string {
			if bt.name == "read_file" {
				data, err := os.ReadFile(small)
				if err != nil {
					b.Fatal(err)
				}
				return string(data)
			}
			out, err := exec.Command("sh", "-c", "true").CombinedOutput()
			if err != nil {
				b.Fatal(err)
			}
			return string(out)
		}
		for _, api := range []string{"openai", "ollama"} {
			url := srv.OpenAIURL() + "/chat/completions"
			if api == "ollama" {
				url = srv.URL() + "/api/chat"
			}
			b.Run(bt.name+"/"+api, func(b *testing.B) {
				measure(b, func() { bareLoop(b, api, url, specs, work) })
			})
		}
		srv.Close()
	}
}

// bareLoop runs a minimal agent loop of benchSteps steps against an OpenAI-style
// (/v1/chat/completions) or Ollama-style (/api/chat, not streamed) endpoint at url, doing
// work for every tool call.
func bareLoop(b *testing.B, api, url string, specs []tools.Spec, work func() string) {
	if err := runBareLoop(api, url, benchSteps, specs, work); err != nil {
		b.Fatal(err)
	}
}

func runBareLoop(api, url string, steps int, specs []tools.Spec, work func() string) error {
	type fn struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function fn     `json:"function"`
	}
	type msg struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCalls  []call `json:"tool_calls,omitempty"`
		ToolCallID string `json:"tool_call_id,omitempty"`
	}
	type toolDef struct {
		Type     string `json:"type"`
		Function any    `json:"function"`
	}
	defs := make([]toolDef, len(specs))
	for i, s := range specs {
		defs[i] = toolDef{Type: "function", Function: map[string]any{"name": s.Name, "description": s.Description, "parameters": s.Parameters}}
	}
	msgs := []msg{{Role: "system", Content: "You are an agent."}, {Role: "user", Content: "Call the tool again and again."}}
	for range steps {
		body, err := json.Marshal(map[string]any{"model": "bench", "messages": msgs, "tools": defs, "stream": false})
		if err != nil {
			return err
		}
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		var out struct {
			Message msg `json:"message"` // Ollama
			Choices []struct {
				Message msg `json:"message"`
			} `json:"choices"` // OpenAI
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("decode response: %w", err)
		}
		m := out.Message
		if api == "openai" && len(out.Choices) > 0 {
			m = out.Choices[0].Message
		}
		if len(m.ToolCalls) == 0 {
			return fmt.Errorf("response without a tool call")
		}
		msgs = append(msgs, m)
		for _, c := range m.ToolCalls {
			msgs = append(msgs, msg{Role: "tool", ToolCallID: c.ID, Content: work()})
		}
	}
	return nil
}

// measure runs one scenario per iteration and reports per-step time and allocations.
func measure(b *testing.B, run func()) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	n := 0
	for b.Loop() {
		run()
		n++
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	steps := float64(n * benchSteps)
	b.ReportMetric(float64(took.Nanoseconds())/steps, "ns/step")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/steps, "allocs/step")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/steps, "B/step")
}

func loadLoopTask(b *testing.B, reg *tools.Registry, steps int) *task.Task {
	b.Helper()
	path := filepath.Join(b.TempDir(), "loop.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, loopTask, steps), 0o644); err != nil {
		b.Fatal(err)
	}
	t, err := task.Load(path, task.LoadOptions{KnownTool: reg.Canonical, ToolNames: reg.Names(), Now: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	return t
}

func fakeEnv(srv *fakellm.Server) func(string) string {
	env := map[string]string{"OLLAMA_HOST": srv.URL(), "OPENAI_BASE_URL": srv.OpenAIURL(), "OPENAI_API_KEY": "bench"}
	return func(k string) string { return env[k] }
}
