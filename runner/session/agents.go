package session

import (
	"context"
	"os"

	"github.com/agentrunner/runner/runner/agent/kinds"
)

// Agent is one agent kind as `runner agents` shows it: its registry row and where its
// program is.
type Agent struct {
	Name     string `json:"name"`
	Help     string `json:"help"`
	Builtin  bool   `json:"builtin,omitempty"`
	Program  string `json:"program,omitempty"`
	Protocol string `json:"protocol,omitempty"`
	// Path is where the program was found; Missing says why it was not.
	Path    string `json:"path,omitempty"`
	Missing string `json:"missing,omitempty"`
	Package string `json:"package,omitempty"`
}

// Agents lists the agent kinds' rows (kinds.Kinds), in the registry's order, each
// program looked up on PATH, then in $RUNNER_AGENTS_DIR.
func Agents() []Agent {
	rows := make([]Agent, 0, len(kinds.Kinds))
	for _, k := range kinds.Kinds {
		row := Agent{Name: k.Name, Help: k.Help, Builtin: k.Builtin, Program: k.Program, Protocol: string(k.Protocol), Package: k.Package}
		if !k.Builtin {
			if p, err := k.Find(os.Getenv("PATH"), os.Getenv(kinds.AgentsDirEnv)); err != nil {
				row.Missing = err.Error()
			} else {
				row.Path = p
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// AgentCheck is one kind's program as `runner agents --check` reports it.
type AgentCheck struct {
	Name string `json:"name"`
	// Status is ok, untested (another version than runner's tests drive), missing or
	// broken (its version probe failed).
	Status  kinds.CheckStatus `json:"status"`
	Path    string            `json:"path,omitempty"`
	Version string            `json:"version,omitempty"`
	Tested  string            `json:"tested,omitempty"`
	Problem string            `json:"problem,omitempty"`
}

// Bad reports a program that is missing or broken: an environment not ready to run it.
func (c AgentCheck) Bad() bool {
	return c.Status == kinds.CheckMissing || c.Status == kinds.CheckBroken
}

// AgentError: a kind named for a check is unknown, or has no program of its own.
type AgentError struct {
	Name string
	Err  error
}

func (e *AgentError) Error() string { return e.Err.Error() }
func (e *AgentError) Unwrap() error { return e.Err }

// CheckAgents runs the version probe of the named kinds' programs (every kind with a
// program of its own when none is named).
func CheckAgents(ctx context.Context, names []string) ([]AgentCheck, error) {
	var check []kinds.Kind
	if len(names) == 0 {
		for _, k := range kinds.Kinds {
			if k.Checkable() {
				check = append(check, k)
			}
		}
	}
	for _, name := range names {
		k, err := kinds.Lookup(name)
		if err != nil {
			return nil, &AgentError{Name: name, Err: err}
		}
		if !k.Checkable() {
			return nil, &AgentError{Name: name, Err: errNoProgram(name)}
		}
		check = append(check, k)
	}
	rows := make([]AgentCheck, len(check))
	for i, k := range check {
		c := k.Check(ctx, os.Getenv("PATH"), os.Getenv(kinds.AgentsDirEnv))
		rows[i] = AgentCheck{Name: k.Name, Status: c.Status, Path: c.Path, Version: c.Version, Tested: k.Tested, Problem: c.Problem}
	}
	return rows, nil
}

type errNoProgram string

func (e errNoProgram) Error() string { return string(e) + " has no program of its own to check" }
