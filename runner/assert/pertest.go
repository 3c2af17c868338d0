package assert

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/workspace/door"
	"github.com/agentrunner/runner/tools/exec/container"
)

// maxResultFile bounds a JUnit or score file read back after the tests ran.
const maxResultFile = 16 << 20

// RemoteFiles is implemented by an environment's container (the Run's Wrap): files at
// absolute paths inside it, which the host cannot open.
type RemoteFiles interface {
	// ReadFile reads a regular file of at most max bytes; anything else is a
	// *container.NotRegularError.
	ReadFile(ctx context.Context, name string, max int64) ([]byte, error)
	RemoveFile(ctx context.Context, name string) error
	// TempDir makes a new directory with a name drawn now, which any user may write.
	TempDir(ctx context.Context) (string, error)
}

// ResultsDirEnv is the variable that names a check's results directory: a command with
// junit: writes its report there.
const ResultsDirEnv = "RESULTS_DIR"

// resultsDir is a directory made afresh for one command check's reports, outside the
// workspace: on the host a new temp dir (which the sandbox hides from the agent's
// commands, and whose name did not exist while the agent ran), inside an environment's
// container a new directory under /tmp. Nothing the agent left behind can be in it.
type resultsDir struct {
	dir  string
	host bool
	rf   RemoteFiles
}

func newResultsDir(ctx context.Context, run *Run) (*resultsDir, error) {
	if rf, ok := run.Wrap.(RemoteFiles); ok {
		dir, err := rf.TempDir(ctx)
		if err != nil {
			return nil, err
		}
		return &resultsDir{dir: dir, rf: rf}, nil
	}
	dir, err := os.MkdirTemp("", "runner-results-")
	if err != nil {
		return nil, err
	}
	// The sandbox may run the command as another user (bwrap's, a task's): let it write.
	if err := os.Chmod(dir, 0o777); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &resultsDir{dir: dir, host: true}, nil
}

// read reads a report the command wrote, capped: on the host through the door (a FIFO,
// a device or a link the command left is refused, not followed or waited on), in a
// container by RemoteFiles, which refuses the same.
func (r *resultsDir) read(ctx context.Context, name string) ([]byte, error) {
	if !r.host {
		b, err := r.rf.ReadFile(ctx, path.Join(r.dir, name), maxResultFile)
		return b, remoteErr("$"+ResultsDirEnv+"/"+path.Clean(name), err)
	}
	d, err := door.OpenLabeled(r.dir, "$"+ResultsDirEnv)
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }() // a directory handle: Close loses no data
	return d.ReadFile(path.Clean(name), maxResultFile)
}

// remoteErr is a RemoteFiles.ReadFile error of the file named p, as the door's kind when
// the container said what it found there.
func remoteErr(p string, err error) error {
	var nr *container.NotRegularError
	if !errors.As(err, &nr) {
		return err
	}
	kinds := map[string]door.Kind{
		container.FoundFIFO: door.FIFO, container.FoundSocket: door.Socket, container.FoundDevice: door.Device,
		container.FoundSymlink: door.Symlink, container.FoundDirectory: door.Directory, container.FoundTooLarge: door.TooLarge,
	}
	kind, ok := kinds[nr.Found]
	if !ok {
		kind = door.Irregular
	}
	return &door.Error{Path: p, Kind: kind, Limit: nr.Limit}
}

func (r *resultsDir) remove() {
	if r.host {
		_ = os.RemoveAll(r.dir)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = r.rf.RemoveFile(ctx, r.dir)
}

// testsChecker is a Checker that also reports per-test results.
type testsChecker interface {
	CheckTests(ctx context.Context, run *Run) (passed bool, message string, tests []result.Test)
}

// readResultFile reads a file the tests wrote: a workspace path through the door (no
// link followed, nothing but a regular file read), or an absolute path inside the
// environment's container.
func readResultFile(ctx context.Context, run *Run, name string) ([]byte, error) {
	if strings.HasPrefix(name, "/") {
		rf, ok := run.Wrap.(RemoteFiles)
		if !ok {
			return nil, fmt.Errorf("%s: an absolute path needs an environment", name)
		}
		b, err := rf.ReadFile(ctx, name, maxResultFile)
		return b, remoteErr(name, err)
	}
	d, err := run.files()
	if err != nil {
		return nil, err
	}
	return d.ReadFile(path.Clean(name), maxResultFile)
}

// RemoveResultFile deletes a results or score file before the tests run, so that one the
// agent planted (all tests passed, reward 1) cannot stand in for the real one when the
// tests fail to write theirs. A file that is not there is fine.
func RemoveResultFile(ctx context.Context, run *Run, name string) error {
	if strings.HasPrefix(name, "/") {
		rf, ok := run.Wrap.(RemoteFiles)
		if !ok {
			return fmt.Errorf("%s: an absolute path needs an environment", name)
		}
		return rf.RemoveFile(ctx, name)
	}
	ws, err := run.workspace()
	if err != nil {
		return err
	}
	if err := ws.Root().RemoveAll(path.Clean(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}

// The JUnit XML shapes: a <testsuites> or a <testsuite> root, suites nested to any depth.
type (
	junitNode struct {
		Suites []junitNode `xml:"testsuite"`
		Cases  []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure"`
		Error     *junitProblem `xml:"error"`
		Skipped   *junitProblem `xml:"skipped"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
)

// ParseJUnit reads the test cases of a JUnit XML report (pytest --junitxml, go-junit-report,
// Jest, Maven Surefire, ...).
func ParseJUnit(data []byte) ([]result.Test, error) {
	var root junitNode
	if err := xml.Unmarshal(trimXML(data), &root); err != nil {
		return nil, fmt.Errorf("not JUnit XML: %w", err)
	}
	var out []result.Test
	var walk func(n junitNode)
	walk = func(n junitNode) {
		for _, c := range n.Cases {
			t := result.Test{Name: c.Name, Classname: c.Classname, Status: result.TestPassed}
			if secs, err := strconv.ParseFloat(c.Time, 64); err == nil && secs > 0 {
				t.Duration = result.Millis(time.Duration(secs * float64(time.Second)))
			}
			switch {
			case c.Error != nil:
				t.Status, t.Message = result.TestError, problemText(c.Error)
			case c.Failure != nil:
				t.Status, t.Message = result.TestFailed, problemText(c.Failure)
			case c.Skipped != nil:
				t.Status, t.Message = result.TestSkipped, problemText(c.Skipped)
			}
			out = append(out, t)
		}
		for _, s := range n.Suites {
			walk(s)
		}
	}
	walk(root)
	return out, nil
}

// problemText is a failure's message (the assertion) and the tail of its text (the
// traceback's end, captured output), each bounded as failureMessage bounds pytest's.
func problemText(p *junitProblem) string {
	msg, text := strings.TrimSpace(p.Message), strings.Trim(p.Text, "\n")
	if len(msg) > assertionShown {
		msg = strings.ToValidUTF8(msg[:assertionShown], "") + "…"
	}
	if strings.TrimSpace(text) == "" || strings.Contains(msg, strings.TrimSpace(text)) {
		return msg
	}
	lines := strings.Split(text, "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	tail := strings.Join(lines, "\n")
	if len(tail) > tailBytes {
		tail = "…" + strings.ToValidUTF8(tail[len(tail)-tailBytes:], "")
	}
	if msg == "" {
		return tail
	}
	return msg + "\n" + tail
}

// pytestLine is one line of pytest's -rA short test summary.
var pytestLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (.+)$`) })

// pytestStatus maps the summary's words to outcomes. XFAIL (an expected failure) and XPASS
// (non-strict) leave pytest's exit code at 0, so they count as passed.
var pytestStatus = map[string]result.TestStatus{
	"PASSED": result.TestPassed, "FAILED": result.TestFailed, "ERROR": result.TestError,
	"SKIPPED": result.TestSkipped, "XFAIL": result.TestPassed, "XPASS": result.TestPassed,
}

// ParsePytest reads the per-test results of pytest -rA output: the lines of the "short
// test summary info" section (or of the whole output, when that header is missing), such
// as "PASSED tests/test_outputs.py::test_hello" and "FAILED tests/t.py::test_x - assert 1 == 2".
// A failed or errored test's message is taken from its section of the report where there
// is one (see failureSections): pytest cuts the summary's line to the terminal's width
// (80 columns without one), which loses the assertion.
func ParsePytest(out string) []result.Test {
	tests, _ := parsePytestCounted(out)
	return tests
}

// pytestSummaryHeader is the line that opens pytest's short test summary (matched loosely:
// a forgery need not draw the rule of = around it).
var pytestSummaryHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^.*short test summary info.*$`)
})

// parsePytestCounted is ParsePytest, and the number of summary headers it saw: more than
// one means something other than pytest printed one (pytest prints it once per run).
func parsePytestCounted(full string) ([]result.Test, int) {
	out := full
	headers := pytestSummaryHeader().FindAllStringIndex(out, -1)
	if len(headers) > 0 {
		out = out[headers[len(headers)-1][0]:]
	}
	var sections map[string]string
	var tests []result.Test
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := pytestLine().FindStringSubmatch(strings.TrimRight(sc.Text(), "\r"))
		if m == nil {
			continue
		}
		t := result.Test{Status: pytestStatus[m[1]]}
		rest := m[2]
		if t.Status == result.TestSkipped {
			// SKIPPED [1] tests/t.py:12: reason
			t.Name, t.Message = skippedName(rest)
		} else if m[1] == "PASSED" {
			t.Name = rest // a parameter may hold " - "; a PASSED line has no message
		} else {
			t.Name, t.Message, _ = strings.Cut(rest, " - ")
		}
		if file, name, ok := strings.Cut(t.Name, "::"); ok {
			t.Classname, t.Name = file, name
		}
		if t.Status == result.TestFailed || t.Status == result.TestError {
			if sections == nil {
				sections = failureSections(full)
			}
			t.Message = failureMessage(t, sections)
		}
		tests = append(tests, t)
	}
	return tests, len(headers)
}

func skippedName(rest string) (name, reason string) {
	if strings.HasPrefix(rest, "[") {
		if _, after, ok := strings.Cut(rest, "] "); ok {
			rest = after
		}
	}
	// tests/t.py:12: reason
	if i := strings.Index(rest, ": "); i >= 0 {
		return rest[:i], rest[i+2:]
	}
	return rest, ""
}

// summarizeTests says how a test run went: "3 of 4 tests passed; failed: test_x".
func summarizeTests(tests []result.Test) (allPassed bool, msg string) {
	var bad, skipped []string
	passed := 0
	for _, t := range tests {
		switch t.Status {
		case result.TestPassed:
			passed++
		case result.TestSkipped:
			skipped = append(skipped, t.Name)
		default:
			bad = append(bad, t.Name)
		}
	}
	counted := len(tests) - len(skipped)
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d tests passed", passed, counted)
	if len(skipped) > 0 {
		fmt.Fprintf(&b, " (%d skipped)", len(skipped))
	}
	if len(bad) > 0 {
		shown := bad
		if len(shown) > 10 {
			shown = shown[:10]
		}
		fmt.Fprintf(&b, "; failed: %s", strings.Join(shown, ", "))
		if len(bad) > len(shown) {
			fmt.Fprintf(&b, " (+%d more)", len(bad)-len(shown))
		}
	}
	return len(bad) == 0 && counted > 0, b.String()
}

// trimXML drops a UTF-8 BOM some writers put before the XML declaration.
func trimXML(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }

// pytestSectionHeader is the line that opens one test's part of pytest's FAILURES or
// ERRORS section ("____ test_x ____", "____ TestA.test_b[1] ____", "____ ERROR at setup
// of test_c ____"); pytestRule ends the sections.
var (
	pytestSectionHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^_{3,} (.+?) _{3,}\r?$`) })
	pytestRule          = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^={3,}( .* =+)?\r?$`) })
)

// failureSections maps each section header's title to its lines.
func failureSections(out string) map[string]string {
	sections := map[string]string{}
	var title string
	var body []string
	flush := func() {
		if title != "" {
			sections[title] = strings.Join(body, "\n")
		}
		title, body = "", nil
	}
	for _, line := range strings.Split(out, "\n") {
		if m := pytestSectionHeader().FindStringSubmatch(line); m != nil {
			flush()
			title = m[1]
			continue
		}
		if pytestRule().MatchString(line) {
			flush()
			continue
		}
		if title != "" {
			body = append(body, strings.TrimRight(line, "\r"))
		}
	}
	flush()
	return sections
}

// Bounds on a failed test's message: its assertion's lines, and the end of its section.
const (
	assertionShown = 2000
	tailLines      = 20
	tailBytes      = 2000
)

// failureMessage is a failed test's assertion text (the section's "E" lines, in full) and
// the tail of what follows them (where the error was raised, captured output), or the
// summary's message when the output has no section for the test.
func failureMessage(t result.Test, sections map[string]string) string {
	title := strings.ReplaceAll(t.Name, "::", ".")
	body, ok := sections[title]
	if !ok && t.Status == result.TestError {
		for _, when := range []string{"setup", "teardown", "call"} {
			if body, ok = sections["ERROR at "+when+" of "+title]; ok {
				break
			}
		}
	}
	if !ok {
		return t.Message
	}
	lines := strings.Split(strings.Trim(body, "\n"), "\n")
	var assertion []string
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "E ") || l == "E" {
			assertion = append(assertion, strings.TrimPrefix(l[1:], "       ")) // "E" and 7 blanks
			last = i
		}
	}
	tail := lines
	if last >= 0 {
		tail = lines[last+1:]
	}
	if len(tail) > tailLines {
		tail = tail[len(tail)-tailLines:]
	}
	msg := strings.TrimSpace(strings.Join(assertion, "\n"))
	if msg == "" {
		msg = t.Message
	}
	if len(msg) > assertionShown {
		msg = strings.ToValidUTF8(msg[:assertionShown], "") + "…"
	}
	if rest := strings.Trim(strings.Join(tail, "\n"), "\n"); strings.TrimSpace(rest) != "" {
		if len(rest) > tailBytes {
			rest = "…" + strings.ToValidUTF8(rest[len(rest)-tailBytes:], "")
		}
		if msg != "" {
			msg += "\n"
		}
		msg += rest
	}
	return msg
}
