package workspace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrunner/runner/runner/workspace"
)

// BenchmarkVerificationReads measures what verification reads of a 2,000-file workspace
// (20 directories of 100 text files of 4 KiB, a tenth of them protected): the snapshot
// before the agent (manifest and texts), the comparison and the diffs of 200 changed
// files after it (apart: go-difflib is most of the diffs' time), and the copy
// fresh_container verification runs on. Every one reads through the door
// (runner/workspace/door) since issue 24. On a loaded machine wall times swing 2-3x between
// runs; the system calls per operation (strace -c -f, 6x minus 1x) compare two builds
// exactly:
//
//	go test ./runner/workspace -run '^$' -bench VerificationReads -count 5 -benchmem
func BenchmarkVerificationReads(b *testing.B) {
	dir := b.TempDir()
	content := strings.Repeat("a line of text in a source file\n", 128)
	var changed []string
	for i := range 2000 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", i/100))
		if i%100 == 0 {
			if err := os.Mkdir(sub, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		name := fmt.Sprintf("f%d.go", i)
		if i%10 == 0 {
			name = fmt.Sprintf("f%d_test.go", i)
		} else if i%9 == 0 {
			changed = append(changed, filepath.Join(sub, name))
		}
		if err := os.WriteFile(filepath.Join(sub, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	protect, err := workspace.NewProtect([]string{"**/*_test.go"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			m, err := workspace.Snapshot(ctx, dir, protect)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.Texts(ctx, dir, workspace.DefaultTextLimits); err != nil {
				b.Fatal(err)
			}
		}
	})
	m, err := workspace.Snapshot(ctx, dir, protect)
	if err != nil {
		b.Fatal(err)
	}
	texts, err := m.Texts(ctx, dir, workspace.DefaultTextLimits)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range changed {
		if err := os.WriteFile(p, []byte(content+"one more line\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	c, err := m.Compare(ctx, dir)
	if err != nil || len(c.Changed) != len(changed) {
		b.Fatal(err, len(c.Changed))
	}
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Compare(ctx, dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("diffs", func(b *testing.B) {
		for b.Loop() {
			if d := texts.Diffs(ctx, dir, c); len(d.Files) != len(changed) {
				b.Fatal(d.Note, len(d.Files))
			}
		}
	})
	b.Run("clone", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dst := filepath.Join(b.TempDir(), "copy")
			if err := os.Mkdir(dst, 0o755); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := workspace.Clone(ctx, dir, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}
