package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/budget"
	"github.com/agentrunner/runner/runner/model/price"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
)

// nop drops the loop's events (the transcript's own cost is runner/transcript's benchmark).
type nop struct{}

func (nop) Write(int, transcript.Payload) error { return nil }

// BenchmarkLoopStep is the loop's own cost per step (request, response, policy, one
// read_file call, its result), the model an in-process script: with no --budget-usd, and
// with one (every call checked and charged by runner/model/budget). Run both in one run
// and compare ns/step: the budget's check is one mutex and a price per call.
func BenchmarkLoopStep(b *testing.B) {
	const steps = 200
	path := filepath.Join(b.TempDir(), "prices.yaml")
	if err := os.WriteFile(path, []byte("models:\n  bench:priced: {input: 1.0, output: 2.0}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	table, err := price.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, withBudget := range []bool{false, true} {
		name := "no-budget"
		if withBudget {
			name = "budget"
		}
		b.Run(name, func(b *testing.B) {
			m := &named{scripted: scripted{responses: []*model.Response{calls(call("read_file", `{"path":"small.txt"}`))}}, name: "bench:priced"}
			cfg, _, dir := setup(b, m, task.Approval{Mode: task.ModeAuto})
			if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("a small file\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			cfg.MaxSteps, cfg.Record = steps, nop{}
			if withBudget {
				cfg.Model = budget.New(1e12, table).Wrap(m)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if out := Run(context.Background(), cfg); out.Steps != steps {
					b.Fatalf("%d steps: %s %v", out.Steps, out.Stop, out.Err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
		})
	}
}

// named is scripted under another name, keeping no requests (a 200-step run would keep
// 200 growing conversations).
type named struct {
	scripted
	name string
}

func (n *named) Name() string { return n.name }

func (n *named) Step(context.Context, *model.Request) (*model.Response, error) {
	return n.responses[0], nil
}
