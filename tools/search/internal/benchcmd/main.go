// Command benchcmd runs one search tool call through a tools.Registry and prints its
// output, so that scripts/bench-search.sh can time it as a process next to rg and fd.
//
//	benchcmd -dir DIR TOOL 'JSON-ARGS'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/search"
)

func main() {
	dir := flag.String("dir", ".", "workspace directory")
	quiet := flag.Bool("q", false, "print only the metadata, not the output")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchcmd [-dir DIR] [-q] TOOL JSON-ARGS")
		os.Exit(2)
	}
	if err := run(*dir, flag.Arg(0), flag.Arg(1), *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "benchcmd:", err)
		os.Exit(1)
	}
}

func run(dir, tool, args string, quiet bool) error {
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		return fmt.Errorf("open workspace: %w", err)
	}
	defer ws.Close()
	reg := tools.NewRegistry()
	reg.MustRegister(search.Tools()...)
	res := reg.Run(context.Background(), tool, json.RawMessage(args), ws)
	if !quiet {
		fmt.Println(res.Output)
	}
	meta, _ := json.Marshal(res.Metadata)
	fmt.Fprintf(os.Stderr, "%s %s\n", meta, map[bool]string{true: "ok", false: "failed"}[res.Success])
	if !res.Success {
		return fmt.Errorf("%s failed: %s", tool, res.Output)
	}
	return nil
}
