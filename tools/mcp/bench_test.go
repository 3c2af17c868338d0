package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox"
)

// BenchmarkStart is a server's start: process, handshake and tool listing.
func BenchmarkStart(b *testing.B) {
	ws, err := tools.OpenWorkspace(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ws.Close() }() // test cleanup: its error does not change what the test checked
	ws.Sandbox = sandbox.None()
	for b.Loop() {
		s, err := Start(context.Background(), ws, Options{Name: "b", Argv: []string{serverBin}})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkCall is one tool call's round trip to a running server.
func BenchmarkCall(b *testing.B) {
	ws, err := tools.OpenWorkspace(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ws.Close() }()
	ws.Sandbox = sandbox.None()
	s, err := Start(context.Background(), ws, Options{Name: "b", Argv: []string{serverBin}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	reg := tools.NewRegistry()
	reg.MustRegister(s.Tools()...)
	args := json.RawMessage(`{"text":"hi"}`)
	for b.Loop() {
		if res := reg.Run(context.Background(), "b__echo", args, ws); !res.Success {
			b.Fatal(res.Output)
		}
	}
}
