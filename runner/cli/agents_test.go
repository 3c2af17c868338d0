package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/agent/kinds"
)

// runner agents reads the registry's rows: every kind, its help, where its program is.
func TestAgentsListsTheRegistry(t *testing.T) {
	code, out, _ := invoke(t, "agents")
	assert.Equal(t, code, 0)
	for _, k := range kinds.Kinds {
		assert.Check(t, is.Contains(out, k.Name+" "))
		assert.Check(t, is.Contains(out, k.Help))
	}
	code, out, _ = invoke(t, "agents", "--format", "json")
	assert.Equal(t, code, 0)
	var rows []agentRow
	assert.NilError(t, json.Unmarshal([]byte(out), &rows))
	assert.Equal(t, len(rows), len(kinds.Kinds))
	assert.Equal(t, rows[0].Name, kinds.Default)

	code, _, errOut := invoke(t, "run", "--agent", "claud", "x.yaml")
	assert.Equal(t, code, ExitUsage)
	assert.Check(t, strings.Contains(errOut, `--agent: unknown agent "claud"`), errOut)
}
