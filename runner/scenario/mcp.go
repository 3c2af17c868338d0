package scenario

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/mcp"
)

// startMCP starts the task's MCP servers in ws and returns reg and the task's toolset with
// their tools added, and the function that stops them all (safe to call twice). A server
// that fails to start stops the others and is the error.
func (r *runState) startMCP(ctx context.Context, ws *tools.Workspace, reg *tools.Registry) (*tools.Registry, *tools.Registry, func(), error) {
	t := r.t
	var servers []*mcp.Server
	var names []string
	var once sync.Once
	stop := func() {
		once.Do(func() {
			var wg sync.WaitGroup
			for _, s := range servers {
				wg.Add(1)
				go func() { defer wg.Done(); s.Close() }()
			}
			wg.Wait()
			for i, s := range servers {
				_ = r.record(0, transcript.MCP{Server: names[i], Stopped: true, Stderr: s.Stderr()})
			}
		})
	}
	byServer := map[string][]string{}
	var all []tools.Tool
	for _, def := range t.MCP {
		// The server's view of the workspace adds its declared files, read-only, which the
		// agent's commands do not get, and an environment that loads no code from the
		// workspace unless the server's env: asks for it.
		env := map[string]string{"TASK_DIR": def.Dir}
		for k, v := range def.Env {
			env[k] = v
		}
		sws := ws.View(def.Files...)
		sws.NoWorkspaceCode = true
		s, err := mcp.Start(ctx, sws, mcp.Options{Name: def.Name, Argv: def.Argv, Env: env, CallTimeout: def.Timeout})
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		servers, names = append(servers, s), append(names, def.Name)
		var offered []string
		for _, tl := range s.Tools() {
			offered = append(offered, tl.Spec().Name)
		}
		byServer[def.Name] = offered
		all = append(all, s.Tools()...)
		_ = r.record(0, transcript.MCP{Server: def.Name, Argv: def.Argv, Tools: offered})
	}
	full, err := reg.With(all...)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("mcp: %w", err)
	}
	if t.Tools == nil {
		return full, full, stop, nil
	}
	var want []string
	for _, n := range t.Tools {
		if !t.MCPTool(n) {
			want = append(want, n)
			continue
		}
		server, tool, _ := strings.Cut(n, mcp.Separator)
		if tool == "*" {
			want = append(want, byServer[server]...)
			continue
		}
		if _, _, ok := full.Lookup(n); !ok {
			stop()
			return nil, nil, nil, fmt.Errorf("tools: mcp server %s has no tool %q (it has: %s)", server, tool, strings.Join(byServer[server], ", "))
		}
		want = append(want, n)
	}
	sub, err := full.Subset(want...)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("tools: %w", err)
	}
	return full, sub, stop, nil
}

// startTools are the tools the start event lists: with MCP servers, whose tools are not
// known yet, tools: as written (the mcp events list the servers' tools).
func startTools(t *task.Task, toolset *tools.Registry) []string {
	if t.Tools != nil && len(t.MCP) > 0 {
		return t.Tools
	}
	return toolset.Names()
}
