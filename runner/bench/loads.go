package bench

import (
	"fmt"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
)

// reloadGroup is the suite's grouping for a bench: Ollama reloads a model whenever a
// request's num_ctx differs from the loaded one's, so cells run grouped by num_ctx, the
// model's default (0, what the warm-up loaded) first.
func reloadGroup(t *task.Task) int { return t.ModelOptions.NumCtx }

// loads sums a model's load time and reloads over its cells.
func loads(cells []result.Scenario) (load result.Millis, reloads int) {
	for _, c := range cells {
		load += c.LoadTime
		reloads += c.Reloads
	}
	return load, reloads
}

// reloadWarnings says when the server reloaded the model during the cells.
func reloadWarnings(name string, m ModelResult) []string {
	if m.Reloads == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: the server reloaded the model %d time(s) during the run (%.0f ms of loading inside the cells' wall time): tasks with different model_options.num_ctx, another model loaded meanwhile, or a keep_alive that expired; cells run grouped by num_ctx to keep this low",
		name, m.Reloads, m.Load.Ms())}
}
