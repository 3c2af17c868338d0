package command

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// BenchmarkRegistryWith is the per-scenario cost of adding a task's tools to the catalog.
func BenchmarkRegistryWith(b *testing.B) {
	cat := catalog.Default()
	tl, err := New(Def{Name: "greet", Parameters: greetParams, Command: "true"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cat.With(tl); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCall compares a defined tool's call with run_in_terminal running the same
// command, unsandboxed: the difference is the arguments' stdin file and environment.
func BenchmarkCall(b *testing.B) {
	tl, err := New(Def{Name: "greet", Parameters: greetParams, Command: "true"})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := catalog.Default().With(tl)
	if err != nil {
		b.Fatal(err)
	}
	ws, err := tools.OpenWorkspace(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ws.Close() }() // test cleanup: its error does not change what the test checked
	for _, c := range []struct{ name, args string }{
		{"greet", `{"name":"ada","times":2}`},
		{"run_in_terminal", `{"command":"true"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if res := reg.Run(context.Background(), c.name, json.RawMessage(c.args), ws); !res.Success {
					b.Fatal(res.Output)
				}
			}
		})
	}
}
