package tests

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the CLI behaviour scripts in testdata/script/*.txtar against the
// built binary, which is first in PATH as `runner`. Besides testscript's own commands:
//
//	rc N prog args...   run prog and require exit code N (stdout and stderr are kept)
//	jsonvalid FILE...   require each file to hold one valid JSON value
//
// and the condition [ci] (the CI variable is set). $XSD is the JUnit schema.
func TestScripts(t *testing.T) {
	t.Parallel()
	xsd, err := filepath.Abs(junitXSD)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(runnerBin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("XSD", xsd)
			// Keep the runner from any model server configured on this machine.
			env.Setenv("OLLAMA_HOST", "")
			env.Setenv("OPENAI_BASE_URL", "")
			env.Setenv("OPENAI_API_KEY", "")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "ci":
				return os.Getenv("CI") != "", nil
			}
			return false, errors.New("unknown condition " + cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rc":        cmdRC,
			"jsonvalid": cmdJSONValid,
		},
	})
}

// cmdRC runs a program and checks its exit code: `rc 2 runner validate bad.yaml`.
func cmdRC(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: rc CODE program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("rc: exit code %q: %v", args[0], err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		got = exit.ExitCode()
	case err != nil:
		ts.Fatalf("rc: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdJSONValid checks that files hold valid JSON.
func cmdJSONValid(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: jsonvalid FILE...")
	}
	for _, f := range args {
		var v any
		err := json.Unmarshal([]byte(ts.ReadFile(f)), &v)
		switch {
		case err != nil && !neg:
			ts.Fatalf("%s: not valid JSON: %v", f, err)
		case err == nil && neg:
			ts.Fatalf("%s: valid JSON, want invalid", f)
		}
	}
}
