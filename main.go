// Command runner runs LLM agents through scripted tasks and reports, in CI, whether they
// did the job. All logic lives in runner/cli; main only hands over the exit code.
package main

import (
	"os"

	"github.com/agentrunner/runner/runner/cli"
)

func main() { os.Exit(cli.Main(os.Args)) }
