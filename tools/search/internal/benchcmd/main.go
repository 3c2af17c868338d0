// Command benchcmd times the search tools against ripgrep and fd for
// scripts/bench-search.sh.
//
//	benchcmd run -dir DIR TOOL JSON-ARGS
//
// runs one tool call through a tools.Registry and prints its output, like rg or fd would.
//
//	benchcmd compare -dir DIR -n RUNS -name LABEL [-runner BIN] TOOL JSON-ARGS -- COMMAND [ARGS...]
//
// runs "benchcmd run" and COMMAND alternately, RUNS times each, in DIR, and prints the
// median wall-clock and CPU times of both and their ratio, with the number of output lines
// of each so that a reader can check that both found the same thing. With -runner, the
// call goes through the runner binary's "runner tool" instead, its whole start-up and
// JSON result included.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/search"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(os.Args[2:])
	case "compare":
		err = compareCmd(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcmd:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchcmd run -dir DIR TOOL JSON-ARGS\n       benchcmd compare -dir DIR -n RUNS -name LABEL TOOL JSON-ARGS -- COMMAND [ARGS...]")
	os.Exit(2)
}

func runCmd(argv []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	dir := fs.String("dir", ".", "workspace directory")
	_ = fs.Parse(argv)
	if fs.NArg() != 2 {
		usage()
	}
	ws, err := tools.OpenWorkspace(*dir)
	if err != nil {
		return fmt.Errorf("open workspace: %w", err)
	}
	defer func() { _ = ws.Close() }() // a directory handle: Close loses no data
	reg := tools.NewRegistry()
	reg.MustRegister(search.Tools()...)
	res := reg.Run(context.Background(), fs.Arg(0), json.RawMessage(fs.Arg(1)), ws)
	if !res.Success {
		return fmt.Errorf("%s failed: %s", fs.Arg(0), res.Output)
	}
	if truncated, _ := res.Metadata["truncated"].(bool); truncated {
		fmt.Fprintln(os.Stderr, "benchcmd: warning: results truncated; the comparison is not like for like")
	}
	if res.Metadata["total_matches"] == 0 || res.Metadata["matches"] == 0 {
		return nil // the no-match message is not a result line
	}
	_, err = fmt.Println(res.Output)
	return err
}

// sample is one timed process run.
type sample struct {
	wall, cpu time.Duration
	lines     int
}

func compareCmd(argv []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	dir := fs.String("dir", ".", "workspace directory")
	n := fs.Int("n", 7, "runs of each command")
	name := fs.String("name", "", "label for the report line")
	runner := fs.String("runner", "", "run the call as `BIN tool` (the runner binary) instead of benchcmd run")
	_ = fs.Parse(argv)
	rest := fs.Args()
	sep := slices.Index(rest, "--")
	if sep != 2 || len(rest) < 4 {
		usage()
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	ours := []string{self, "run", "-dir", *dir, rest[0], rest[1]}
	if *runner != "" {
		ours = []string{*runner, "tool", "--workspace", *dir, rest[0], rest[1]}
	}
	theirs := rest[3:]
	// One untimed run of each warms the page cache and the directory entry cache.
	if _, err := timeRun(ours, *dir); err != nil {
		return err
	}
	if _, err := timeRun(theirs, *dir); err != nil {
		return err
	}
	var a, b []sample
	for range *n {
		s, err := timeRun(ours, *dir)
		if err != nil {
			return err
		}
		a = append(a, s)
		if s, err = timeRun(theirs, *dir); err != nil {
			return err
		}
		b = append(b, s)
	}
	ma, mb := median(a), median(b)
	tool := filepath.Base(theirs[0])
	fmt.Printf("%s: runner %dms, %s %dms, ratio %.2f (cpu: runner %dms, %s %dms; output lines: runner %d, %s %d)\n",
		*name, ma.wall.Milliseconds(), tool, mb.wall.Milliseconds(), float64(ma.wall)/float64(mb.wall),
		ma.cpu.Milliseconds(), tool, mb.cpu.Milliseconds(), ma.lines, tool, mb.lines)
	return nil
}

func timeRun(argv []string, dir string) (sample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	// rg exits 1 when nothing matched; only other failures count.
	if exit, ok := err.(*exec.ExitError); err != nil && (!ok || exit.ExitCode() != 1) {
		return sample{}, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, errOut.String())
	}
	st := cmd.ProcessState
	return sample{wall: wall, cpu: st.UserTime() + st.SystemTime(), lines: outputLines(out.Bytes())}, nil
}

// outputLines counts the lines a command printed, or those of the "output" of the JSON
// result that `runner tool` prints.
func outputLines(out []byte) int {
	var res struct {
		Output *string `json:"output"`
	}
	if json.Unmarshal(out, &res) == nil && res.Output != nil {
		return strings.Count(*res.Output, "\n") + 1
	}
	return bytes.Count(out, []byte{'\n'})
}

// median takes wall and CPU medians separately; lines are the same in every run.
func median(s []sample) sample {
	walls := make([]time.Duration, len(s))
	cpus := make([]time.Duration, len(s))
	for i, x := range s {
		walls[i], cpus[i] = x.wall, x.cpu
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return sample{wall: walls[len(s)/2], cpu: cpus[len(s)/2], lines: s[0].lines}
}
