package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes the decoder panic, and that a failure always comes
// with positioned problems. The seeds are the test files; `go test -fuzz FuzzParse` explores.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.y*ml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("a: &x [*x]\nprompt: *x\n"))
	f.Add([]byte("<<: [*a, *b]\n"))
	f.Add([]byte("? [a]\n: b\n"))
	opts := testOptions()
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := Parse("f.yaml", data, opts)
		if err == nil {
			if task == nil || strings.TrimSpace(task.Prompt) == "" {
				t.Fatalf("accepted a task without a prompt: %q", data)
			}
			return
		}
		for _, p := range Problems(err) {
			if !strings.HasPrefix(p.Error(), "f.yaml:") {
				t.Fatalf("problem without the file name: %q", p)
			}
		}
	})
}
