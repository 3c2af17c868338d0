package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
)

func TestIntersperse(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{
			name: "flag with a value after the paths",
			in:   []string{"runner", "run", "scenarios/", "--model", "oracle"},
			want: []string{"runner", "run", "--model", "oracle", "scenarios/"},
		},
		{
			name: "flags before and after, positional order kept",
			in:   []string{"runner", "run", "--out", "o", "a.yaml", "-j", "2", "b.yaml", "--filter=x", "c.yaml"},
			want: []string{"runner", "run", "--out", "o", "-j", "2", "--filter=x", "a.yaml", "b.yaml", "c.yaml"},
		},
		{
			name: "a bool flag does not swallow the next argument",
			in:   []string{"runner", "run", "a.yaml", "--keep-workspaces", "b.yaml", "--stream"},
			want: []string{"runner", "run", "--keep-workspaces", "--stream", "a.yaml", "b.yaml"},
		},
		{
			name: "a value that looks like a flag is still the value",
			in:   []string{"runner", "run", "a.yaml", "--filter", "-x"},
			want: []string{"runner", "run", "--filter", "-x", "a.yaml"},
		},
		{
			name: "double dash stops flag parsing",
			in:   []string{"runner", "run", "a.yaml", "-j", "2", "--", "--model", "b.yaml"},
			want: []string{"runner", "run", "-j", "2", "a.yaml", "--", "--model", "b.yaml"},
		},
		{
			name: "a single dash is positional",
			in:   []string{"runner", "run", "-", "--json", "r.json"},
			want: []string{"runner", "run", "--json", "r.json", "-"},
		},
		{
			name: "subcommand policy check",
			in:   []string{"runner", "policy", "check", "task.yaml", "--tool", "read_file", "--json", "-a", "{}"},
			want: []string{"runner", "policy", "check", "--tool", "read_file", "--json", "-a", "{}", "task.yaml"},
		},
		{
			name: "tool command, short alias",
			in:   []string{"runner", "tool", "read_file", "-w", "/tmp", "--args", `{"path":"a"}`},
			want: []string{"runner", "tool", "-w", "/tmp", "--args", `{"path":"a"}`, "read_file"},
		},
		{
			name: "validate bool flag",
			in:   []string{"runner", "validate", "scenarios/", "--oracle"},
			want: []string{"runner", "validate", "--oracle", "scenarios/"},
		},
		{
			name: "unknown command unchanged",
			in:   []string{"runner", "nosuch", "a", "--model", "x"},
			want: []string{"runner", "nosuch", "a", "--model", "x"},
		},
		{
			name: "program name only",
			in:   []string{"runner"},
			want: []string{"runner"},
		},
		{
			name: "command only",
			in:   []string{"runner", "schema"},
			want: []string{"runner", "schema"},
		},
	}
	app := newApp(IO{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]string(nil), tc.in...)
			got, err := intersperse(app, in)
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
			assert.DeepEqual(t, in, tc.in) // the caller's slice is not modified
		})
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantCode   int
		wantStderr string
	}{
		{"nil", nil, ExitOK, ""},
		{"failed without a message", &ExitError{Code: ExitFailed}, ExitFailed, ""},
		{"errored with a message", &ExitError{Code: ExitErrored, Err: errors.New("model down")}, ExitErrored, "runner: model down\n"},
		{"usage error", usageError("run: no task files given"), ExitUsage, "runner: run: no task files given\n"},
		{"wrapped exit error", fmt.Errorf("outer: %w", &ExitError{Code: ExitFailed}), ExitFailed, ""},
		{"any other error is usage", errors.New("flag provided but not defined: -x"), ExitUsage, "runner: flag provided but not defined: -x\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			assert.Equal(t, exitCode(tc.err, &stderr), tc.wantCode)
			assert.Equal(t, stderr.String(), tc.wantStderr)
		})
	}
}

func TestExitErrorMessage(t *testing.T) {
	assert.Equal(t, (&ExitError{Code: 3}).Error(), "exit 3")
	inner := errors.New("inner")
	e := &ExitError{Code: 1, Err: inner}
	assert.Equal(t, e.Error(), "inner")
	assert.Assert(t, errors.Is(e, inner))
}

func TestIntersperseDanglingValueFlag(t *testing.T) {
	app := newApp(IO{})
	_, err := intersperse(app, []string{"runner", "run", "a.yaml", "--model"})
	assert.Error(t, err, "flag needs an argument: --model")
	got, err := intersperse(app, []string{"runner", "run", "a.yaml", "--keep-workspaces"})
	assert.NilError(t, err, "a bool flag needs no value")
	assert.DeepEqual(t, got, []string{"runner", "run", "--keep-workspaces", "a.yaml"})
}
