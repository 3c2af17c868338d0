// Command server is a small stdio MCP server for the tests of tools/mcp and tests/, built
// by them with the same SDK the runner uses.
//
//	server [--data FILE] [--fail-start] [--more] [--bad-name] [--raw-tools JSON|error]
//
// --more adds the tools that exercise the client's edges (a slow one, one that crashes
// the server, every content kind, structured content, a protocol error); --bad-name adds
// a tool whose name providers reject; --raw-tools answers the handshake and tools/list by
// hand with the given tools array (or a JSON-RPC error), for definitions the SDK's server
// refuses to send, and closes its stdout at the first tools/call.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type noteIn struct {
	Path string `json:"path" jsonschema:"file to write, relative to the working directory"`
	Text string `json:"text"`
}

type envIn struct {
	Name string `json:"name"`
}

type none struct{}

type spawnIn struct {
	Token  string `json:"token" jsonschema:"a word that marks the process's command line"`
	Detach bool   `json:"detach,omitempty" jsonschema:"start it in a session of its own, out of the server's process group"`
	Script string `json:"script,omitempty" jsonschema:"what it runs (sh -c), in place of a long sleep"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	data := flag.String("data", "", "a file whose content read_data returns")
	failStart := flag.Bool("fail-start", false, "exit at once with an error on stderr")
	more := flag.Bool("more", false, "add the tools that exercise the client's edges")
	badName := flag.Bool("bad-name", false, "add a tool named bad.name")
	rawTools := flag.String("raw-tools", "", "speak JSON-RPC by hand, listing these tools (or \"error\")")
	flag.Parse()
	if *failStart {
		fmt.Fprintln(os.Stderr, "cannot open the database: no such file")
		os.Exit(2)
	}
	if *rawTools != "" {
		raw(*rawTools)
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write_note", Description: "Write a note into a file."},
		func(_ context.Context, _ *mcp.CallToolRequest, in noteIn) (*mcp.CallToolResult, any, error) {
			if err := os.WriteFile(in.Path, []byte(in.Text), 0o644); err != nil {
				return nil, nil, err // the SDK turns it into an error result
			}
			return text("wrote " + in.Path), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the backend said no"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Read an environment variable."},
		func(_ context.Context, _ *mcp.CallToolRequest, in envIn) (*mcp.CallToolResult, any, error) {
			return text(in.Name + "=" + os.Getenv(in.Name)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "read_data", Description: "Return the data file given at start."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(*data)
			if err != nil {
				return nil, nil, err
			}
			return text(string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Start a background process that tries to outlive the server."},
		func(_ context.Context, _ *mcp.CallToolRequest, in spawnIn) (*mcp.CallToolResult, any, error) {
			script := "sleep 300"
			if in.Script != "" {
				script = in.Script
			}
			cmd := exec.Command("sh", "-c", script+"; : "+in.Token)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: in.Detach}
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			return text("spawned " + strconv.Itoa(cmd.Process.Pid)), nil, nil
		})
	if *more {
		addMore(s)
		fmt.Fprintln(os.Stderr, "test server ready")
	}
	if *badName {
		mcp.AddTool(s, &mcp.Tool{Name: "bad.name", Description: "A name providers reject."},
			func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
				return text("unreachable"), nil, nil
			})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type sleepIn struct {
	MS int `json:"ms"`
}

func addMore(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Answer after ms milliseconds."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
			}
			return text("slept"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit the server in the middle of the call."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "kinds", Description: "Return one content of every kind."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "text"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("wave")},
				&mcp.ResourceLink{URI: "file:///linked.txt", Name: "linked"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///embedded.txt", Text: "embedded text"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///blob.bin", Blob: []byte{1, 2}}},
			}}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "structured", Description: "Return structured content only.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"answer": 42}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "protocol_error", Description: "Answer with a JSON-RPC error.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("the tool's backend is unreachable")
		})
}

// raw speaks just enough JSON-RPC over stdio for a client's handshake and tool listing:
// tools is the tools/list result's array, or "error" for an error answer.
func raw(tools string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.ID == nil {
			continue // a notification
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch {
		case req.Method == "initialize":
			resp["result"] = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "raw", "version": "1"}}
		case req.Method == "tools/list" && tools != "error":
			resp["result"] = map[string]any{"tools": json.RawMessage(tools)}
		case req.Method == "tools/call":
			// Hang up without exiting: a server that stopped answering.
			os.Stdout.Close()
			time.Sleep(time.Minute)
		default:
			resp["error"] = map[string]any{"code": -32603, "message": "the tool registry is broken"}
		}
		_ = out.Encode(resp)
	}
}
