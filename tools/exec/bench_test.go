package exec

import (
	"context"
	"encoding/json"
	osexec "os/exec"
	"testing"

	"github.com/agentrunner/runner/tools"
)

// BenchmarkTerminalTrue measures a run_in_terminal call of `true` (prepare and execute,
// no sandbox) next to the bare exec of `sh -c true` it wraps: the difference is the
// tool's own cost per command.
func BenchmarkTerminalTrue(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if out, err := osexec.Command("sh", "-c", "true").CombinedOutput(); err != nil {
				b.Fatal(err, string(out))
			}
		}
	})
	b.Run("tool", func(b *testing.B) {
		ws, err := tools.OpenWorkspace(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = ws.Close() }() // test cleanup: its error does not change what the test checked
		reg := tools.NewRegistry()
		reg.MustRegister(Tools()...)
		raw := json.RawMessage(`{"command": "true"}`)
		for b.Loop() {
			if res := reg.Run(context.Background(), "run_in_terminal", raw, ws); !res.Success {
				b.Fatal(res.Output)
			}
		}
	})
}
