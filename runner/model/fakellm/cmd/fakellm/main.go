// Command fakellm serves a fakellm script (JSON) as fake Ollama, OpenAI-compatible
// (chat and Responses), Anthropic and Gemini APIs, for shell-level tests and benchmarks.
// Once listening it prints its base URL on stdout: use it as OLLAMA_HOST,
// ANTHROPIC_BASE_URL and GEMINI_BASE_URL, and URL/v1 as OPENAI_BASE_URL.
//
//	fakellm [-addr 127.0.0.1:0] [-record requests.jsonl] script.json
//
// A script (see fakellm.Script) looks like:
//
//	{
//	  "replies": [
//	    {"fault": "status", "status": 429, "retry_after": "1"},
//	    {"fault": "drop"},
//	    {"tool_calls": [{"name": "read_file", "args": {"path": "main.go"}}]},
//	    {"tool_calls": [{"name": "write_file", "raw_args": "{not json"}]},
//	    {"text": "thinking...", "delay": "2s"},
//	    {"tool_calls": [{"name": "task_complete", "args": {"summary": "done"}}]}
//	  ],
//	  "repeat": false,
//	  "routes": [{"match": "rename", "offers": "write_file", "replies": [...]}],
//	  "models": {"qwen3:4b": ["completion", "tools"]},
//	  "bench": false
//	}
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/agentrunner/runner/runner/model/fakellm"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		stop()
		os.Exit(1)
	}
}

// run serves until ctx ends, printing the base URL on stdout once listening.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	record := fs.String("record", "", "append every chat request received to this JSONL file")
	fs.Usage = func() {
		_, _ = fmt.Fprintln(fs.Output(), "usage: fakellm [-addr HOST:PORT] [-record FILE] SCRIPT.json") // console output: a failed write has nowhere to be reported
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("want exactly one script file")
	}
	script, err := fakellm.LoadScript(fs.Arg(0))
	if err != nil {
		return err
	}
	srv := fakellm.New(script)
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open record file: %w", err)
		}
		defer func() { _ = f.Close() }() // writes go straight to the file, unbuffered: Close loses no data
		var mu sync.Mutex
		enc := json.NewEncoder(f)
		srv.OnRequest(func(r fakellm.Request) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(r)
		})
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	_, _ = fmt.Fprintf(stdout, "http://%s\n", ln.Addr()) // console output: a failed write has nowhere to be reported

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return nil
}
