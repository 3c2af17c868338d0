package endpoint_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentrunner/runner/runner/endpoint"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/transcript"
)

// benchBody is an agent's chat completions request: a system prompt, a task, eight turns
// of tool calls and results, two tools.
func benchBody(stream bool) []byte {
	msgs := []map[string]any{
		{"role": "system", "content": "You are a coding agent working in /tmp/runner-bench-1. Use the tools."},
		{"role": "user", "content": "Read a.txt and fix the bug it describes."},
	}
	for i := range 4 {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": `{"path":"a.txt"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": "line one of a.txt\nline two of a.txt\n"})
	}
	tool := func(name string) map[string]any {
		return map[string]any{"type": "function", "function": map[string]any{"name": name, "description": "does " + name,
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}}}
	}
	b, _ := json.Marshal(map[string]any{"model": "bench", "messages": msgs, "tools": []any{tool("read_file"), tool("write_file")}, "stream": stream})
	return b
}

// BenchmarkEndpointOverhead is the cost runner's endpoint adds to an external agent's
// model call: the same request (OpenAI chat completions) sent straight to the zero-latency
// fake model, and through the endpoint (decode, step count, transcript events, runner's
// openai provider to the same fake, encode), alternated call by call in one run so that
// both see the same machine. It reports each's time per call, the overhead per call and
// their ratio. The transcript is written without fsync (its syncs run in the background
// in a real run).
func BenchmarkEndpointOverhead(b *testing.B) {
	for _, stream := range []bool{false, true} {
		b.Run(fmt.Sprintf("stream=%v", stream), func(b *testing.B) {
			srv := fakellm.Start(fakellm.Script{Bench: true, Repeat: true, Replies: []fakellm.Reply{
				fakellm.ToolCall("read_file", map[string]any{"path": "a.txt"})}})
			defer srv.Close()
			env := map[string]string{"OPENAI_BASE_URL": srv.OpenAIURL(), "OPENAI_API_KEY": "sk-bench"}
			m, err := providers.Open("openai:bench", providers.OpenOptions{Stream: stream, Getenv: func(k string) string { return env[k] }})
			if err != nil {
				b.Fatal(err)
			}
			tr, err := transcript.Create(filepath.Join(b.TempDir(), "transcript.jsonl"), transcript.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = tr.Close() }()
			ep, err := endpoint.New(endpoint.Config{Model: m, MaxSteps: 1 << 30, Record: tr, Workdir: "/tmp/runner-bench-1"})
			if err != nil {
				b.Fatal(err)
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			go func() { _ = ep.Serve(l) }()
			defer func() { _ = ep.Close() }()

			body := benchBody(stream)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			call := func(url, key string) time.Duration {
				start := time.Now()
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: HTTP %d", url, resp.StatusCode)
				}
				return time.Since(start)
			}
			direct, through := srv.OpenAIURL()+"/chat/completions", "http://"+l.Addr().String()+"/v1/chat/completions"
			call(direct, "sk-bench") // warm both connections
			call(through, ep.Token())
			var dt, tt time.Duration
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 { // alternate which goes first
					dt += call(direct, "sk-bench")
					tt += call(through, ep.Token())
				} else {
					tt += call(through, ep.Token())
					dt += call(direct, "sk-bench")
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(dt.Nanoseconds())/n, "direct-ns/call")
			b.ReportMetric(float64(tt.Nanoseconds())/n, "endpoint-ns/call")
			b.ReportMetric(float64((tt-dt).Microseconds())/n, "overhead-µs/call")
			b.ReportMetric(float64(tt)/float64(dt), "ratio")
		})
	}
}
