package cli

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestRunRejectsASecondModel(t *testing.T) {
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"runner", "run", "--model", "ollama:a", "--model", "ollama:b", "x.yaml"},
		IO{Stdout: &bytes.Buffer{}, Stderr: &stderr})
	assert.Equal(t, code, ExitUsage)
	assert.Assert(t, is.Contains(stderr.String(), "runner bench --models ollama:a,ollama:b"))
}

func TestBenchOptionsCheck(t *testing.T) {
	o := BenchOptions{Paths: []string{"s/"}, Models: []string{"ollama:a,ollama:b", " ollama:a ", "oracle"}, Parallel: 1, Repeat: 3}
	assert.NilError(t, o.Check())
	assert.DeepEqual(t, o.Models, []string{"ollama:a", "ollama:b", "oracle"})
	for _, tc := range []struct {
		o    BenchOptions
		want string
	}{
		{BenchOptions{Paths: []string{"s/"}, Parallel: 1, Repeat: 1}, "no model given"},
		{BenchOptions{Models: []string{"oracle"}, Parallel: 1, Repeat: 1}, "no task files"},
		{BenchOptions{Paths: []string{"s/"}, Models: []string{"qwen3"}, Parallel: 1, Repeat: 1}, "has no provider"},
		{BenchOptions{Paths: []string{"s/"}, Models: []string{"oracle"}, Parallel: 1, Repeat: 0}, "--repeat must be at least 1"},
		{BenchOptions{Paths: []string{"s/"}, Models: []string{"oracle"}, Parallel: 1, Repeat: 1, BudgetTokens: -1}, "budgets not negative"},
		{BenchOptions{Paths: []string{"s/"}, Models: []string{"oracle"}, Parallel: 1, Repeat: 1, ScenarioOptions: ScenarioOptions{Sandbox: "docker"}}, `bench: --sandbox: unknown sandbox mode "docker"`},
	} {
		err := tc.o.Check()
		assert.Assert(t, is.ErrorContains(err, tc.want))
		var exit *ExitError
		assert.Assert(t, errors.As(err, &exit) && exit.Code == ExitUsage)
	}
}
