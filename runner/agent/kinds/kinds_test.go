package kinds

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestLookup(t *testing.T) {
	k, err := Lookup("")
	if err != nil || k.Name != NameRunner || !k.Builtin {
		t.Fatalf("Lookup(\"\") = %+v, %v; want the built-in loop", k, err)
	}
	if _, err := Lookup("claud"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Lookup(claud) = %v, want ErrUnknown", err)
	}
	seen := map[string]bool{}
	for _, k := range Kinds {
		if k.Name == "" || k.Help == "" || seen[k.Name] {
			t.Errorf("row %+v: a name, a help line and no duplicate", k)
		}
		seen[k.Name] = true
		if !k.Builtin && (k.Program == "" || k.Args == nil) {
			t.Errorf("row %s: an external kind needs a program and arguments", k.Name)
		}
	}
}

func TestFindSearchesPathThenAgentsDir(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	k := Kind{Name: "x", Program: "fake-agent", Install: "npm ci"}
	if _, err := k.Find("/nonexistent", dir); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Find with nothing installed = %v, want ErrNotInstalled", err)
	}
	prog := filepath.Join(bin, "fake-agent")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := k.Find("relative:/nonexistent", dir); err != nil || got != prog {
		t.Fatalf("Find = %q, %v; want %q", got, err, prog)
	}
}

func TestCommandRow(t *testing.T) {
	k, _ := Lookup(NameCommand)
	if got := k.Args(Invocation{Command: "./agent.sh --fast"}); len(got) != 2 || got[0] != "-c" || got[1] != "./agent.sh --fast" {
		t.Fatalf("command args = %q", got)
	}
	if v := k.Judge(0, nil); !v.Finished {
		t.Fatal("exit 0 must be finished")
	}
	if v := k.Judge(3, nil); v.Finished || v.Reason == "" {
		t.Fatalf("exit 3 = %+v, want gave up with a reason", v)
	}
}

// What an agent prints is the agent's: the rows read its JSON lines (Claude Code's
// stream-json, Codex's events) for how it ended, from the last line back. A hostile
// stdout (the 4 MiB tail runner keeps) of newlines, of one line nested 100,000 deep, or of
// a flood of small values costs little memory to read, and the real last event is still
// found. Before the bounded reading, the 4 MiB of newlines made the rows allocate 200 MB
// (a slice entry per line, twice).
func TestHostileAgentOutputIsReadCheaply(t *testing.T) {
	const tail = 4 << 20
	claude := []byte(`{"type":"result","subtype":"success","is_error":false,"result":"done"}` + "\n")
	codex := []byte(`{"type":"item.completed","item":{"type":"agent_message","text":"done"}}` + "\n" + `{"type":"turn.completed","usage":{}}` + "\n")
	deep := bytes.Repeat([]byte("["), 100_000)
	flood := append([]byte(`{"type":"result","v":[`), bytes.Repeat([]byte("1,"), 1<<20)...)
	for name, hostile := range map[string][]byte{
		"newlines":   bytes.Repeat([]byte("\n"), tail),
		"deep line":  deep,
		"deep lines": bytes.Repeat(append(deep[:1000:1000], '\n'), tail/1001),
		"flood":      flood,
	} {
		for _, k := range []string{NameClaudeCode, NameCodex} {
			t.Run(name+"/"+k, func(t *testing.T) {
				row, _ := Lookup(k)
				good := map[string][]byte{NameClaudeCode: claude, NameCodex: codex}[k]
				for _, stdout := range [][]byte{
					append(append([]byte(nil), good...), hostile...), // the hostile lines last: read first
					append(append(append([]byte(nil), hostile...), '\n'), good...),
				} {
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					v := row.Judge(0, stdout)
					runtime.ReadMemStats(&after)
					if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
						t.Errorf("reading %d bytes allocated %d MiB", len(stdout), alloc>>20)
					}
					if !v.Finished || v.Summary != "done" {
						t.Errorf("verdict %+v: the real last event was not found", v)
					}
				}
			})
		}
	}
}

func TestModelID(t *testing.T) {
	for in, want := range map[string]string{
		"openai:gpt-5.5": "gpt-5.5", "ollama:qwen3:4b": "qwen3:4b", "oracle": "oracle", "x:": "x:",
	} {
		if got := ModelID(in); got != want {
			t.Errorf("ModelID(%q) = %q, want %q", in, got, want)
		}
	}
}
