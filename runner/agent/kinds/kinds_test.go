package kinds

import (
	"errors"
	"os"
	"path/filepath"
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
