package cli

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/session"
)

// envHelp lists the environment variables runner reads, for --help: the providers' from
// their registry, then runner's own.
var envHelp = "Environment:\n" + session.ProviderEnvHelp("   ") + runnerEnvHelp()

// runnerEnv are the variables runner itself reads (the providers' are in their registry):
// --help and docs/reference.md list them.
var runnerEnv = [][2]string{
	{"RUNNER_PROBE_CACHE=off", "probe the sandbox on every start (see docs/sandbox.md)"},
	{"RUNNER_SEARCH_URL", "SearXNG-style JSON endpoint for web_search"},
	{"RUNNER_FETCH_ALLOW_HOSTS", "comma-separated hosts fetch_webpage may reach"},
	{"JOB_COMPLETION_INDEX, RUNNER_SHARD_COUNT", "read by --shard auto"},
	{"GITHUB_ACTIONS=true", "adds ::error annotations and a job summary (GITHUB_STEP_SUMMARY)"},
	{"NO_COLOR, TERM=dumb", "no colour; TERM=dumb: no escape codes at all"},
}

func runnerEnvHelp() string {
	var b strings.Builder
	for _, e := range runnerEnv {
		fmt.Fprintf(&b, "\n   %s%s%s", e[0], strings.Repeat(" ", max(2, 21-len(e[0]))), e[1])
	}
	return b.String()
}

// examplesHelp are the usual invocations, for --help.
// Each fits 80 columns (help is wrapped to the terminal; a wrapped command would not paste).
const examplesHelp = `Examples:
   # every task on its own model (default: oracle)
   runner run scenarios/
   runner run -m ollama:qwen2.5-coder:7b scenarios/ \
       --junit out/junit.xml --json out/report.json
   # one of four machines; then the four shards as one run
   runner run scenarios/ --shard 2/4 --out runner-out
   runner merge shard-*/ --junit junit.xml
   # finish a run that was killed
   runner run scenarios/ --resume runner-out
   runner validate --oracle scenarios/`

// unknownCommand returns a usage error when the first argument names no command (urfave
// would print "No help topic" or run nothing).
func unknownCommand(app *cli.App, args []string) error {
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return nil
	}
	var names []string
	for _, c := range app.Commands {
		if c.HasName(args[1]) {
			return nil
		}
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	if best := session.Closest(args[1], names); best != "" {
		return usageError("unknown command %q; did you mean %q? (commands: %s; see runner --help)", args[1], best, strings.Join(names, ", "))
	}
	return usageError("unknown command %q (commands: %s; see runner --help)", args[1], strings.Join(names, ", "))
}

var (
	badValue   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^invalid value "(.*)" for flag -([\w-]+): (.*)$`) })
	notDefined = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+([\w-]+)$`) })
)

// usageErrors makes every command's flag errors name the flag and the form it expects,
// as one line, instead of Go's flag package message followed by the whole help.
func usageErrors(cmds []*cli.Command, path string) {
	for _, c := range cmds {
		c := c
		name := strings.TrimSpace(path + " " + c.Name)
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usage(explainFlagError(name, c.Flags, err))
		}
		usageErrors(c.Subcommands, name)
	}
}

func explainFlagError(cmd string, flags []cli.Flag, err error) error {
	msg := err.Error()
	if m := notDefined().FindStringSubmatch(msg); m != nil {
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		if best := session.Closest(m[1], names); best != "" {
			return fmt.Errorf("%s: unknown flag --%s; did you mean --%s? (see runner %s --help)", cmd, m[1], best, cmd)
		}
		return fmt.Errorf("%s: unknown flag --%s (see runner %s --help)", cmd, m[1], cmd)
	}
	m := badValue().FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	want := "see runner " + cmd + " --help"
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != m[2] {
				continue
			}
			switch f.(type) {
			case *cli.DurationFlag:
				want = "want a duration such as 90s, 5m or 1h30m"
			case *cli.IntFlag:
				want = "want a whole number"
			case *cli.BoolFlag:
				want = "want true or false"
			}
			return fmt.Errorf("%s: --%s %q: %s", cmd, f.Names()[0], m[1], want)
		}
	}
	return fmt.Errorf("%s: --%s %q: %s", cmd, m[2], m[1], want)
}
