package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/tools/exec/container/containertest"
)

// Attacks on runner's own reading (SECURITY.md, "What runner reads"): the agent (the
// oracle playing reference:) leaves something that is not a readable file where
// verification reads one: at answer.txt (a file assertion), at reward.txt (the score
// file) and, through its own test script that the task's check runs, at
// $RESULTS_DIR/report.xml (the check's JUnit report). Each must fail the scenario at once
// (exit 1, well before the timeout), with a message naming what the agent left; never
// error it (exit 3), which bench leaves out of the pass rate and CI reads as flaky
// infrastructure.

// doorKind is one thing an agent can leave where a file is read.
type doorKind struct {
	name string
	// make is a shell function body that makes the thing at "$1".
	make string
	// follow is what a read that follows links (a file assertion) says of it, strict what
	// a read that follows none (the report, the score file) says; %s is the path.
	follow, strict string
	// container is false where the kind cannot be made or read differently in a
	// container (no python3 in the busybox image; runner reads a mode-000 file as root).
	container bool
}

var doorKinds = []doorKind{
	{name: "fifo", make: `mkfifo "$1"`,
		follow: "%s is a FIFO (named pipe), not a regular file", strict: "%s is a FIFO (named pipe), not a regular file", container: true},
	{name: "socket", make: `python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"`,
		follow: "%s is a socket, not a regular file", strict: "%s is a socket, not a regular file"},
	{name: "device", make: `mknod "$1" c 1 5`,
		follow: "%s is a device file, not a regular file", strict: "%s is a device file, not a regular file", container: true},
	{name: "unreadable", make: `echo 42 > "$1" && chmod 000 "$1"`,
		follow: "%s cannot be read (permission denied)", strict: "%s cannot be read (permission denied)"},
	{name: "symlink loop", make: `ln -s "$1.loop" "$1" && ln -s "$1" "$1.loop"`,
		follow: "%s: too many levels of symbolic links (a symlink loop)", strict: "%s is a symlink, which runner does not follow here", container: true},
}

// doorTask is the task; %[1]s is the environment (empty on the host), %[2]s how the
// check is run, %[3]s the agent's script (indented).
const doorTask = `name: door
prompt: Make the tests pass.
tools: [run_in_terminal, write_file]
timeout: %[4]s
%[1]sverify:
  files:
    check.sh: sh ./test.sh
assert:
  - file_contains: {path: answer.txt, text: "42"}
  - command: {run: %[2]s, junit: report.xml}
score: {file: reward.txt}
reference:
  - write_file:
      path: attack.sh
      content: |
%[3]s
  - run_in_terminal: {command: sh attack.sh}
  - task_complete: {summary: done}
`

// attackScript makes k's thing at answer.txt, and a test script (which the task's check
// runs) that makes it at $RESULTS_DIR/report.xml and at the score file, reward.txt (the
// one the agent left is removed before the checks, so that the tests write it afresh);
// it prints MADE when the sandbox let it.
func attackScript(k doorKind) string {
	return fmt.Sprintf(`mk() { %[1]s; }
mk answer.txt && echo MADE
printf '%%s\n' 'mk() { %[2]s; }' 'mk "$RESULTS_DIR/report.xml"; mk reward.txt' > test.sh
`, k.make, strings.ReplaceAll(k.make, "'", `'"'"'`))
}

// deepScript: 20 nested directories of 250-character names, made one `cd` at a time (no
// path given to the system is longer than a name), a file at the bottom, and the task
// done (solved) or not.
func deepScript(solved bool) string {
	answer, report := "41", `<testsuite><testcase name="test_answer"><failure message="41 != 42"/></testcase></testsuite>`
	if solved {
		answer, report = "42", `<testsuite><testcase name="test_answer"/></testsuite>`
	}
	return fmt.Sprintf(`(n=%s; i=0; while [ $i -lt 20 ]; do mkdir "$n" && cd -P "$n" || exit 1; i=$((i+1)); done; echo bottom > bottom.txt) && echo MADE
echo %s > answer.txt
printf '%%s\n' 'echo '"'"'%s'"'"' > "$RESULTS_DIR/report.xml"; echo %s > reward.txt' > test.sh
`, strings.Repeat("d", 250), answer, report, map[bool]string{true: "1", false: "0"}[solved])
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+by)
}

// doorMode is where the agent's commands and the checks run.
type doorMode struct {
	name    string
	sandbox string // --sandbox; "" with a container
	fresh   bool   // in a container, verify.fresh_container
}

var doorModes = []doorMode{{"none", "none", false}, {"bwrap", "bwrap", false}, {"landlock", "landlock", false}, {"fresh_container", "", true}}

// doorRun runs the task with script as the agent in mode, and returns the result and how
// long the run took; it skips when the mode is not available here.
func doorRun(t *testing.T, mode doorMode, script string, asUser bool) (result.Scenario, outcome) {
	t.Helper()
	env, check, timeout := "", "sh check.sh", "60s"
	dir := t.TempDir()
	if asUser {
		dir = sharedDir(t)
	}
	args := []string{"run", "--out", filepath.Join(dir, "out")}
	if mode.fresh {
		e := containertest.Engine(t)
		containertest.Image(t, e)
		env = fmt.Sprintf("environment: {dockerfile: %s}\n", containertest.DockerfilePath(t))
		check, timeout = "sh /tests/check.sh", "3m"
		args = append(args, "--engine", e.Path)
	} else {
		args = append(args, "--sandbox", mode.sandbox)
	}
	body := fmt.Sprintf(doorTask, env, check, indent(script, "        "), timeout)
	if mode.fresh {
		body = strings.Replace(body, "verify:\n", "verify:\n  fresh_container: true\n", 1)
	}
	path := filepath.Join(dir, "door.yaml")
	assert.NilError(t, os.WriteFile(path, []byte(body), 0o644))
	args = append(args, path)
	var o outcome
	if asUser {
		o = runnerAs(t, dir, args)
	} else {
		o = runner(t, run{Args: args, Timeout: 5 * time.Minute})
	}
	if strings.Contains(o.Stdout+o.Stderr, "does not support Landlock") || strings.Contains(o.Stdout+o.Stderr, "bwrap is not") {
		t.Skipf("%s is not available here", mode.name)
	}
	_, err := os.Stat(filepath.Join(dir, "out", "door", "result.json"))
	assert.NilError(t, err, o.Stdout+o.Stderr)
	return readResult(t, filepath.Join(dir, "out", "door", "result.json")), o
}

// quick is how long a run may take before it counts as waiting for the deadline: well
// under the task's timeout (60 s on the host, 3 min in a container).
func quick(mode doorMode) time.Duration {
	if mode.fresh {
		return 150 * time.Second
	}
	return 40 * time.Second
}

// TestAgentLeftContentFailsEveryReader performs each attack in every mode: the scenario
// fails at once, each reader names what it found, and nothing is errored.
func TestAgentLeftContentFailsEveryReader(t *testing.T) {
	t.Parallel()
	for _, k := range doorKinds {
		for _, mode := range doorModes {
			t.Run(k.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				if mode.fresh && !k.container {
					t.Skip("not made in the busybox image (no python3), or read as root there")
				}
				asUser := k.name == "unreadable" && os.Geteuid() == 0
				s, o := doorRun(t, mode, attackScript(k), asUser)
				outs := agentOutputs(t, s)
				if !strings.Contains(outs, "MADE") {
					t.Skipf("the %s sandbox does not let the agent make a %s: %s", mode.name, k.name, outs)
				}
				assert.Equal(t, s.Status, result.Failed, s.Reason)
				assert.Equal(t, o.Code, 1, o.Stdout+o.Stderr)
				assert.Assert(t, o.Took < quick(mode), "took %s: the read waited for the deadline", o.Took)
				assert.Equal(t, len(s.Assertions), 2)
				answer, report := s.Assertions[0].Message, s.Assertions[1].Message
				switch {
				case mode.fresh && k.name != "symlink loop":
					// The copy verification runs on holds no special files.
					assert.Check(t, is.Contains(answer, "answer.txt does not exist"))
				default:
					assert.Check(t, is.Contains(answer, "the agent broke the workspace: "+fmt.Sprintf(k.follow, "answer.txt")))
				}
				assert.Check(t, is.Contains(report, "the agent broke the workspace: "+fmt.Sprintf(k.strict, "$RESULTS_DIR/report.xml")))
				assert.Check(t, is.Contains(s.ScoreNote, "the agent broke the workspace: "+fmt.Sprintf(k.strict, "reward.txt")))
			})
		}
	}
}

// TestDeepTreeIsNoError: 20 nested 250-character directory names (a path over 5,000
// bytes) are walked, diffed and copied for verification like any tree: the scenario is
// decided by its assertions, failed or passed, never errored.
func TestDeepTreeIsNoError(t *testing.T) {
	t.Parallel()
	for _, mode := range doorModes {
		for _, solved := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/solved=%v", mode.name, solved), func(t *testing.T) {
				t.Parallel()
				s, o := doorRun(t, mode, deepScript(solved), false)
				assert.Assert(t, strings.Contains(agentOutputs(t, s), "MADE"), agentOutputs(t, s))
				assert.Assert(t, o.Took < quick(mode), "took %s", o.Took)
				if !solved {
					assert.Equal(t, s.Status, result.Failed, s.Reason)
					assert.Equal(t, o.Code, 1)
					assert.Check(t, is.Contains(s.Reason, `answer.txt does not contain "42"`))
					return
				}
				assert.Equal(t, s.Status, result.Passed, s.Reason)
				assert.Equal(t, o.Code, 0)
				assert.Assert(t, s.Score != nil && *s.Score == 1, "%v %s", s.Score, s.ScoreNote)
				assert.Assert(t, s.FilesChanged != nil)
				deepest := ""
				for _, p := range s.FilesChanged.Created {
					if len(p) > len(deepest) {
						deepest = p
					}
				}
				assert.Check(t, strings.HasSuffix(deepest, "/bottom.txt") && len(deepest) > 5000, "deepest created path: %.80s… (%d bytes)", deepest, len(deepest))
			})
		}
	}
}

// agentOutputs joins what the agent's commands printed, from the transcript.
func agentOutputs(t *testing.T, s result.Scenario) string {
	t.Helper()
	var b strings.Builder
	for _, c := range toolCalls(t, readTranscript(t, s.Transcript)) {
		b.WriteString(c.Result.Output)
		b.WriteString("\n")
	}
	return b.String()
}

// sharedDir is a directory another user (nobody, 65534) may use: the run as that user
// keeps its task, output, home and temp directories there.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "runner-door-")
	assert.NilError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	assert.NilError(t, os.Chmod(dir, 0o777))
	return dir
}

// runnerAs runs the binary as the user nobody (uid and gid 65534), from a copy in dir
// (the build directory is private): as root, runner would read a mode-000 file anyway.
func runnerAs(t *testing.T, dir string, args []string) outcome {
	t.Helper()
	bin := filepath.Join(dir, "runner")
	src, err := os.Open(runnerBin)
	assert.NilError(t, err)
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	assert.NilError(t, err)
	_, err = io.Copy(dst, src)
	assert.NilError(t, err)
	assert.NilError(t, dst.Close())
	_ = src.Close()
	for _, d := range []string{"home", "tmp"} {
		assert.NilError(t, os.Mkdir(filepath.Join(dir, d), 0o777))
		assert.NilError(t, os.Chmod(filepath.Join(dir, d), 0o777))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home"), "TMPDIR=" + filepath.Join(dir, "tmp"), "LANG=C.UTF-8"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	o := outcome{Stdout: stdout.String(), Stderr: stderr.String(), Took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		t.Fatalf("runner did not finish within 2m\n%s\n%s", o.Stdout, o.Stderr)
	case errors.As(err, &exit):
		o.Code = exit.ExitCode()
	default:
		t.Fatalf("runner: %v", err)
	}
	t.Logf("runner (as nobody) %s -> exit %d in %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), o.Code, o.Took.Round(time.Millisecond), o.Stdout, o.Stderr)
	// The run's files belong to nobody: let the test's cleanup remove them.
	_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { _ = os.Chmod(p, 0o777); return nil })
	return o
}
