package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRunOneStep measures what `runner run` costs in process for a 1-step oracle
// scenario: the part of startup that is the runner's own, after package init.
func BenchmarkRunOneStep(b *testing.B) {
	dir := b.TempDir()
	taskFile := filepath.Join(dir, "one-step.yaml")
	if err := os.WriteFile(taskFile, []byte("name: one-step\nprompt: Say you are done.\ntools: [read_file]\n"+
		"assert:\n  - completed: true\nreference:\n  - task_complete: {summary: done}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	stdio := IO{Stdin: nil, Stdout: io.Discard, Stderr: io.Discard}
	for b.Loop() {
		out := filepath.Join(dir, "out")
		code := Run(context.Background(), []string{"runner", "run", "--sandbox", "none", "--cache-dir", filepath.Join(dir, "cache"), "--out", out, taskFile}, stdio)
		if code != ExitOK {
			b.Fatalf("exit code %d", code)
		}
		if err := os.RemoveAll(out); err != nil {
			b.Fatal(err)
		}
	}
}
