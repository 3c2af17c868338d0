package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// InitOptions are the flags of `runner init`.
type InitOptions struct {
	// Dir is the repository's root, where the files go.
	Dir string
	IO
}

// The files `runner init` writes, relative to the repository's root.
const (
	initTaskPath     = "scenarios/first-task.yaml"
	initWorkflowPath = ".github/workflows/agents.yml"
)

// initIgnored are the output directories of run and bench, for .gitignore.
var initIgnored = []string{"runner-out/", "bench-out/"}

// initTask is the first task: small, no toolchain needed, and its reference solution
// passes (runner validate --oracle; TestInitWritesAFirstSuite runs it).
const initTask = `# yaml-language-server: $schema=https://raw.githubusercontent.com/agentrunner/runner/main/runner/task/task.schema.json
# Your first task, written by runner init: make it yours. The prompt is what the agent is
# asked; the workspace is what it starts from; the assertions decide pass or fail after it
# stops; the reference is one correct solution (runner validate --oracle plays it). Every
# key: docs/task-files.md. Defaults for every task here can go in scenarios/runner.yaml.
name: first-task
description: Fix a shell script's greeting; a check runs the script once the agent is done.
prompt: |
  greet.sh prints the wrong greeting. Make it print exactly "Hello, runner!" and keep the
  rest of the script as it is. Call task_complete when done.
tools: [read_file, replace_string_in_file, run_in_terminal]
max_steps: 10
timeout: 2m
workspace:
  files:
    greet.sh: |
      #!/bin/sh
      # Greets whoever runs it.
      echo "Hello, world"
assert:
  - completed: true
  - command:
      run: sh greet.sh
      stdout_contains: Hello, runner!
  - file_contains: {path: greet.sh, text: "# Greets whoever runs it."}
reference:
  - read_file: {path: greet.sh}
  - replace_string_in_file: {path: greet.sh, old_string: "Hello, world", new_string: "Hello, runner!"}
  - run_in_terminal: {command: sh greet.sh}
  - task_complete: {summary: "greet.sh now prints Hello, runner!"}
`

// initWorkflow is examples/github-workflow.yml, byte for byte (TestInitWorkflowIsTheExample),
// so actionlint (make lint-actions) checks what init writes.
const initWorkflow = `# .github/workflows/agents.yml: run the suite on every push with the runner action;
# failed assertions are annotated on the task files and the job summary has a table.
name: agents
on:
  push:
  pull_request:
permissions:
  contents: read
jobs:
  agents:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - id: runner
        uses: agentrunner/runner@main # or a release tag, with ` + "`version:`" + ` to skip the build
        with:
          paths: scenarios/
          model: oracle # or ollama:NAME / openai:NAME with the server's env set
      - run: echo "${{ steps.runner.outputs.passed }} passed, ${{ steps.runner.outputs.failed }} failed"
        if: always()
`

func initCommand(stdio IO) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "start a suite in the current repository: a first task file, a GitHub workflow running it with the runner action, and runner-out/ and bench-out/ in .gitignore",
		Description: "Asks nothing and overwrites nothing: when a file it would write exists, it names it and writes nothing. " +
			"The files go to the root of the git repository around the current directory (else the current directory): " +
			initTaskPath + ", " + initWorkflowPath + ", and lines in .gitignore.",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("init: takes no arguments (it writes into the repository around the current directory)")
			}
			cwd, err := os.Getwd()
			if err != nil {
				return errored(fmt.Errorf("init: %w", err))
			}
			return Init(InitOptions{Dir: repoRoot(cwd), IO: stdio})
		},
	}
}

// repoRoot is the root of the git repository around dir, or dir outside one.
func repoRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// Init runs `runner init`: it writes the first task and the workflow, adds the output
// directories to .gitignore, and prints what it did and what to run next. An existing
// task or workflow file is refused (all of them named) before anything is written.
func Init(opts InitOptions) error {
	files := []struct{ path, content, what string }{
		{initTaskPath, initTask, "a first task; its reference solution passes"},
		{initWorkflowPath, initWorkflow, "runs the suite on every push and pull request with the runner action"},
	}
	var exist []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(opts.Dir, filepath.FromSlash(f.path))); err == nil {
			exist = append(exist, f.path)
		} else if !errors.Is(err, os.ErrNotExist) {
			return errored(fmt.Errorf("init: %w", err))
		}
	}
	if len(exist) > 0 {
		return usageError("init: %s already exist(s) in %s; nothing was written (move them aside, or edit them instead)", strings.Join(exist, ", "), opts.Dir)
	}
	say := func(format string, args ...any) {
		_, _ = fmt.Fprintf(opts.Stdout, format, args...) // console output: a failed write has nowhere to be reported
	}
	for _, f := range files {
		path := filepath.Join(opts.Dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return errored(fmt.Errorf("init: %w", err))
		}
		// O_EXCL: a file that appeared since the check is still not overwritten.
		if err := writeNew(path, f.content); err != nil {
			return errored(fmt.Errorf("init: %w", err))
		}
		say("wrote %-30s %s\n", f.path, f.what)
	}
	added, err := addIgnored(filepath.Join(opts.Dir, ".gitignore"), initIgnored)
	if err != nil {
		return errored(fmt.Errorf("init: %w", err))
	}
	if len(added) > 0 {
		say("added %s to .gitignore\n", strings.Join(added, " and "))
	} else {
		say(".gitignore already ignores %s\n", strings.Join(initIgnored, " and "))
	}
	say("\nNext: runner run --model oracle scenarios/\n" +
		"  (the reference solution, no model needed; then a real one, e.g. --model ollama:qwen3:4b,\n" +
		"  and commit the files: the workflow runs the suite on your next push)\n")
	return nil
}

// writeNew writes a file that must not exist yet.
func writeNew(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// addIgnored appends the lines .gitignore lacks (creating it if needed) and returns them.
// A line present with or without its leading or trailing slash counts as present.
func addIgnored(path string, lines []string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.Trim(strings.TrimSpace(l), "/")] = true
	}
	var missing []string
	for _, l := range lines {
		if !have[strings.Trim(l, "/")] {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	var b strings.Builder
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		b.WriteString("\n")
	}
	b.WriteString("# runner's output (runner run, runner bench)\n" + strings.Join(missing, "\n") + "\n")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return missing, err
}
