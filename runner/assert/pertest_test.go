package assert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
)

const pytestOutput = `============================= test session starts ==============================
collected 4 items

tests/test_outputs.py .F.s                                                [100%]

=================================== FAILURES ===================================
PASSED tests/test_outputs.py::test_not_in_summary
=========================== short test summary info ============================
PASSED tests/test_outputs.py::test_hello_exists
PASSED tests/test_outputs.py::test_param[a - b]
FAILED tests/test_outputs.py::test_content - AssertionError: assert 'x' == 'y'
SKIPPED [1] tests/test_outputs.py:20: needs a GPU
ERROR tests/test_outputs.py::test_fixture - fixture 'db' not found
XFAIL tests/test_outputs.py::test_known - bug 12
==================== 1 failed, 2 passed, 1 skipped in 0.12s ====================
`

func TestParsePytest(t *testing.T) {
	got := ParsePytest(pytestOutput)
	want := []result.Test{
		{Name: "test_hello_exists", Classname: "tests/test_outputs.py", Status: result.TestPassed},
		{Name: "test_param[a - b]", Classname: "tests/test_outputs.py", Status: result.TestPassed},
		{Name: "test_content", Classname: "tests/test_outputs.py", Status: result.TestFailed, Message: "AssertionError: assert 'x' == 'y'"},
		{Name: "tests/test_outputs.py:20", Status: result.TestSkipped, Message: "needs a GPU"},
		{Name: "test_fixture", Classname: "tests/test_outputs.py", Status: result.TestError, Message: "fixture 'db' not found"},
		{Name: "test_known", Classname: "tests/test_outputs.py", Status: result.TestPassed, Message: "bug 12"},
	}
	assert.DeepEqual(t, got, want)
	f := result.PassFraction(got)
	assert.Equal(t, *f, 3.0/5)
}

const junitXML = `<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
  <testcase classname="tests.test_outputs" name="test_a" time="0.5"/>
  <testcase classname="tests.test_outputs" name="test_b"><failure message="assert 1 == 2">trace</failure></testcase>
  <testsuite name="inner"><testcase name="test_c"><skipped message="later"/></testcase>
  <testcase name="test_d"><error>boom</error></testcase></testsuite>
</testsuite></testsuites>`

func TestParseJUnit(t *testing.T) {
	got, err := ParseJUnit([]byte(junitXML))
	assert.NilError(t, err)
	assert.DeepEqual(t, got, []result.Test{
		{Name: "test_a", Classname: "tests.test_outputs", Status: result.TestPassed, Duration: 500_000_000},
		{Name: "test_b", Classname: "tests.test_outputs", Status: result.TestFailed, Message: "assert 1 == 2\ntrace"},
		{Name: "test_c", Status: result.TestSkipped, Message: "later"},
		{Name: "test_d", Status: result.TestError, Message: "boom"},
	})
	_, err = ParseJUnit([]byte("PASSED x"))
	assert.ErrorContains(t, err, "not JUnit XML")
}

func TestCommandPerTestResults(t *testing.T) {
	dir := t.TempDir()
	writeSummary := func(lines string) string {
		return "printf 'short test summary info\\n" + lines + "'"
	}
	tests := []struct {
		name  string
		spec  task.CommandCheck
		pass  bool
		msg   string
		tests int
	}{
		{name: "pytest all pass", spec: task.CommandCheck{Run: writeSummary(`PASSED t.py::a\nPASSED t.py::b\n`), Format: "pytest"},
			pass: true, msg: "2 of 2 tests passed", tests: 2},
		{name: "pytest one fails", spec: task.CommandCheck{Run: writeSummary(`PASSED t.py::a\nFAILED t.py::b - no\n`), Format: "pytest"},
			msg: "1 of 2 tests passed; failed: b", tests: 2},
		{name: "a non-zero exit fails whatever the summary says", spec: task.CommandCheck{Run: writeSummary(`PASSED t.py::a\n`) + "; exit 1", Format: "pytest"},
			msg: "ended with exit code 1, want 0, whatever its report says", tests: 1},
		{name: "no tests", spec: task.CommandCheck{Run: "echo nothing", Format: "pytest"}, msg: "reported no tests"},
		{name: "junit written", spec: task.CommandCheck{Run: "cat > \"$RESULTS_DIR/j.xml\" <<'EOF'\n" + junitXML + "\nEOF", JUnit: "j.xml"},
			msg: "1 of 3 tests passed (1 skipped); failed: test_b, test_d", tests: 4},
		{name: "junit all passed but exit 1", spec: task.CommandCheck{Run: `echo '<testsuite><testcase name="ok"/></testsuite>' > "$RESULTS_DIR/j.xml"; exit 1`, JUnit: "j.xml"},
			msg: "ended with exit code 1, want 0", tests: 1},
		{name: "junit planted by the agent in the workspace is not read", spec: task.CommandCheck{Run: "true", JUnit: "planted.xml"},
			msg: "wrote no readable JUnit file $RESULTS_DIR/planted.xml"},
		{name: "junit left as a link to a host file is not followed", spec: task.CommandCheck{Run: `ln -s /etc/passwd "$RESULTS_DIR/j.xml"`, JUnit: "j.xml"},
			msg: "the agent broke the workspace: $RESULTS_DIR/j.xml is a symlink, which runner does not follow here"},
		// The read of a FIFO waited for a writer until the scenario's deadline, which
		// errored the scenario; a device's content was read as the report.
		{name: "junit left as a FIFO fails at once", spec: task.CommandCheck{Run: `mkfifo "$RESULTS_DIR/j.xml"`, JUnit: "j.xml"},
			msg: "the agent broke the workspace: $RESULTS_DIR/j.xml is a FIFO (named pipe), not a regular file"},
		{name: "junit larger than the cap", spec: task.CommandCheck{Run: `truncate -s 17M "$RESULTS_DIR/j.xml"`, JUnit: "j.xml"},
			msg: "the agent broke the workspace: $RESULTS_DIR/j.xml is larger than 16 MiB"},
	}
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "planted.xml"), []byte(`<testsuite><testcase name="ok"/></testsuite>`), 0o644))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got result.Assertion
			done := make(chan struct{})
			go func() {
				defer close(done)
				got = Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: tc.spec}, &Run{Workspace: dir})
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the check did not end: its report's read blocked")
			}
			assert.Equal(t, got.Passed, tc.pass, got.Message)
			assert.Assert(t, contains(got.Message, tc.msg), "%q does not contain %q", got.Message, tc.msg)
			assert.Equal(t, len(got.Tests), tc.tests)
			if tc.tests > 0 {
				assert.Assert(t, got.PassFraction != nil)
			}
		})
	}
}

func TestScore(t *testing.T) {
	dir := t.TempDir()
	run := &Run{Workspace: dir}
	ctx := context.Background()
	file := &task.Score{File: "logs/reward.txt"}
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "logs"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "logs/reward.txt"), []byte("1\n"), 0o644))
	// The agent's own reward is cleared before the tests run.
	assert.NilError(t, ClearScore(ctx, file, run))
	v, note, _ := Score(ctx, file, run, nil)
	assert.Equal(t, v, 0.0)
	assert.Assert(t, contains(note, "logs/reward.txt"), note)

	assert.NilError(t, os.WriteFile(filepath.Join(dir, "logs/reward.txt"), []byte("0.75\n"), 0o644))
	v, note, _ = Score(ctx, file, run, nil)
	assert.Equal(t, v, 0.75)
	assert.Equal(t, note, "")
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "logs/reward.txt"), []byte("7"), 0o644))
	v, note, _ = Score(ctx, file, run, nil)
	assert.Equal(t, v, 0.0)
	assert.Assert(t, contains(note, "not a number between 0 and 1"), note)

	assert.NilError(t, os.WriteFile(filepath.Join(dir, "logs/reward.txt"), []byte(`{"reward": 0.25}`), 0o644))
	v, note, _ = Score(ctx, file, run, nil)
	assert.Equal(t, v, 0.25, note)

	frac := &task.Score{PassFraction: true}
	v, _, _ = Score(ctx, frac, run, []result.Assertion{{Tests: []result.Test{{Status: result.TestPassed}, {Status: result.TestFailed}}}, {Tests: []result.Test{{Status: result.TestPassed}, {Status: result.TestPassed}}}})
	assert.Equal(t, v, 0.75)
	_, note, _ = Score(ctx, frac, run, nil)
	assert.Equal(t, note, "no per-test results to score")
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestForgedPytestSummaryAfterTheRealOne performs the second review's attack: an atexit
// hook in the agent's module prints a summary of its own (all PASSED) after pytest's real
// one. With the real exit code (1) the exit code fails it; with the hook also forcing exit
// 0 (os._exit), the second summary gives it away. Either way a failure, never a pass.
func TestForgedPytestSummaryAfterTheRealOne(t *testing.T) {
	real := "printf '%s\\n' '============ short test summary info ============' " +
		"'FAILED tests/test_x.py::test_answer - assert 41 == 42' '============ 1 failed in 0.01s ============'"
	forged := "; printf '%s\\n' '============ short test summary info ============' " +
		"'PASSED tests/test_x.py::test_answer' '============ 1 passed in 0.01s ============'"
	for _, tc := range []struct{ name, exit, want string }{
		{"real exit code", "; exit 1", "exited 1 and its output holds 2 pytest summaries"},
		{"exit code forced to 0", "; exit 0", "holds 2 pytest summaries"},
		{"bare forged header", "; printf 'short test summary info\\nPASSED tests/test_x.py::test_answer\\n'; exit 0", "holds 3 pytest summaries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := task.CommandCheck{Run: real + forged + tc.exit, Format: "pytest"}
			got := Check(context.Background(), task.Assertion{Kind: task.KindCommand, Spec: spec}, &Run{Workspace: t.TempDir()})
			assert.Assert(t, !got.Passed, got.Message)
			assert.Assert(t, contains(got.Message, tc.want), got.Message)
		})
	}
}

// pytestCut is pytest -rA output without a terminal: the summary's lines are cut to 80
// columns, so the assertion is lost there; the FAILURES section keeps it.
const pytestCut = `============================= test session starts ==============================
collected 3 items

tests/test_outputs.py F.E                                                [100%]

==================================== ERRORS ====================================
____________________ ERROR at setup of test_needs_database _____________________

    @pytest.fixture
    def db():
>       raise RuntimeError("database is down: connection refused on 127.0.0.1:5432")
E       RuntimeError: database is down: connection refused on 127.0.0.1:5432

tests/test_outputs.py:9: RuntimeError
=================================== FAILURES ===================================
_______________________ TestGreeting.test_content[long] ________________________

self = <test_outputs.TestGreeting object at 0x7f>

    def test_content(self):
>       assert open("/app/hello.txt").read() == "Hello, a rather long name that does not fit!\n"
E       AssertionError: assert 'Hello, a rather long name!\n' == 'Hello, a rather long name that does not fit!\n'
E         - Hello, a rather long name that does not fit!
E         + Hello, a rather long name!

tests/test_outputs.py:21: AssertionError
----------------------------- Captured stdout call -----------------------------
checking /app/hello.txt
=========================== short test summary info ============================
PASSED tests/test_outputs.py::test_exists
FAILED tests/test_outputs.py::TestGreeting::test_content[long] - AssertionErr...
ERROR tests/test_outputs.py::test_needs_database - RuntimeError: database is ...
==================== 1 failed, 1 passed, 1 error in 0.12s =====================
`

// TestPytestFailureKeepsAssertionAndTail: a failed test's message holds its whole
// assertion and the end of its report, not the summary's line cut at 80 columns.
func TestPytestFailureKeepsAssertionAndTail(t *testing.T) {
	got := ParsePytest(pytestCut)
	assert.Equal(t, len(got), 3)
	assert.Equal(t, got[1].Name, "TestGreeting::test_content[long]")
	assert.Equal(t, got[1].Message, "AssertionError: assert 'Hello, a rather long name!\\n' == 'Hello, a rather long name that does not fit!\\n'\n"+
		"  - Hello, a rather long name that does not fit!\n  + Hello, a rather long name!\n"+
		"tests/test_outputs.py:21: AssertionError\n"+
		"----------------------------- Captured stdout call -----------------------------\nchecking /app/hello.txt")
	assert.Equal(t, got[2].Status, result.TestError)
	assert.Equal(t, got[2].Message, "RuntimeError: database is down: connection refused on 127.0.0.1:5432\ntests/test_outputs.py:9: RuntimeError")
}
